#!/usr/bin/env bash
# setup_debian.sh: installs the Debian packages gemm builds and tests with (idempotent).
set -euo pipefail

# libblas3/libblas-dev: reference BLAS and cblas.h, the peer of the drop-in BLAS tests;
# python3: its json module checks the command line's --json output in the tests;
# python3-dev, python3-venv, python3-pip: the Python package (pip install .) and its tests;
# Open MPI and ScaLAPACK: examples/distributed and its 4-rank test;
# clang-format and clang-tidy: scripts/format.sh and scripts/lint.sh.
packages=(cmake make gcc g++ pkg-config doctest-dev libspdlog-dev libopenblas0-pthread
          libopenblas-pthread-dev libblas3 libblas-dev python3
          python3-dev python3-venv python3-pip
          libopenmpi-dev openmpi-bin libscalapack-openmpi-dev clang-format clang-tidy)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all packages present"
    exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
