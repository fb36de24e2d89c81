"""Run manifests: the full config, versions, benchmark fingerprint and git commit; no secrets."""

from __future__ import annotations

import json
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from nutrireason import __version__
from nutrireason.errors import NutriReasonError
from nutrireason.runs.lock import holder_alive
from nutrireason.storage import scrub, write_text_atomic  # scrub lives in a leaf; fam uses it too

MANIFEST_FILE = "manifest.json"
# Fields that define what a run computes; a resumed run must agree on all of them.
IDENTITY_FIELDS = ("benchmark_sha256", "methods", "model_specs")
PACKAGES = ("pandas", "pydantic", "openai", "llama_cpp_python", "numpy")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a run depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version(),
                                       "nutrireason": __version__}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> dict[str, Any] | None:
    """The commit of the source tree nutrireason runs from, and whether it has local changes."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def write_manifest(out_dir: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` atomically, with secrets scrubbed."""
    manifest = manifest | {"updated_at": time.time()}
    text = json.dumps(manifest, indent=2, sort_keys=True, default=str)
    return write_text_atomic(out_dir / MANIFEST_FILE, scrub(text) + "\n")


def read_manifest(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def effective_status(manifest: dict[str, Any] | None) -> str | None:
    """A manifest's status, except that "running" with an owner no longer alive (a SIGKILL or a
    crash that skipped the final write) reads as "interrupted"."""
    if manifest is None:
        return None
    status = manifest.get("status")
    if status == "running" and not holder_alive(manifest.get("owner")):
        return "interrupted"
    return status


def check_resumable(previous: dict[str, Any], current: dict[str, Any], out_dir: Path) -> None:
    """A resumed run must compute the same thing (and the same shard of it); say which field
    differs if not."""
    for field in IDENTITY_FIELDS + ("settings", "shard"):
        if previous.get(field) != current.get(field):
            raise NutriReasonError(
                f"{out_dir} holds a different run ({field} differs: {previous.get(field)!r} "
                f"vs {current.get(field)!r}); use a new --out directory")
