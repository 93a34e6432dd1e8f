#!/usr/bin/env bash
# Installs what is missing, builds, and runs the quickstart experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
./build/rdmasim run examples/quickstart.yaml
