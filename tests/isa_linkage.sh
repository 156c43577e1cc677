#!/usr/bin/env bash
# isa_linkage.sh: cpu_omp's files built with ISA flags (-mavx2, -mavx512f, ...) define no weak
# function. The SIMD kernels are templates shared by those files (microkernel_tile.hpp and the
# others), each instantiated over a vector type of an unnamed namespace so that every copy is
# local to its file; a weak definition (an inline function or a template instantiation of
# external linkage) is one the linker may pick for every file that uses it, and code built for
# AVX-512 would then run where the CPU check chose the generic or AVX2 path.
# usage: isa_linkage.sh NM OBJECTS (cpu_omp's object files, separated by ':')
set -euo pipefail
nm=$1 objects=$2
. "$(dirname "$0")/cli/cli_lib.sh"  # skip and fail

command -v "$nm" >/dev/null 2>&1 || skip "no nm to list the objects' symbols with"
isa_objects=$(tr ':' '\n' <<<"$objects" | grep -E '/(microkernel|conversions)_avx[0-9a-z_]*\.cpp\.o$' || true)
[ -n "$isa_objects" ] || fail "no ISA object (microkernel_avx*, conversions_avx*) among: $objects"
weak=0
for object in $isa_objects; do
    # W and w: weak definitions other than data (V and v are weak data, such as the exception
    # tables' DW.ref.__gxx_personality_v0, and hold no instructions).
    found=$("$nm" --defined-only -C "$object" | awk '$2 ~ /^[Ww]$/') || fail "$nm could not read $object"
    if [ -n "$found" ]; then
        echo "$object:"
        sed 's/^/  /' <<<"$found"
        weak=$((weak + $(wc -l <<<"$found")))
    fi
done
[ "$weak" -eq 0 ] || fail "$weak weak functions in the ISA objects"
echo "ok: no weak function in $(wc -w <<<"$isa_objects") ISA objects"
