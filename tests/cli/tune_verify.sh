#!/usr/bin/env bash
# tune_verify.sh: gemm tune --verify measures every cache entry again: one that stores the
# built-in choice holds unmeasured, a stored choice far slower than the built-in one (cpu_ref
# at 96^3) does not hold and makes the exit code 1 until --drop removes it; --json says the
# same; options that choose problems are refused.
# usage: tune_verify.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2
# One OpenBLAS thread: with ctest running other tests beside this one, OpenBLAS's threads
# wait on each other for the CPU and its 96^3 call ran 300x slower than alone, slower than
# cpu_ref, so the comparison this test makes said nothing about the cache entry.
export OPENBLAS_NUM_THREADS=1

cache=$work/cache.txt
key64="f32 f32 NN 64 64 64 batch=1 ld=tight align=16 space=host beta=0"
key96="f32 f32 NN 96 96 96 batch=1 ld=tight align=16 space=host beta=0"

# A cache whose 64^3 entry is the built-in choice (tuned with only that backend) and whose
# 96^3 entry was edited to cpu_ref; and f32 rates that keep the built-in choice what the tune
# took, whatever this machine would measure (under a sanitizer an uninstrumented OpenBLAS can
# beat cpu_omp).
make_cache() {
    run_expect 0 "$gemm" tune 64 96 --layout col --budget-ms 20 --cache "$cache" --backends cpu_ref
    builtin=$(grep -F "$key64 | " "$cache" | sed 's/.*| default \([a-z_]*\) .*/\1/')
    [ -n "$builtin" ] && [ "$builtin" != cpu_ref ] || fail "no built-in choice other than cpu_ref here"
    sed -i "s/^\($key64 | \)[^|]*|/\1$builtin - |/; s/^\($key96 | \)[^|]*|/\1cpu_ref - |/" "$cache"
    grep -qF "$key96 | cpu_ref - |" "$cache" || fail "could not prepare the cache"
    echo "rates f32 | host $builtin 1e+09 GFLOP/s 0 us" >>"$cache"
}

case $scenario in
drop)
    make_cache
    run_expect 1 "$gemm" tune --verify --budget-ms 100 --cache "$cache"
    expect_line out "^$key64 +$builtin +- .* holds: the built-in choice itself$"
    expect_line out "^$key96 +cpu_ref .* does not hold( \(disturbed\))?: 0\.[0-9]+x the default's speed$"
    expect_line out "^# 2 entries: 1 hold \(1 store the built-in choice\), 1 do not hold \(kept: --drop removes them\)"
    grep -qF "$key96 | cpu_ref" "$cache" || fail "--verify without --drop changed the cache"
    run_expect 0 "$gemm" tune --verify --drop --budget-ms 100 --cache "$cache"
    expect_line out "^$key96 +cpu_ref .* dropped( \(disturbed\))?: "
    expect_line out "1 do not hold \(1 dropped\)"
    ! grep -qF "$key96 | " "$cache" || fail "--drop left the entry in the cache"
    grep -qF "$key64 | $builtin - |" "$cache" || fail "--drop removed an entry that holds"
    run_expect 0 "$gemm" tune --verify --budget-ms 100 --cache "$cache"
    expect_line out "^# 1 entry: 1 hold"
    ;;
json)
    make_cache
    run_expect 1 "$gemm" tune --verify --budget-ms 100 --cache "$cache" --json -
    python3 - "$work/out" "$key96" <<'PY' || fail "the JSON does not say what the table says"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["key"]: r for r in doc["entries"]}
slow = rows[sys.argv[2]]
assert slow["choice"] == "cpu_ref" and slow["measured"] and not slow["holds"] and not slow["removed"], slow
assert slow["median_us"] > slow["default_median_us"] > 0, slow
assert doc["summary"] == {"entries": 2, "hold": 1, "do_not_hold": 1, "dropped": 0, "not_measured": 0,
                          "disturbed": doc["summary"]["disturbed"]}, doc["summary"]
PY
    ;;
usage)
    run_expect 2 "$gemm" tune --verify 64
    expect_line err "takes no shapes"
    run_expect 2 "$gemm" tune --verify --backends cblas
    expect_line err "--backends is for tuning"
    run_expect 2 "$gemm" tune --drop --suite quick
    expect_line err "--drop goes with --verify"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
