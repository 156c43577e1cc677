#!/usr/bin/env bash
# run_install_test.sh: installs the build tree into a temporary prefix and uses the installed
# copy the ways README.md and docs/BLAS.md describe, each in an environment holding nothing
# but PATH and a HOME without a tune cache (no GEMM_*, no LD_LIBRARY_PATH, no
# PKG_CONFIG_PATH): pkg-config, find_package, `gemm info`, LD_PRELOAD of libgemm_blas and the
# libblas.so.3 alternative. Every check runs and says what it found; any failure fails the test.
# usage: run_install_test.sh BUILD_DIR SOURCE_DIR SGEMM_CALLER C_COMPILER CMAKE PKG_CONFIG
#        GENERATOR MAKE_PROGRAM BINDIR LIBDIR INCLUDEDIR ALTERNATIVE_BUILT(0|1)
set -euo pipefail
build=$1 source=$2 caller=$3 cc=$4 cmake=$5 pkg_config=$6 generator=$7 make_program=$8
bindir=$9 libdir=${10} includedir=${11} alternative_built=${12}

# skip REASON: exit 77, which CTest reports as skipped, with the reason also in the file
# GEMM_TEST_SKIP_REASON_FILE names (printed after ctest's summary, tests/CMakeLists.txt).
skip() {
    echo "SKIPPED: $1"
    [ -z "${GEMM_TEST_SKIP_REASON_FILE:-}" ] || echo "$1" >"$GEMM_TEST_SKIP_REASON_FILE"
    exit 77
}

case $pkg_config in *-NOTFOUND)
    skip "pkg-config was not found at configure time: the README's pkg-config build cannot be checked" ;;
esac
for dir in "$bindir" "$libdir" "$includedir"; do
    case $dir in /*) skip "install folder $dir is absolute: it cannot be put under a temporary prefix" ;; esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$(realpath "$tmp")/prefix
failures=0

# Runs a command in the clean environment.
clean() { env -i PATH="$PATH" HOME="$tmp/home" "$@"; }

fail() { echo "  FAIL: $*"; return 1; }

# Runs the check function NAME in a subshell that stops at its first error, and counts it.
check() {
    local rc
    echo "== $1"
    set +e
    ( set -e; "$1" )
    rc=$?
    set -e
    if [ $rc -eq 0 ]; then echo "  ok"; else failures=$((failures + 1)); fi
}

# Fails unless PATH_GIVEN (as a loader or pkg-config shows it) lies inside the prefix.
expect_in_prefix() {
    local what=$1 path_given=$2 resolved
    resolved=$(realpath -m "$path_given")
    case $resolved in
    "$prefix"/*) echo "  $what: $resolved" ;;
    *) fail "$what is $path_given, outside the prefix $prefix" ;;
    esac
}

# Fails unless every library FILE needs is found and gemm's own come from the prefix.
check_loads() {
    local file=$1 deps runpath lib
    deps=$(clean ldd "$file") || fail "ldd ${file#"$prefix"/} failed"
    runpath=$(readelf -d "$file" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\1 \2/p')
    echo "  ${file#"$prefix"/}: ${runpath:-no RUNPATH}"
    if grep -q 'not found' <<<"$deps"; then
        grep 'not found' <<<"$deps"
        fail "${file#"$prefix"/} does not load from the prefix"
    fi
    while IFS= read -r lib; do
        expect_in_prefix "  its ${lib##*/}" "$lib"
    done < <(awk '$1 ~ /^libgemm/ {print $3}' <<<"$deps")
}

installed_files_load() {
    local file
    while IFS= read -r file; do
        check_loads "$file"
    done < <(find "$prefix/$bindir" "$prefix/$libdir" -type f \( -path "$prefix/$bindir/*" -o -name '*.so*' \) | sort)
}

