// worker_pool.hpp: cpu_omp's own threads, which help a calling thread with its call and sleep
// when there is nothing to do.
#pragma once

namespace gemm::cpu_omp_detail {

// How many threads one call may use, the calling thread included: omp_get_max_threads(), so
// OMP_NUM_THREADS and omp_set_num_threads() keep their meaning for this backend; 1 inside an
// application's OpenMP region that may not nest another (as `#pragma omp parallel` would).
int call_threads();

// Runs work(context) on the calling thread and on each of up to `helpers` pool threads that
// joins before the job is closed; returns when the caller's run has returned and every helper
// that joined has returned. The job closes once the caller's own run returns: a helper that
// joins between that return and the close runs work too, finds nothing left and returns; one
// that wakes up after the close never touches the job. work must return once nothing is left
// for it to take, having finished what it took; it must not assume that any helper joins,
// and it must not throw (a helper has no caller to throw to): failures are values.
// Without a pool (it could not be made, or no thread could be started) the caller runs alone.
void run_with_helpers(int helpers, void (*work)(void *), void *context);

// run_with_helpers for a callable, on `threads` threads at most (the caller included).
template <class Work> void run_on_threads(int threads, Work &work) {
    static_assert(noexcept(work()), "pool work must not throw: declare the callable noexcept");
    if (threads <= 1) {
        work();
        return;
    }
    run_with_helpers(
        threads - 1, [](void *w) noexcept { (*static_cast<Work *>(w))(); }, &work);
}

}  // namespace gemm::cpu_omp_detail
