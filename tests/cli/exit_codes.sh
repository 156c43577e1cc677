#!/usr/bin/env bash
# exit_codes.sh: gemm exits 1, with the reason on stderr, when it could not do what it was
# asked: a backend that cannot run here, rows that did not run, nothing to tune, output lost.
# usage: exit_codes.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

case $scenario in
bench_unavailable_backend)
    GEMM_CBLAS_LIB=/nonexistent run_expect 1 "$gemm" bench 64 --backends cblas "${quick_bench[@]}"
    expect_line err "ERROR: cblas cannot run here: .*unavailable.*/nonexistent"
    GEMM_CBLAS_LIB=/nonexistent run_expect 1 "$gemm" bench 64 --backends cpu_omp --baseline cblas "${quick_bench[@]}"
    expect_line err "ERROR: cblas cannot run here"
    run_expect 1 "$gemm" bench 64 --backends cpu_ref:no_such_variant "${quick_bench[@]}"
    expect_line err "ERROR: cpu_ref:no_such_variant cannot run here: .*no variant 'no_such_variant'"
    ;;
bench_rows_not_run)
    # An f64 kernel of cpu_omp computes no f32: asked for f32, its row cannot run.
    run_expect 1 "$gemm" bench 64 --backends cpu_omp:generic_f64_4x4 --baseline cpu_omp:generic_f64_4x4 --dtype f32 "${quick_bench[@]}"
    expect_line err "ERROR: cpu_omp:generic_f64_4x4 on f32 row NN 64x64x64 did not run: GEMM_STATUS_NOT_SUPPORTED"
    expect_line err "ERROR: nothing was measured"
    # The default set is every available backend whatever the dtype: a default backend that
    # does not serve f16 (cblas, where it is available) is no error while another row measures it.
    run_expect 0 "$gemm" bench 33 --dtype f32,f16 "${quick_bench[@]}"
    expect_line out "^auto +f16 .* ok "
    expect_line out "^cpu_omp +f16 .* ok "
    if grep -q '^cblas ' "$work/out"; then expect_line out "^cblas +f16 .*GEMM_STATUS_NOT_SUPPORTED"; fi
    ;;
not_in_build)
    # A name this build has no backend for is a mistake in the command line: exit 2.
    run_expect 2 "$gemm" bench 64 --backends no_such_backend "${quick_bench[@]}"
    expect_line err "no backend named 'no_such_backend' in this build \(auto, cpu_omp, cblas, cpu_ref"
    run_expect 2 "$gemm" tune 64 --backends no_such_backend --no-store
    expect_line err "no backend named 'no_such_backend' in this build \(cpu_omp, cblas, cpu_ref"
    ;;
tune_unavailable_backend)
    GEMM_CBLAS_LIB=/nonexistent run_expect 1 "$gemm" tune 64 --backends cblas --no-store
    expect_line err "ERROR: cblas cannot run here: .*unavailable"
    run_expect 2 "$gemm" tune 64 --backends cpu_omp:any --no-store
    expect_line err "give backend names"
    ;;
tune_backend_never_tried)
    # cblas serves no f16 (the host backends of this build serve every other host problem).
    "$gemm" info >"$work/info" 2>&1
    grep -qE "^  cblas +yes" "$work/info" || skip "cblas is not available (it is the backend that serves no f16)"
    run_expect 1 "$gemm" tune 64 --dtype f16 --backends cblas --no-store --budget-ms 20
    expect_line err "ERROR: cblas was a candidate for none of the problems"
    ;;
tune_nothing_to_tune)
    printf '# no problem here\n\n' >"$work/shapes.txt"
    run_expect 1 "$gemm" tune --shapes "$work/shapes.txt" --no-store
    expect_line err "ERROR: nothing to tune: .*shapes.txt lists no problem"
    ;;
bad_numbers)
    # A number on the command line is the whole text: no blanks or '+' around it, and one past
    # 64 bits is out of range (exit 2, a mistake in the command line).
    run_expect 2 "$gemm" bench ' 7' "${quick_bench[@]}"
    expect_line err "shape ' 7': ' 7' is not an integer"
    run_expect 2 "$gemm" bench 7 --reps +3
    expect_line err "--reps: '\+3' is not an integer"
    run_expect 2 "$gemm" bench 99999999999999999999 "${quick_bench[@]}"
    expect_line err "99999999999999999999 is out of the range of a 64-bit integer"
    ;;
empty_list_items)
    # A list with an empty item ("f32,", "f32,,f64") has a value left out: exit 2, not the
    # items that are there.
    run_expect 2 "$gemm" bench 9 --dtype f32, "${quick_bench[@]}"
    expect_line err "--dtype: 'f32,' has an empty item"
    run_expect 2 "$gemm" bench 9 --backends ,cpu_omp "${quick_bench[@]}"
    expect_line err "--backends: ',cpu_omp' has an empty item"
    run_expect 2 "$gemm" bench 9 --ops NN,,TT "${quick_bench[@]}"
    expect_line err "--ops: 'NN,,TT' has an empty item"
    run_expect 2 "$gemm" tune 9 --backends cpu_omp, --no-store
    expect_line err "--backends: 'cpu_omp,' has an empty item"
    ;;
help_arguments)
    # gemm --help COMMAND is COMMAND's help; anything else after --help or --version is exit 2.
    run_expect 0 "$gemm" --help bench
    expect_line out "^usage: gemm bench "
    run_expect 0 "$gemm" help tune
    expect_line out "^usage: gemm tune "
    run_expect 2 "$gemm" --help extra
    expect_line err "--help takes at most a command name \(info, bench, tune\), not 'extra'"
    run_expect 2 "$gemm" --version extra
    expect_line err "--version takes no argument, not 'extra'"
    # The version names the commit of the build: a hash, or "unknown" outside a checkout.
    run_expect 0 "$gemm" --version
    expect_line out "^gemm [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}|v?[0-9.]+-[0-9]+-g[0-9a-f]{7,}|unknown)(-dirty)?\)$"
    ;;
output_lost)
    # A report cut short (a full disk: /dev/full) must not end in exit code 0.
    [ -w /dev/full ] || skip "no writable /dev/full"
    run_expect 1 "$gemm" bench 9 --backends cpu_omp --baseline cpu_omp --json /dev/full "${quick_bench[@]}"
    expect_line err "--json: could not write all of '/dev/full'"
    run_expect 1 "$gemm" bench 9 --backends cpu_omp --baseline cpu_omp --csv /dev/full "${quick_bench[@]}"
    expect_line err "--csv: could not write all of '/dev/full'"
    got=0
    "$gemm" info >/dev/full 2>"$work/err" || got=$?
    [ "$got" -eq 1 ] || fail "gemm info >/dev/full: exit code $got, expected 1"
    expect_line err "could not write all of the output to stdout"
    ;;
cuda_backend_without_device)
    run_expect 0 "$gemm" info
    grep -Eq '^  cuda_tiled +no ' "$work/out" || skip "cuda_tiled is available here (or not in this build)"
    run_expect 1 "$gemm" bench 64 --backends cuda_tiled "${quick_bench[@]}"
    expect_line err "ERROR: cuda_tiled cannot run here: .*unavailable"
    run_expect 1 "$gemm" tune 64 --backends cuda_tiled --no-store
    expect_line err "ERROR: cuda_tiled cannot run here: .*unavailable"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
