#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and end-to-end),
# then, with RDMASIM_SANITIZE_SUBSET=1, the sanitizer subset: the unit tests
# and a few end-to-end tests per fabric on a build with AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh -L sanitize, in
# ./build-asan; README.md says what it costs). Off by default until a whole
# CI run with it has been measured and the subset has passed on this code.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)")
if [ "${RDMASIM_SANITIZE_SUBSET:-0}" = 1 ]; then
  scripts/test-sanitizers.sh -L sanitize
fi
