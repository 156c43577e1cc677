#!/usr/bin/env bash
# format.sh: formats every C, C++ and CUDA file of the tree in place with clang-format and the
# root's .clang-format (scripts/lint.sh --format checks the same files without changing them).
# usage: bash scripts/format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/clang_tools.sh
clang_format=$(find_clang_tool clang-format)
# Twice: clang-format 14 reflows a comment line far over the limit in two steps, and the
# second pass makes the result one that lint --format accepts.
for pass in 1 2; do
    bash scripts/source_files.sh | xargs -r -d '\n' -n 20 "$clang_format" -i --style=file
done
echo "format.sh: formatted $(bash scripts/source_files.sh | wc -l) files with $("$clang_format" --version)"
