#!/usr/bin/env bash
# tune_table.sh: the gemm tune table keeps its columns aligned whatever the widths of the
# problems' texts (a class like "col NN ld+pad misaligned beta!=0", a batched shape); a
# recorded key is tuned, and stored, as that same key; a complex conjugate transpose stays one;
# a problem whose timings stay disturbed is reported and not stored.
# usage: tune_table.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

# expect_aligned: in the table on stdout, every row has its speedup, its rej count and its
# winner exactly under the header's.
expect_aligned() {
    awk '/^shape /  { header = $0; speedup_end = index(header, "speedup") + 6
                      rej_end = index(header, " rej") + 3; winner = index(header, "winner"); next }
         header && /^[0-9]/ {
             if (substr($0, speedup_end, 1) != "x" || substr($0, rej_end, 1) !~ /[0-9]/ ||
                 substr($0, rej_end + 1, 1) !~ /^ ?$/ || substr($0, winner - 1, 1) != " " ||
                 substr($0, winner, 1) == " ") { print "misaligned: " $0; bad = 1 }
             rows++ }
         END { if (!header || rows < 2) { print "no table"; bad = 1 }; exit bad }' "$work/out" ||
        fail "the table's columns are not aligned"
}

# tune_recorded_key KEY ROW: a --shapes file of the recorded line KEY is tuned as that key,
# its table row matching ROW (ERE), and stored under it; gemm tune --verify measures it again
# and gives it a verdict.
tune_recorded_key() {
    local key=$1 row=$2 rc=0
    echo "$key" >"$work/shapes.txt"
    run_expect 0 "$gemm" tune --shapes "$work/shapes.txt" --cache "$work/cache.txt" --budget-ms 20
    expect_line out "$row"
    grep -qF "$key | " "$work/cache.txt" || fail "no entry for the recorded key '$key' in the cache"
    echo "+ $gemm tune --verify --budget-ms 20 --cache $work/cache.txt"
    "$gemm" tune --verify --budget-ms 20 --cache "$work/cache.txt" >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" -le 1 ] || fail "gemm tune --verify exited $rc"
    grep -F "$key " "$work/out" | grep -Eq "(holds|does not hold)" || fail "--verify gave no verdict for '$key'"
}

case $scenario in
disturbed)
    # Timings that stay disturbed (forced by the test hook) are timed again and not stored;
    # the row and the last lines say so.
    cache=$work/cache.txt
    GEMM_TEST_TUNE_DISTURBED=9 run_expect 0 "$gemm" tune 32x32x32 --budget-ms 5 --cache "$cache"
    expect_line out "^    disturbed: .* each time they were taken .* so the winner is not stored; "
    expect_line out "^# cache .*: 0 entries stored$"
    expect_line out "^# warning: 1 problem timed while something else had the machine .* so it is not stored; "
    ! grep -q '^f32 f32 NN 32 32 32 ' "$cache" 2>/dev/null || fail "a disturbed winner was stored: $(cat "$cache")"
    GEMM_TEST_TUNE_DISTURBED=1 run_expect 0 "$gemm" tune 32x32x32 --budget-ms 5 --cache "$cache"
    expect_line out "^# cache .*: 1 entry stored$"
    ! grep -q "disturbed:" "$work/out" || fail "a problem that settled is reported disturbed"
    ;;
columns)
    cat >"$work/shapes.txt" <<'SHAPES'
f32 f32 NN 16 16 16 batch=1 ld=padded align=elem space=host beta=any
f32 row NN 24 24 24 3
f64 col NT 8 40 16 1
SHAPES
    run_expect 0 "$gemm" tune --shapes "$work/shapes.txt" --no-store --budget-ms 20
    expect_line out "col NN ld\+pad misaligned beta!=0"
    expect_aligned
    run_expect 0 "$gemm" tune --shapes "$work/shapes.txt" --no-store --budget-ms 20 --verbose
    expect_aligned
    ;;
recorded_keys)
    # A recorded key is tuned as that same key: tight 3x3x3 f32 is align=elem through its
    # leading dimensions (12 bytes), measured on aligned pointers; tight 4x4x4 f32 align=elem
    # can only owe it to its pointers, measured one element off. Both store their own key.
    cat >"$work/shapes.txt" <<'SHAPES'
f32 f32 NN 3 3 3 batch=1 ld=tight align=elem space=host beta=0
f32 f32 NN 4 4 4 batch=1 ld=tight align=elem space=host beta=0
SHAPES
    run_expect 0 "$gemm" tune --shapes "$work/shapes.txt" --cache "$work/cache.txt" --budget-ms 20
    for key in "f32 f32 NN 3 3 3 batch=1 ld=tight align=elem space=host beta=0" \
               "f32 f32 NN 4 4 4 batch=1 ld=tight align=elem space=host beta=0"; do
        grep -qF "$key | " "$work/cache.txt" || fail "no entry for the recorded key '$key' in the cache"
    done
    ;;
complex_ops)
    # GEMM_OP_C stays the conjugate transpose for complex types through tuning (key "CN"; a
    # row-major call swaps the operands and keeps each op: "NC") and measurement (the trace).
    run_expect 0 "$gemm" tune 8x6x4 --dtype c32 --ops CN --layout col,row --cache "$work/cache.txt" --budget-ms 20
    for key in "c32 c32 CN 8 6 4 batch=1" "c32 c32 NC 6 8 4 batch=1"; do
        grep -qF "$key " "$work/cache.txt" || fail "no entry '$key' in the cache"
    done
    GEMM_VERBOSE=1 run_expect 0 "$gemm" bench 8x6x4 --dtype c64 --ops CT --layout col --backends cpu_ref \
        --reps 1 --rounds 1 --no-measure-peak
    expect_line err 'dtype=c64 layout=col ops=CT m=8 n=6 k=4 .*why="measured"'
    # A row-major case is traced as written, not in its column-major form (6x8x4, ops TC).
    GEMM_VERBOSE=1 run_expect 0 "$gemm" bench 8x6x4 --dtype c64 --ops CT --layout row --backends cpu_ref \
        --reps 1 --rounds 1 --no-measure-peak
    expect_line err 'dtype=c64 layout=row ops=CT m=8 n=6 k=4 lda=8 ldb=4 ldc=6 .*why="measured"'
    if grep -q 'layout=col' "$work/err"; then fail "a row-major case traced in column-major form"; fi
    ;;
