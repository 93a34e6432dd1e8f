#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and end-to-end),
# then the sanitizer subset: the unit tests and a few end-to-end tests per
# fabric on a build with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test-sanitizers.sh -L sanitize, in ./build-asan; docs/testing.md
# says what it costs). RDMASIM_SANITIZE_SUBSET=0 leaves the subset out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)")
if [ "${RDMASIM_SANITIZE_SUBSET:-1}" != 0 ]; then
  scripts/test-sanitizers.sh -L sanitize
fi
