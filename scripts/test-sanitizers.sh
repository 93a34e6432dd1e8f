#!/usr/bin/env bash
# Builds rdmasim and the unit tests with AddressSanitizer and
# UndefinedBehaviorSanitizer in ./build-asan (not the benchmarks) and runs
# every test against that build; arguments go to ctest, so
# `scripts/test-sanitizers.sh -L sanitize` runs only CI's subset (the unit
# tests and a few end-to-end tests per fabric, CMakeLists.txt's
# RDMASIM_SANITIZE_E2E) and `-R unit` only the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMASIM_SANITIZE=address,undefined
fi
cmake --build build-asan -j "$(nproc)" --target rdmasim unit_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-asan
ctest --output-on-failure -j "$(nproc)" "$@"
