"""``python -m nutrireason`` runs the CLI."""

from nutrireason.cli import app

app()
