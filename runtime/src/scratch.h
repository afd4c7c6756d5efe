// What the detours (float32_detour.h, nhwc_detour.h, dilation_phases.h,
// group_blocks.h, taps_pointwise.h) share: per-thread scratch memory for the copies of a
// call's operands, and a parallel loop on the call's threads for making
// them.
#pragma once

#include <cstddef>
#include <functional>

#include "gradtune/run_options.h"

namespace gradtune::internal {

// The scratch buffers of a thread: a 16-bit call's float32 copies
// (float32_detour.h) and, inside it, the NCHW detour's and, inside that, the
// dilation detour's or the group blocks' filter, and inside any of those
// the products of a call run as its pointwise call (taps_pointwise.h).
enum class ScratchBuffer {
    float32_operand,
    float32_activation,
    float32_output,
    nhwc_operand,
    nhwc_activation,
    nhwc_output,
    phase_operand,
    phase_activation,
    phase_output,
    group_filter,
    taps_products,
    count
};

// One of a thread's scratch buffers, of at least `bytes`; nullptr when the
// memory cannot be had. A buffer grows to the largest request and is reused,
// so that a training loop's calls neither allocate nor fault pages in.
void *scratch_buffer(ScratchBuffer which, size_t bytes);

// The calling thread alone: the loops of a kernel run under it are serial
// (a kernel run by one task of parallel_tasks, beside the others).
class SerialRunner : public ParallelRunner {
public:
    int Threads() const override { return 1; }
    void Schedule(std::function<void()> work) override { work(); }
};

// task(0) ... task(count - 1), on the threads the call's kernels run on
// (RunOptions::parallel, else gradtune's pool), through the same parallel
// loop as the kernels'.
void parallel_tasks(int count, const std::function<void(int)> &task, ParallelRunner *parallel);

// row(0) ... row(count - 1), rows of `row_bytes` bytes of copies each, as
// parallel_tasks of at least 64 KB of rows (one task per row of a 5x6x64
// image cost more in the thread pool than the copies: 0.15 ms of a 0.54 ms
// call).
void parallel_row_chunks(int64_t count, int64_t row_bytes, const std::function<void(int64_t)> &row,
                         ParallelRunner *parallel);

}  // namespace gradtune::internal
