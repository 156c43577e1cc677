// launcher.cpp: the launcher's rank variables.
#include "launcher.hpp"

#include <cerrno>
#include <climits>
#include <initializer_list>

namespace gemm {
namespace {

// The value of the first variable of names that holds a whole number from 0 to INT_MAX.
int first_rank(const char *(*get)(const char *), std::initializer_list<const char *> names) {
    for (const char *name : names) {
        const char *text = get(name);
        if (!text || !*text) continue;
        char *end = nullptr;
        errno = 0;
        const long value = std::strtol(text, &end, 10);
        if (errno == 0 && *end == '\0' && value >= 0 && value <= INT_MAX) return int(value);
    }
    return -1;
}

const char *environment(const char *name) { return std::getenv(name); }

}  // namespace

launch_rank read_launch_rank(const char *(*get)(const char *name)) {
    launch_rank r;
    r.rank = first_rank(get, {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"});
    r.local_rank =
        first_rank(get, {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
    return r;
}

const launch_rank &this_launch_rank() {
    static const launch_rank r = read_launch_rank(environment);
    return r;
}

}  // namespace gemm
