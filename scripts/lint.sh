#!/usr/bin/env bash
# lint.sh: the style checks. --format: every C, C++ and CUDA file is as clang-format leaves
# it (.clang-format); lists the files that differ (scripts/format.sh fixes them). --tidy:
# clang-tidy's checks of .clang-tidy over the library's and the command line's sources, as
# compiled by a CPU build (BUILD_DIR, default build-tidy, configured here with
# CMAKE_EXPORT_COMPILE_COMMANDS; nothing is compiled). --tidy-python BUILD_DIR: the same checks
# over the Python module's sources, as a pip install . build folder compiled them. Exit 0 only
# when every check passes.
# usage: bash scripts/lint.sh [--format] [--tidy [BUILD_DIR]] [--tidy-python BUILD_DIR]
#        (no option: --format and --tidy)
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

# tidy_database BUILD_DIR FOLDER...: writes BUILD_DIR/tidy/compile_commands.json, the build's
# compile commands for the sources under the FOLDERs less GCC's options clang does not know
# (cpu_omp's -fira-algorithm), and prints those sources.
tidy_database() {
    python3 - "$PWD" "$@" <<'PY'
import json, os, re, sys
root, build, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
gcc_only = re.compile(r"\s-fira-algorithm=\S+")
kept, seen = [], set()
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
    if path.split(os.sep)[0] in folders and path not in seen:
        seen.add(path)
        entry["command"] = gcc_only.sub("", entry["command"])
        kept.append(entry)
        print(path)
os.makedirs(os.path.join(build, "tidy"), exist_ok=True)
json.dump(kept, open(os.path.join(build, "tidy", "compile_commands.json"), "w"), indent=1)
PY
}

# run_tidy DIR: clang-tidy on the sources DIR/tidy/sources.txt lists (tidy_database's), its
# output in DIR/tidy.log; prints one line per finding and a summary. Fails on any finding.
run_tidy() {
    local dir=$1 clang_tidy log start status=0 findings
    clang_tidy=$(find_clang_tool clang-tidy)
    start=$(date +%s)
    log="$dir/tidy.log"
    xargs -r -d '\n' -P "$jobs" -n 4 "$clang_tidy" -p "$dir/tidy" --quiet <"$dir/tidy/sources.txt" >"$log" 2>&1 ||
        status=$?
    # One line per finding (clang-tidy prints each with its code and a caret under it).
    grep -E '^[^ ].*: (warning|error): ' "$log" | sort -u || true
    findings=$(grep -E '^[^ ].*: (warning|error): ' "$log" | sort -u | wc -l)
    echo "lint --tidy: $(wc -l <"$dir/tidy/sources.txt") files, $findings findings," \
        "$(($(date +%s) - start)) s (the whole output: $log)"
    [ "$status" -eq 0 ] && [ "$findings" -eq 0 ]
}

# check_tidy BUILD_DIR: configures a CPU build there and runs clang-tidy on the library's and
# the command line's sources (api/, dispatch/, backends/, bench/; not tests/ or examples/).
check_tidy() {
    local dir=$1
    mkdir -p "$dir/tidy"
    if ! cmake -S . -B "$dir" -DGEMM_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$dir/configure.log" 2>&1; then
        cat "$dir/configure.log"
        echo "lint --tidy: configuring $dir failed"
        return 1
    fi
    tidy_database "$dir" api dispatch backends bench >"$dir/tidy/sources.txt"
    run_tidy "$dir"
}

# check_tidy_python BUILD_DIR: clang-tidy on the Python module's sources (python/), as the
# package's build folder compiled them (pip install . exports its compile commands there;
# nanobind's headers come from the build's environment, hence a folder of its own).
check_tidy_python() {
    local dir=$1
    if [ ! -f "$dir/compile_commands.json" ]; then
        echo "lint --tidy-python: $dir/compile_commands.json is missing (a folder pip install . built)"
        return 1
    fi
    mkdir -p "$dir/tidy"
    tidy_database "$dir" python >"$dir/tidy/sources.txt"
    run_tidy "$dir"
}

format=0 tidy=0 tidy_dir=build-tidy tidy_python=""
while [ $# -gt 0 ]; do
    case $1 in
    --format) format=1 ;;
    --tidy)
        tidy=1
        if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then tidy_dir=$2; shift; fi
        ;;
    --tidy-python)
        [ $# -gt 1 ] || { echo "lint.sh: --tidy-python needs the Python build folder" >&2; exit 2; }
        tidy_python=$2
        shift
        ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "lint.sh: unknown option '$1' (--format, --tidy [BUILD_DIR], --tidy-python BUILD_DIR)" >&2; exit 2 ;;
    esac
    shift
done
[ "$format" -eq 1 ] || [ "$tidy" -eq 1 ] || [ -n "$tidy_python" ] || format=1 tidy=1

rc=0
if [ "$format" -eq 1 ]; then check_format || rc=1; fi
if [ "$tidy" -eq 1 ]; then check_tidy "$tidy_dir" || rc=1; fi
if [ -n "$tidy_python" ]; then check_tidy_python "$tidy_python" || rc=1; fi
exit "$rc"
