#!/usr/bin/env bash
# bench_auto.sh: with auto among the backends, gemm bench ends its table with auto against the
# fastest backend forced on each problem (median over median) and the worst of them; CSV and
# JSON carry the same figures. Untuned auto: a fresh tune cache, GEMM_TUNE unset.
# usage: bench_auto.sh SCENARIO GEMM [PYTHON3]
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2 python=${3:-}
fresh_cache=(env -u GEMM_TUNE GEMM_TUNE_CACHE="$work/cache.txt")
shapes=(24 17x9x33)
backends=(--backends "cpu_omp,cpu_ref,auto" --baseline cpu_omp)

# The block's per-problem lines: "  f32 row NN 24x24x24   cpu_omp   0.98".
problem_line='^  f32 row NN (24x24x24|17x9x33) +(cpu_omp|cpu_ref) +[0-9]+\.[0-9]{2}$'

case $scenario in
summary)
    run_expect 0 "${fresh_cache[@]}" "$gemm" bench "${shapes[@]}" "${backends[@]}" --csv "$work/rows.csv" \
        "${quick_bench[@]}"
    expect_line out '^auto against the best backend forced \(median; 1\.00 = as fast\):$'
    [ "$(grep -Ec "$problem_line" "$work/out")" -eq 2 ] || fail "not one ratio line per problem"
    expect_line out '^worst: [0-9]+\.[0-9]{2} \(f32 row NN (24x24x24|17x9x33): auto [0-9.e+-]+ ms, (cpu_omp|cpu_ref) [0-9.e+-]+ ms\)$'
    # The worst is the lowest of the problems' ratios.
    lowest=$(grep -E "$problem_line" "$work/out" | awk '{ print $NF }' | sort -n | head -1)
    worst=$(grep '^worst: ' "$work/out" | awk '{ print $2 }')
    [ "$lowest" = "$worst" ] || fail "worst $worst is not the lowest ratio $lowest"
    # The block comes after the table, before the closing comments.
    [ "$(grep -n '^auto against' "$work/out" | cut -d: -f1)" -gt "$(grep -n '^auto  *f32 ' "$work/out" | tail -1 | cut -d: -f1)" ] ||
        fail "the block is not after the table's rows"
    # CSV: the two columns follow round_spread_percent (scale, FP8's, comes last); auto's rows
    # fill them, the others leave them empty.
    head -1 "$work/rows.csv" | grep -q ',round_spread_percent,best_forced,best_over_auto,scale$' ||
        fail "the CSV header does not end with best_forced,best_over_auto,scale"
    awk -F, 'NR > 1 && $1 == "auto" && !($(NF-2) ~ /^cpu_(omp|ref)$/ && $(NF-1) > 0) { bad = 1 }
             NR > 1 && $1 != "auto" && !($(NF-2) == "" && $(NF-1) == "-") { bad = 1 }
             END { exit bad }' "$work/rows.csv" || fail "the CSV's best_forced, best_over_auto are not as expected"
    ;;
no_auto)
    # Without auto there is nothing to compare: no block.
    run_expect 0 "${fresh_cache[@]}" "$gemm" bench "${shapes[@]}" --backends cpu_omp,cpu_ref --baseline cpu_omp \
        "${quick_bench[@]}"
    expect_line out '^cpu_ref '
    if grep -Eq '^(auto against|worst:)' "$work/out"; then fail "a block without auto"; fi
    ;;
json)
    [ -n "$python" ] || fail "usage: bench_auto.sh json GEMM PYTHON3"
    run_expect 0 "${fresh_cache[@]}" "$gemm" bench "${shapes[@]}" "${backends[@]}" --json - "${quick_bench[@]}"
    if grep -q '^auto against' "$work/out"; then fail "the block reached stdout in place of the JSON"; fi
    "$python" - "$work/out" <<'PY' || fail "the JSON's best_forced, best_over_auto, auto_worst are not as expected"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
rows = d["rows"]
autos = [r for r in rows if r["backend"] == "auto"]
assert len(autos) == 2, autos
for a in autos:
    forced = [r for r in rows if r["backend"] != "auto" and (r["m"], r["n"], r["k"]) == (a["m"], a["n"], a["k"])]
    best = min(forced, key=lambda r: r["median_ms"])
    assert a["best_forced"] == best["backend"], (a, best)
    assert abs(a["best_over_auto"] - best["median_ms"] / a["median_ms"]) < 1e-3 * a["best_over_auto"], a
    assert all(r["best_forced"] is None and r["best_over_auto"] is None for r in forced), forced
worst = min(autos, key=lambda r: r["best_over_auto"])
w = d["auto_worst"]
assert (w["m"], w["n"], w["k"], w["best_forced"]) == (worst["m"], worst["n"], worst["k"], worst["best_forced"]), w
assert w["best_over_auto"] == worst["best_over_auto"] and w["auto_median_ms"] == worst["median_ms"], w
assert w["dtype"] == "f32" and w["layout"] == "row" and w["ops"] == "NN" and w["batch"] == 1, w
PY
    # Without auto, auto_worst is null.
    run_expect 0 "${fresh_cache[@]}" "$gemm" bench 24 --backends cpu_ref --baseline cpu_omp --json - "${quick_bench[@]}"
    "$python" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["auto_worst"] is not None)' "$work/out" ||
        fail "auto_worst is not null without auto"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