epilogue_keys)
    # Recorded keys of calls with an epilogue are tuned as those keys (gemm_tune_key), their
    # epilogue in the table's class column; gemm tune --verify measures them again; a key whose
    # epilogue the library does not read fails its row, with the reason.
    fwd="f32 f32 TN 32 20 16 batch=1 ld=tight align=16 space=host beta=0 epilogue=gelu+bias(rows)+aux"
    bwd="f64 f64 NN 24 18 12 batch=1 ld=tight align=16 space=host beta=any epilogue=relu_backward+bias_grad(columns)"
    printf '%s\n%s\n' "$fwd" "$bwd" >"$work/shapes.txt"
    run_expect 0 "$gemm" tune --shapes "$work/shapes.txt" --cache "$work/cache.txt" --budget-ms 20
    expect_line out "^32x20x16 +f32 +col TN gelu\+bias\(rows\)\+aux "
    expect_line out "^24x18x12 +f64 +col NN beta!=0 relu_backward\+bias_grad\(columns\) "
    for key in "$fwd" "$bwd"; do
        grep -qF "$key | " "$work/cache.txt" || fail "no entry for the recorded key '$key' in the cache"
    done
    # Whether a measured entry holds is a timing on a shared machine (exit 1 when one does
    # not): only that both are measured again, each with a verdict, is asserted.
    echo "+ $gemm tune --verify --budget-ms 20 --cache $work/cache.txt"
    rc=0
    "$gemm" tune --verify --budget-ms 20 --cache "$work/cache.txt" >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" -le 1 ] || fail "gemm tune --verify exited $rc"
    for key in "$fwd" "$bwd"; do
        grep -F "$key " "$work/out" | grep -Eq "(holds|does not hold)" || fail "--verify gave no verdict for '$key'"
    done
    expect_line out "^# 2 entries: "
    echo "f32 f32 NN 8 8 8 batch=1 ld=tight align=16 space=host beta=0 epilogue=gelu+aux+bias(rows)" >"$work/bad.txt"
    run_expect 1 "$gemm" tune --shapes "$work/bad.txt" --cache "$work/cache.txt" --budget-ms 20
    expect_line out "FAILED: .*is not a tune-cache key"
    ;;
pointer_keys)
    # A recorded key of a pointer-array batch is tuned as that key (gemm_tune_key), each
    # candidate timed as a pointer-array call of its matrices, "pointers" in the class column;
    # gemm tune --verify measures it again the same way.
    tune_recorded_key "f32 f32 NN 24 20 16 batch=5 ld=tight align=16 space=host beta=any form=pointers" \
        "^24x20x16 x5 +f32 +col NN beta!=0 pointers "
    ;;
tf32_keys)
    # A recorded key of TF32 math (math=tf32) is tuned as that key where TF32 is allowed, and
    # stored under it; without GEMM_ALLOW_TF32=1 it is refused, saying why.
    key="f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0 math=tf32"
    echo "$key" >"$work/shapes.txt"
    run_expect 0 env GEMM_ALLOW_TF32=1 "$gemm" tune --shapes "$work/shapes.txt" --cache "$work/cache.txt" --budget-ms 20
    expect_line out "^64x64x64 +f32 +col NN +tf32 "
    grep -qF "$key | " "$work/cache.txt" || fail "no entry for the recorded key '$key' in the cache"
    run_expect 1 "$gemm" tune --shapes "$work/shapes.txt" --cache "$work/cache.txt" --budget-ms 20
    expect_line out "FAILED: .*of TF32 math \(math=tf32\): measure it with GEMM_ALLOW_TF32=1"
    ;;
block_keys)
    # A recorded key of a block-scaled FP8 class (scales=) is tuned as that key, each candidate
    # measured and checked with block scales, and stored under it; --verify measures it so too.
    tune_recorded_key "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,128x128" \
        "^32x20x320 +e4m3>bf16 +col NN scales=1x128,128x128 "
    # --scale block tunes the block-scaled class of argument shapes under the key their calls
    # look up: a row-major call's canonical A is B, with 128x128 blocks (and m and n swapped).
    run_expect 0 "$gemm" tune 32x20x320 --dtype 'e4m3>bf16' --layout row,col --scale block --backends cpu_omp \
        --cache "$work/args.txt" --budget-ms 20
    expect_line out "^32x20x320 +e4m3>bf16 +row NN scales=block "
    for key in "e4m3 bf16 NN 20 32 320 batch=1 ld=tight align=elem space=host beta=0 scales=128x128,1x128" \
        "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,128x128"; do
        grep -qF "$key | " "$work/args.txt" || fail "no entry for '$key' in the cache"
    done
    # Scales are for FP8, and for argument shapes (recorded lines say scales= themselves).
    run_expect 2 "$gemm" tune 64 --dtype bf16 --scale block --no-store
    expect_line err "--scale: scales are for FP8 dtypes"
    run_expect 2 "$gemm" tune --shapes "$work/shapes.txt" --dtype e4m3 --scale block --no-store
    expect_line err "--scale applies to shapes given as arguments"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
