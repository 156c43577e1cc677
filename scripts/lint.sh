#!/usr/bin/env bash
# lint.sh: the style checks. --format: every C, C++ and CUDA file is as clang-format leaves
# it (.clang-format); lists the files that differ (scripts/format.sh fixes them). --tidy:
# clang-tidy's checks of .clang-tidy over the library's and the command line's sources, as
# compiled by a CPU build (BUILD_DIR, default build-tidy, configured here with
# CMAKE_EXPORT_COMPILE_COMMANDS; nothing is compiled). Exit 0 only when every check passes.
# usage: bash scripts/lint.sh [--format] [--tidy [BUILD_DIR]]   (no option: both)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. scripts/clang_tools.sh

# check_format: prints each file clang-format would change; fails when there is one.
check_format() {
    local clang_format differ=0 file
    clang_format=$(find_clang_tool clang-format)
    while IFS= read -r file; do
        if ! "$clang_format" --style=file "$file" | cmp -s - "$file"; then
            echo "lint: $file is not formatted"
            differ=$((differ + 1))
        fi
    done < <(bash scripts/source_files.sh)
    if [ "$differ" -gt 0 ]; then
        echo "lint --format: $differ files differ from clang-format's output (bash scripts/format.sh fixes them)"
        return 1
    fi
    echo "lint --format: every file formatted"
}

# tidy_database BUILD_DIR: writes BUILD_DIR/tidy/compile_commands.json, the build's compile
# commands for the library's and the CLI's sources (api/, dispatch/, backends/, bench/; not
# tests/ or examples/) less GCC's options clang does not know (cpu_omp's -fira-algorithm),
# and prints those sources.
tidy_database() {
    python3 - "$1" "$PWD" <<'PY'
import json, os, re, sys
build, root = sys.argv[1], sys.argv[2]
gcc_only = re.compile(r"\s-fira-algorithm=\S+")
kept, seen = [], set()
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
    if path.split(os.sep)[0] in ("api", "dispatch", "backends", "bench") and path not in seen:
        seen.add(path)
        entry["command"] = gcc_only.sub("", entry["command"])
        kept.append(entry)
        print(path)
os.makedirs(os.path.join(build, "tidy"), exist_ok=True)
json.dump(kept, open(os.path.join(build, "tidy", "compile_commands.json"), "w"), indent=1)
PY
}

# check_tidy BUILD_DIR: configures a CPU build there and runs clang-tidy on its sources.
check_tidy() {
    local dir=$1 clang_tidy log start
    clang_tidy=$(find_clang_tool clang-tidy)
    start=$(date +%s)
    mkdir -p "$dir"
    if ! cmake -S . -B "$dir" -DGEMM_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$dir/configure.log" 2>&1; then
        cat "$dir/configure.log"
        echo "lint --tidy: configuring $dir failed"
        return 1
    fi
    log="$dir/tidy.log"
    mkdir -p "$dir/tidy"
    tidy_database "$dir" >"$dir/tidy/sources.txt"
    local status=0
    xargs -r -d '\n' -P "$jobs" -n 4 "$clang_tidy" -p "$dir/tidy" --quiet <"$dir/tidy/sources.txt" >"$log" 2>&1 ||
        status=$?
    # One line per finding (clang-tidy prints each with its code and a caret under it).
    grep -E '^[^ ].*: (warning|error): ' "$log" | sort -u || true
    local findings
    findings=$(grep -E '^[^ ].*: (warning|error): ' "$log" | sort -u | wc -l)
    echo "lint --tidy: $(wc -l <"$dir/tidy/sources.txt") files, $findings findings," \
        "$(($(date +%s) - start)) s (the whole output: $log)"
    [ "$status" -eq 0 ] && [ "$findings" -eq 0 ]
}

format=0 tidy=0 tidy_dir=build-tidy
while [ $# -gt 0 ]; do
    case $1 in
    --format) format=1 ;;
    --tidy)
        tidy=1
        if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then tidy_dir=$2; shift; fi
        ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "lint.sh: unknown option '$1' (--format, --tidy [BUILD_DIR])" >&2; exit 2 ;;
    esac
    shift
done
[ "$format" -eq 1 ] || [ "$tidy" -eq 1 ] || format=1 tidy=1

rc=0
if [ "$format" -eq 1 ]; then check_format || rc=1; fi
if [ "$tidy" -eq 1 ]; then check_tidy "$tidy_dir" || rc=1; fi
exit "$rc"
