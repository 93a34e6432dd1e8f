#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and end-to-end).
# With RDMASIM_SANITIZE_SUBSET=1 it then runs the sanitizer subset too: the
# unit tests and a few end-to-end tests per fabric on a build with
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh
# -L sanitize, in ./build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)")
if [ "${RDMASIM_SANITIZE_SUBSET:-}" = 1 ]; then
  scripts/test-sanitizers.sh -L sanitize
fi
