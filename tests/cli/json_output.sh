#!/usr/bin/env bash
# json_output.sh: --json FILE of gemm info, tune and bench writes valid JSON holding what the
# text says, strings escaped; '-' writes it to stdout in place of the text.
# usage: json_output.sh SCENARIO GEMM PYTHON3
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2 python=$3

# json_check FILE PYTHON_EXPRESSIONS...: FILE parses (python3 -m json.tool) and each
# expression, evaluated with the document as `d`, is true.
json_check() {
    local file=$1
    shift
    "$python" -m json.tool "$file" >/dev/null || fail "$file is not valid JSON"
    for expression in "$@"; do
        "$python" -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$file" "$expression" || fail "$file: not true: $expression"
    done
}

case $scenario in
info)
    # A library path with a quote, a backslash, a tab and a byte that is not UTF-8 reaches
    # the JSON twice: as the variable's value and in cblas's reason.
    odd_path=$'/no"such\\dir\t\xff/libcblas.so'
    GEMM_CBLAS_LIB=$odd_path run_expect 0 "$gemm" info --json "$work/info.json"
    expect_line out "^selection: auto \(from default\)"
    json_check "$work/info.json" \
        'd["version"] == d["header_version"]' \
        '[b["name"] for b in d["backends"]][:3] == ["cpu_omp", "cblas", "cpu_ref"]' \
        'd["backends"][2]["available"] is True and d["backends"][2]["error"] is None' \
        'd["backends"][1]["available"] is False and "no\"such\\dir\t\ufffd" in d["backends"][1]["reason"]' \
        'd["environment"]["GEMM_CBLAS_LIB"] == "/no\"such\\dir\t\ufffd/libcblas.so"' \
        'd["environment"]["GEMM_BACKEND"] is None' \
        'd["selection"] == {"backend": "auto", "source": "default", "valid": True, "status": "GEMM_STATUS_SUCCESS", "message": ""}' \
        'd["tune_cache"].endswith("tune-caches/cli.json_output.info.txt")' \
        'd["cpu"]["logical_cpus"] >= 1 and isinstance(d["cpu"]["isa"], list)' \
        'isinstance(d["cuda_devices"]["devices"], list)'
    # An invalid selection: exit 1, and the JSON says why.
    GEMM_BACKEND=nosuch run_expect 1 "$gemm" info --json -
    json_check "$work/out" \
        'd["selection"]["source"] == "GEMM_BACKEND" and not d["selection"]["valid"]' \
        'd["selection"]["status"] == "GEMM_STATUS_UNKNOWN_BACKEND" and "nosuch" in d["selection"]["message"]'
    ;;
tune)
    run_expect 0 "$gemm" tune 16x24x8 --dtype f32,f64 --no-store --budget-ms 20 --json "$work/tune.json"
    expect_line out "^16x24x8 +f64 "
    json_check "$work/tune.json" \
        '[(p["dtype"], p["m"], p["n"], p["k"]) for p in d["problems"]] == [("f32", 16, 24, 8), ("f64", 16, 24, 8)]' \
        'all(p["tuned"] and p["error"] is None and not p["stored"] for p in d["problems"])' \
        'all(p["winner"]["backend"] and p["default"]["median_us"] > 0 for p in d["problems"])' \
        'all(p["candidates"][0]["default"] and sum(c["winner"] for c in p["candidates"]) == 1 for p in d["problems"])' \
        'd["summary"]["problems"] == 2 and d["summary"]["tuned"] == 2 and d["summary"]["failed"] == 0' \
        'd["store"] is False and d["budget_ms"] == 20' \
        'all(c["spread"] >= 0 for p in d["problems"] for c in p["candidates"] if c["correct"])' \
        'd["summary"]["disturbed"] == sum(p["disturbed"] for p in d["problems"])'
    # A problem that cannot be tuned fails, with its error, and with --json - the table is
    # not on stdout.
    printf 'f32 row NN 1 1 1 9223372036854775807\n' >"$work/impossible.txt"
    run_expect 1 "$gemm" tune --shapes "$work/impossible.txt" --budget-ms 20 --no-store --json -
    json_check "$work/out" \
        'not d["problems"][0]["tuned"] and not d["problems"][0]["stored"]' \
        '"2^63" in d["problems"][0]["error"] and d["summary"]["failed"] == 1'
    # A cache under a plain file cannot be written: said before anything is tuned.
    touch "$work/plain_file"
    run_expect 1 "$gemm" tune 16 --budget-ms 20 --cache "$work/plain_file/cache.txt" --json -
    expect_line err "ERROR: the tune cache $work/plain_file/cache.txt cannot be written: $work/plain_file: Not a directory"
    ;;
bench_stdout)
    run_expect 0 "$gemm" bench 33 --backends cpu_ref --baseline cpu_omp --json - "${quick_bench[@]}"
    json_check "$work/out" \
        '[r["backend"] for r in d["rows"]] == ["cpu_omp", "cpu_ref"]' \
        'all(r["check"] == "ok" and r["median_ms"] > 0 for r in d["rows"])'
    run_expect 2 "$gemm" bench 33 --csv - --json -
    ;;
bench_fp8_scales)
    # --scale block: every row checked against a reference applying the same scales; the
    # preamble, JSON rows and CSV's last column, scale (columns are only ever added at the
    # end), name the mode, and the bytes behind AI count the scales: (130 + ceil(300 / 128)) x
    # ceil(640 / 128) f32 on top of A, B and C.
    run_expect 0 "$gemm" bench 130x300x640 --dtype e4m3 --layout row,col --ops NT --scale block \
        --backends cpu_ref --baseline cpu_omp --json "$work/b.json" --csv "$work/b.csv" "${quick_bench[@]}"
    expect_line out "^# FP8 scales: block"
    json_check "$work/b.json" \
        'len(d["rows"]) == 4 and all(r["scale"] == "block" and r["check"] == "ok" for r in d["rows"])' \
        'all(abs(r["arithmetic_intensity"] - 2 * 130 * 300 * 640 / (130 * 640 + 640 * 300 + 2 * 130 * 300 + 133 * 5 * 4)) < 0.01 for r in d["rows"])'
    head -1 "$work/b.csv" | grep -q ',best_forced,best_over_auto,scale$' || fail "the CSV header does not end in scale"
    [ "$(awk -F, 'NR > 1 && $NF == "block"' "$work/b.csv" | wc -l)" -eq 4 ] || fail "the CSV rows' scale is not block"
    run_expect 0 "$gemm" bench 64 --dtype e5m2 --ops TN --scale tensor --backends cpu_ref --baseline cpu_omp --json - "${quick_bench[@]}"
    json_check "$work/out" 'all(r["scale"] == "tensor" and r["check"] == "ok" for r in d["rows"])'
    run_expect 2 "$gemm" bench 64 --dtype e4m3,f32 --scale block
    expect_line err "--scale: scales are for FP8 dtypes \(e4m3, e5m2\), not f32"
    run_expect 2 "$gemm" bench 64 --dtype e4m3 --scale blocks
    expect_line err "--scale: 'blocks' must be none, tensor or block"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
