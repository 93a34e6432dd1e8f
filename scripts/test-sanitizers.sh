#!/usr/bin/env bash
# Builds with AddressSanitizer and UndefinedBehaviorSanitizer in ./build-asan
# and runs every test against that build; arguments go to ctest, so
# `scripts/test-sanitizers.sh -L sanitize` runs only CI's subset (the unit
# tests and a few end-to-end tests per fabric, CMakeLists.txt's
# RDMASIM_SANITIZE_E2E) and `-R unit` only the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_ARGS="-DRDMASIM_SANITIZE=address,undefined" scripts/build.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-asan
ctest --output-on-failure -j "$(nproc)" "$@"
