// launcher.hpp: the rank a parallel launcher (mpirun, srun, ...) gave this process, read from
// the environment it sets: the trace and the log name the rank, and a rank offloads to its
// node's GPU by its local rank.
#pragma once

#include <cstdlib>

namespace gemm {

struct launch_rank {
    int rank = -1;        // among the job's processes; -1: not started by a launcher we know
    int local_rank = -1;  // among the job's processes on this node; -1: not said
};

// The first of each list that is set to a whole number 0 or more, through get (getenv's
// shape): rank from OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (PMIx launchers), PMI_RANK
// (MPICH, Intel MPI), MV2_COMM_WORLD_RANK (MVAPICH2), SLURM_PROCID (srun); local rank from
// OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID.
// Other values (empty, negative, not a number) are not a rank: the next variable is read.
launch_rank read_launch_rank(const char *(*get)(const char *name));

// This process's, read once from its environment.
const launch_rank &this_launch_rank();

}  // namespace gemm
