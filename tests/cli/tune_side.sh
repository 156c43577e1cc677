#!/usr/bin/env bash
# tune_side.sh: gemm tune on transposes and sparse products: a --shapes file with an omatcopy
# and an spmm_csr line (and a GEMM one) stores their entries under the keys the library
# looks up, the table and --json name the calls, --verify measures them again; a line of
# theirs that does not parse is refused with its file and line; --help gives their grammar.
# usage: tune_side.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

cache=$work/cache.txt
shapes=$work/shapes.txt
transpose_key="omatcopy f32 T 40 30 space=host"
sparse_key="spmm_csr f32 row NN 60 7 50 density=1e-1 space=host beta=0"

case $scenario in
shapes)
    printf '%s\n' "# a transpose, a sparse product and a GEMM" "omatcopy f32 row T 30 40" \
        "spmm_csr f32 row NN 60 7 50 0.1" "f32 row NN 16 16 16" >"$shapes"
    run_expect 0 "$gemm" tune --shapes "$shapes" --budget-ms 20 --cache "$cache"
    expect_line out "^30x40 +f32 +omatcopy row T .* cpu_omp$"
    expect_line out "^60x7x50 d=1e-1 +f32 +spmm_csr row NN .* cpu_omp$"
    expect_line out "^# cache .*: 3 entries stored$"
    # The row-major transpose is keyed as the column-major one, rows and cols swapped.
    grep -qE "^$transpose_key \| cpu_omp - \| [0-9.]+ us \| default cpu_omp [0-9.]+ us$" "$cache" ||
        fail "no transpose entry in the cache: $(cat "$cache")"
    grep -qE "^$sparse_key \| cpu_omp - \| " "$cache" || fail "no sparse entry in the cache: $(cat "$cache")"
    grep -qE "^f32 f32 NN 16 16 16 " "$cache" || fail "the GEMM entry is missing: $(cat "$cache")"
    # They load back (no warning) and --verify measures each.
    run_expect 0 "$gemm" tune --verify --budget-ms 20 --cache "$cache"
    expect_line out "^$transpose_key +cpu_omp .* holds: the built-in choice itself$"
    expect_line out "^$sparse_key +cpu_omp .* holds: the built-in choice itself$"
    expect_line out "^# 3 entries: 3 hold"
    grep -q warning "$work/err" && fail "warnings while reading the cache"
    # The key lines --verify lists are --shapes lines too; --json names the calls.
    printf '%s\n' "$transpose_key" "$sparse_key" >"$shapes"
    run_expect 0 "$gemm" tune --shapes "$shapes" --budget-ms 20 --no-store --cache "$cache" --json -
    expect_line out "\"call\": \"omatcopy\""
    expect_line out "\"key\": \"$transpose_key\""
    expect_line out "\"call\": \"spmm_csr\""
    expect_line out "\"density\": 0\.1"
    ;;
verify_measured)
    # An entry edited to cpu_ref is measured head to head with the built-in choice.
    printf '%s\n' "omatcopy f32 col T 40 30" >"$shapes"
    run_expect 0 "$gemm" tune --shapes "$shapes" --budget-ms 20 --cache "$cache"
    sed -i "s/^\($transpose_key | \)cpu_omp/\1cpu_ref/" "$cache"
    grep -qF "$transpose_key | cpu_ref - |" "$cache" || fail "could not prepare the cache"
    "$gemm" tune --verify --budget-ms 50 --cache "$cache" >"$work/out" 2>"$work/err" || true
    expect_line out "^$transpose_key +cpu_ref +[0-9.]+ us +cpu_omp +[0-9.]+ us "
    ;;
bad_lines)
    for line in "omatcopy f32 row X 30 40" "omatcopy f32 row T 30" "spmm_csr f32 row NN 60 7 50 2" \
        "spmm_csr f32 row NN 60 7 50 0.1 gpu" "spmm_coo f32 row NN 60 7 50 density=0.1 space=host beta=0"; do
        printf '%s\n' "f32 row NN 16 16 16" "$line" >"$shapes"
        run_expect 2 "$gemm" tune --shapes "$shapes" --budget-ms 20 --no-store --cache "$cache"
        expect_line err "shapes.txt:2: "
    done
    ;;
help)
    run_expect 0 "$gemm" tune --help
    expect_line out "omatcopy DTYPE LAYOUT OP ROWS COLS \[device\]"
    expect_line out "spmm_csr DTYPE LAYOUT OPS M N K DENSITY \[device\]"
    ;;
*) fail "unknown scenario $scenario" ;;
esac
echo "PASS: $scenario"
