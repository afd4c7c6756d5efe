// The thread pool that runs the kernels' parallel loops (Halide's
// halide_do_par_for, installed by install_halide_handlers()).
//
// Why not Halide's own pool: its workers go to sleep on a condition variable
// a few microseconds after each parallel loop, and waking them again costs
// tens of microseconds on the virtual machines this project runs on. A kernel
// of a fraction of a millisecond runs two or three parallel loops per call,
// so the second core joined late every time: Conv2DBackpropFilter's ResNet-50
// 1x1 layer at N=1 took 0.43 ms with Halide's pool and 0.36 ms with this one
// (Sapphire Rapids, 2 threads, the same kernel in one process). Here the
// workers spin for a short while (GRADTUNE_SPIN_US, default 100
// microseconds) before they sleep, as OpenMP runtimes do, so back-to-back
// loops and calls find them awake.
//
// The thread count is Halide's (HL_NUM_THREADS, halide_set_num_threads),
// read at every call. A parallel loop started from inside a task (nested
// parallelism) or while another thread's loop runs goes to Halide's own pool,
// which handles both.
#pragma once

#include <HalideRuntime.h>

#include "gradtune/run_options.h"

namespace gradtune::internal {

// halide_do_par_for's contract: runs task(user_context, i, closure) for i in
// [min, min + size) and returns the first non-zero result (0 when all
// succeed).
int pool_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure);

// The same loop on threads the caller lends (RunOptions::parallel): the
// calling thread and up to runner.Threads() - 1 helpers claim iterations one
// at a time; it returns when every iteration has run, waiting only for those
// a helper has started. Nested loops (from inside a task) go to the runner
// too.
int runner_do_par_for(ParallelRunner &runner, void *user_context, halide_task_t task, int min, int size,
                      uint8_t *closure);

// The threads a parallel loop runs on (the caller included): what
// halide_set_num_threads set, else Halide's default (HL_NUM_THREADS, else
// the host's cores). The tuner and the benchmark report it.
int pool_thread_count();

}  // namespace gradtune::internal
