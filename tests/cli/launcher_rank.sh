#!/usr/bin/env bash
# launcher_rank.sh: under a parallel launcher (mpirun, srun) the ranks share one stderr, so
# each trace line says "[gemm] rank=N ..." and each log line "[gemm] [level] rank N: ...",
# the rank read from the launcher's variables (dispatch/launcher.hpp); without one, the lines
# are as ever.
# usage: launcher_rank.sh SCENARIO GEMM
. "$(dirname "$0")/cli_lib.sh"
scenario=$1 gemm=$2

rank_vars=(OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK MV2_COMM_WORLD_RANK SLURM_PROCID)
unset_ranks=()
for v in "${rank_vars[@]}"; do unset_ranks+=(-u "$v"); done
# A file that is not a tune cache: the library warns that it does not use it.
printf 'not a tune cache\n' >"$work/not-a-cache.txt"

# traced_call VAR=VALUE...: one traced gemm bench call of cpu_omp, with only the given rank
# variables set.
traced_call() {
    run_expect 0 env "${unset_ranks[@]}" "$@" GEMM_VERBOSE=1 GEMM_TUNE_CACHE="$work/not-a-cache.txt" \
        "$gemm" bench 8 --backends cpu_omp "${quick_bench[@]}"
}

# tagged N: every trace and warning line names rank N.
tagged() {
    expect_line err "^\[gemm\] rank=$1 backend=cpu_omp "
    expect_line err "^\[gemm\] \[warning\] rank $1: tune cache "
    ! grep -E '^\[gemm\]' "$work/err" | grep -Evq "^\[gemm\] (rank=$1 |\[[a-z]+\] rank $1: )" ||
        fail "a line of the library's does not name rank $1"
}

case $scenario in
open_mpi)
    traced_call OMPI_COMM_WORLD_RANK=3
    tagged 3
    ;;
others)
    for var in PMIX_RANK PMI_RANK MV2_COMM_WORLD_RANK SLURM_PROCID; do
        traced_call "$var=12"
        tagged 12
    done
    ;;
first_set_wins)
    traced_call OMPI_COMM_WORLD_RANK=2 SLURM_PROCID=7
    tagged 2
    ;;
not_a_rank)
    # Not whole numbers from 0: not a rank; the next variable is read.
    for value in abc -1 '' 3x 99999999999; do
        traced_call "OMPI_COMM_WORLD_RANK=$value" SLURM_PROCID=4
        tagged 4
    done
    traced_call OMPI_COMM_WORLD_RANK=abc
    expect_line err "^\[gemm\] backend=cpu_omp "
    ! grep -q 'rank' "$work/err" || fail "a value that is not a rank tagged a line"
    ;;
bound)
    # A launcher binds each rank to its cores (mpirun --bind-to core, srun --cpu-bind): cpu_omp
    # takes as many threads as the rank's affinity mask holds, not the node's every core.
    command -v taskset >/dev/null || skip "no taskset (Debian: util-linux)"
    [ "$(nproc --all)" -ge 2 ] || skip "one CPU: binding cannot narrow it"
    run_expect 0 env -u OMP_NUM_THREADS taskset -c 0 env OMPI_COMM_WORLD_RANK=1 "$gemm" info
    expect_line out "^  cpu_omp +yes +.*, 1 thread \(the caller's\)$"
    run_expect 0 env -u OMP_NUM_THREADS taskset -c 0,1 env OMPI_COMM_WORLD_RANK=1 "$gemm" info
    expect_line out "^  cpu_omp +yes +.*, 2 threads \(the caller and 1 pool thread\)$"
    ;;
none)
    traced_call
    expect_line err "^\[gemm\] backend=cpu_omp "
    expect_line err "^\[gemm\] \[warning\] tune cache "
    ! grep -q 'rank' "$work/err" || fail "a line names a rank without a launcher"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
