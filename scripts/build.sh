#!/usr/bin/env bash
# Configures (once) and builds rdmasim in ./build (or $BUILD_DIR), Release by default.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" ${CMAKE_ARGS:-}
fi
cmake --build "$build_dir" -j "$(nproc)"
