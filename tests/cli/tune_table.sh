#!/usr/bin/env bash
# tune_table.sh: the gemm tune table keeps its columns aligned whatever the widths of the
# problems' texts (a class like "col NN ld+pad misaligned beta!=0", a batched shape).
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

case $scenario in
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
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "passed: $scenario"
