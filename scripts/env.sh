# Sourced by the set-up scripts: make .venv and install the project into it (idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
EXTRAS=${EXTRAS:-}
.venv/bin/python -m pip install --disable-pip-version-check -q -e ".${EXTRAS:+[$EXTRAS]}"
