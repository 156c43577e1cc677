#!/usr/bin/env bash
# source_files.sh: prints the tree's C, C++ and CUDA files, one a line, relative to the root:
# those git tracks or would track (never build folders or other ignored paths), or without
# git every such file outside build*/ folders. Folders of code from elsewhere, should the tree
# ever hold one (third_party/, external/), are left out: their style is not ours.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='\.(c|h|cc|cpp|hpp|cu|cuh)$'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard
else
    find . -path './build*' -prune -o -path './.*' -prune -o -type f -print | sed 's|^\./||'
fi | grep -E "$pattern" | grep -vE '^(third_party|external)/' | sort -u
