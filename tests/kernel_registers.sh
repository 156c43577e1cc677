#!/usr/bin/env bash
# kernel_registers.sh: cpu_omp's AVX-512 f32 and f64 microkernels keep their operands in
# registers: no FMA of theirs reads the stack. GCC's default register allocator keeps one vector
# of A on the stack, and the kernels then run at about 58 % of the FMA peak instead of 84 %
# (backends/cpu_omp/CMakeLists.txt); a compiler or flag change that brings that back fails here.
# usage: kernel_registers.sh OBJDUMP OBJECTS (cpu_omp's object files, separated by ':')
set -euo pipefail
objdump=$1 objects=$2
. "$(dirname "$0")/cli/cli_lib.sh"  # skip and fail

command -v "$objdump" >/dev/null 2>&1 || skip "no objdump to disassemble the kernels with"
object=$(tr ':' '\n' <<<"$objects" | grep '/microkernel_avx512\.cpp\.o' || true)
[ -n "$object" ] || fail "no microkernel_avx512 object among: $objects"
# The kernel rounding into bf16 by AVX512-BF16, where the compiler builds it.
bf16_object=$(tr ':' '\n' <<<"$objects" | grep '/microkernel_avx512_bf16\.cpp\.o' || true)
listing=$("$objdump" -d --no-show-raw-insn -C "$object" ${bf16_object:+"$bf16_object"}) ||
    fail "$objdump could not read $object $bf16_object"

# The functions that hold the two kernels' loops: the exported entry points (with the f32
# kernel's into a 16-bit C) and whatever instantiation of multiply_tile they call (or nothing,
# where it is inlined into them), whatever C's type; and the
# small kernel's full tiles (microkernel_small.hpp), the same 24 accumulators.
report=$(awk '
    /^[0-9a-f]+ <.*>:$/ {
        name = $0
        kernel = name ~ /microkernel_avx512(bf16)?_f32_32x12|microkernel_avx512_f64_16x12|multiply_tile<.*zmm<(float|double)>, 2, 12[,>]|small_tile<.*zmm<(float|double)>, 2, 12>/
        if (kernel) found++
        next
    }
    kernel && /v?fn?m(add|sub)[0-9]+p[sd]/ { fmas++; if (/\(%rsp\)/) { spilled++; print "  " $0 } }
    END { printf "functions %d fmas %d from the stack %d\n", found, fmas, spilled }' <<<"$listing")
echo "$report"
summary=$(tail -n 1 <<<"$report")
read -r _ functions _ fmas _ _ _ from_stack <<<"$summary"
[ "$functions" -ge 2 ] || fail "the f32 and f64 kernels are not in $object"
[ "$fmas" -ge 48 ] || fail "fewer FMAs than two kernels of 24 accumulators hold ($fmas)"
[ "$from_stack" -eq 0 ] || fail "$from_stack FMAs read an operand from the stack"
echo "ok: $fmas FMAs, none reading the stack"
