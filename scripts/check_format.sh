#!/usr/bin/env bash
# The `format` test: every tracked C++ source is as .clang-format wants it
# (clang-format --dry-run --Werror). Skipped, with exit code 77, when
# clang-format is not installed (scripts/setup.sh installs it). To fix:
#   git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
set -euo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root"
if ! command -v clang-format >/dev/null 2>&1; then
  echo "format check skipped: clang-format is not installed (scripts/setup.sh installs it)"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path './build*' -prune -o \( -name '*.cpp' -o -name '*.hpp' \) -print)
fi
echo "$(clang-format --version): ${#files[@]} files"
clang-format --dry-run --Werror "${files[@]}"
