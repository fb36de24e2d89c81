#!/usr/bin/env bash
# Main job on the offline default: install, pull the pinned data bundles, run the pipeline.
EXTRAS=local
source "$(dirname "$0")/env.sh"
exec .venv/bin/nutrireason demo "$@"
