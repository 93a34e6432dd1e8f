#!/usr/bin/env bash
# Installs what is missing, builds, runs the quickstart experiment, and says
# how to run rdmasim (built, or installed with PREFIX=DIR scripts/quickstart.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${BUILD_DIR:-build}
rdmasim=./$build_dir/rdmasim
if [ -n "${PREFIX:-}" ]; then
  cmake --install "$build_dir" --prefix "$PREFIX"
  rdmasim=$PREFIX/bin/rdmasim
fi
"$rdmasim" run examples/quickstart.yaml
cat <<MSG

rdmasim is $rdmasim. Next:
  $rdmasim compare examples/quickstart.yaml   # the same on every fabric
  $rdmasim --help                             # every command; '$rdmasim run --help' for one
MSG
if [ -n "${PREFIX:-}" ]; then
  echo "  (add $PREFIX/bin to PATH to type just 'rdmasim'; man page: man -M $PREFIX/share/man rdmasim)"
else
  echo "  (to install it: cmake --install $build_dir --prefix ~/.local, then 'rdmasim' and 'man rdmasim'"
  echo "   with ~/.local/bin on PATH; or PREFIX=DIR scripts/quickstart.sh)"
fi