# The README's C example, built as README.md says and run: it prints "4 5" and "10 11".
pkg_config_app() {
    local pc_path=$prefix/$libdir/pkgconfig flags pc_libdir out
    awk '/^## Use it from C$/ {section = 1} section && /^```c$/ {code = 1; next}
         code && /^```$/ {exit} code' "$source/README.md" >"$tmp/app.c"
    [ -s "$tmp/app.c" ] || fail "no C example under '## Use it from C' in README.md"
    flags=$(clean PKG_CONFIG_PATH="$pc_path" "$pkg_config" --cflags --libs gemm) ||
        fail "pkg-config found no gemm in $pc_path"
    echo "  pkg-config --cflags --libs gemm: $flags"
    expect_in_prefix includedir "$(clean PKG_CONFIG_PATH="$pc_path" "$pkg_config" --variable=includedir gemm)"
    pc_libdir=$(clean PKG_CONFIG_PATH="$pc_path" "$pkg_config" --variable=libdir gemm)
    expect_in_prefix libdir "$pc_libdir"
    # shellcheck disable=SC2086  # the flags are words, as in the README's command
    clean "$cc" "$tmp/app.c" $flags -Wl,-rpath,"$pc_libdir" -o "$tmp/app_pkg_config" ||
        fail "cc app.c \$(pkg-config --cflags --libs gemm) failed"
    check_loads "$tmp/app_pkg_config"
    out=$(clean "$tmp/app_pkg_config")
    [ "$out" = $'4 5\n10 11' ] || fail "the README's example printed '$out', expected '4 5 / 10 11'"
    echo "  printed: ${out//$'\n'/ / }"
}

# examples/c_example.c built by a CMake project that finds the installed package.
cmake_app() {
    local app=$tmp/cmake_app out
    mkdir -p "$app"
    cat >"$app/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.22)
project(app C)
find_package(gemm REQUIRED)
add_executable(app "$source/examples/c_example.c")
target_link_libraries(app PRIVATE gemm::gemm)
EOF
    clean "$cmake" -S "$app" -B "$app/build" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake_app.log" 2>&1 ||
        { cat "$tmp/cmake_app.log"; fail "configuring a project with find_package(gemm) failed"; }
    expect_in_prefix gemm_DIR "$(sed -n 's/^gemm_DIR:PATH=//p' "$app/build/CMakeCache.txt")"
    clean "$cmake" --build "$app/build" >>"$tmp/cmake_app.log" 2>&1 ||
        { cat "$tmp/cmake_app.log"; fail "building against gemm::gemm failed"; }
    check_loads "$app/build/app"
    out=$(clean "$app/build/app") || { echo "$out"; fail "c_example exited with an error"; }
    grep -q '^C = A \* B' <<<"$out" || fail "c_example printed no product: $out"
    echo "  c_example ran and checked its product"
}

gemm_info() {
    local out
    out=$(clean "$prefix/$bindir/gemm" info 2>&1) || { echo "$out"; fail "gemm info exited with an error"; }
    grep -q '^  valid: yes' <<<"$out" || { echo "$out"; fail "gemm info found no valid selection"; }
    echo "  $(head -1 <<<"$out"); $(grep '^backends' <<<"$out" | tr -d :); selection valid"
}

# Runs the sgemm_ caller (MODE) with the variables before it and checks where sgemm_ came
# from (EXPECTED), C, and that gemm traced the call.
routed_sgemm() {
    local mode=$1 expected=$2 out
    shift 2
    out=$(clean "$@" GEMM_VERBOSE=1 "$caller" "$mode" 2>"$tmp/trace") ||
        { [ -z "$out" ] || echo "$out"; cat "$tmp/trace"; fail "the sgemm_ caller failed"; }
    echo "  ${out%%$'\n'*}"
    [ "$(realpath -m "$(sed -n 's/^sgemm_ from //p' <<<"$out")")" = "$(realpath -m "$expected")" ] ||
        fail "sgemm_ did not come from $expected"
    [ "$(tail -n +2 <<<"$out")" = $'4 5\n10 11' ] || fail "C is wrong: $out"
    grep -q 'backend=' "$tmp/trace" || { cat "$tmp/trace"; fail "no backend= line: not routed through gemm"; }
    echo "  C right; traced: $(grep -o 'backend=[^ ]* variant=[^ ]*' "$tmp/trace" | head -1)"
}

preloaded_blas() { routed_sgemm preload "$prefix/$libdir/libgemm_blas.so" LD_PRELOAD="$prefix/$libdir/libgemm_blas.so"; }

# The folder first on the search path stands for update-alternatives' switch.
alternative_blas() { routed_sgemm libblas "$prefix/$libdir/gemm/libblas.so.3" LD_LIBRARY_PATH="$prefix/$libdir/gemm"; }

echo "== cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
echo "  $(grep -c 'Installing:' "$tmp/install.log") files installed"

check installed_files_load
check pkg_config_app
check cmake_app
check gemm_info
check preloaded_blas
if [ "$alternative_built" = 1 ]; then
    check alternative_blas
else
    echo "== alternative_blas: not built (no OpenBLAS at configure time), not checked"
fi

# The uninstall target takes back every file the install put there, and the gemm folders.
uninstalled() {
    "$cmake" --build "$build" --target uninstall >"$tmp/uninstall.log" 2>&1 ||
        { cat "$tmp/uninstall.log"; fail "the uninstall target failed"; }
    local left
    left=$(find "$prefix" -mindepth 1 \( -type f -o -type l -o -name gemm \) -print)
    [ -z "$left" ] || fail "left after uninstall: $left"
    echo "  $(grep -c '^-- Removed: ' "$tmp/uninstall.log") files removed, none left"
}
check uninstalled
echo "$failures failed"
[ $failures -eq 0 ]
