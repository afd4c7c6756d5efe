// Calling AOT-compiled Halide kernels from the runtime: buffer descriptors
// over caller memory, the per-call error context, and the device round trip
// for CUDA variants. Needs only the Halide runtime, never libHalide.
#pragma once

#include <HalideRuntime.h>

#include <array>
#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

#include "dispatch.h"
#include "gradtune/device.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "tf_checks.h"

namespace gradtune::internal {

// The Halide dimension order (innermost first) of the 2-D window ops'
// activations, (c, w, h, n), from an NHWC or an NCHW tensor; their filters
// are plain reversed orders, {3, 2, 1, 0}.
inline std::array<int, 4> activation_order(tf::DataFormat format) {
    return format == tf::DataFormat::kNHWC ? std::array<int, 4>{3, 2, 1, 0} : std::array<int, 4>{1, 3, 2, 0};
}

// A 4-D halide_buffer_t over a dense row-major tensor. `order` lists, for each
// Halide dimension (innermost first), the tensor dimension it walks; e.g. an
// NHWC tensor seen as Halide (c, w, h, n) has order {3, 2, 1, 0}. A `pitch`
// (> 0) makes it a slice of a wider tensor: its last dimension is `pitch`
// elements long in memory, of which the buffer sees the first shape[3]
// (group_blocks.h: a block of an NHWC tensor's channels).
class HalideBuffer {
public:
    HalideBuffer(DataType dtype, const std::vector<int64_t> &shape, const void *data,
                 const std::array<int, 4> &order, int64_t pitch = 0);
    halide_buffer_t *get() { return &buffer_; }

private:
    halide_buffer_t buffer_{};
    std::array<halide_dimension_t, 4> dims_{};
};

// Passed to kernels as user_context: the Halide error handler appends the
// runtime's messages here, so that each call gets its own.
struct CallContext {
    std::string error;
    ParallelRunner *parallel = nullptr;  // RunOptions::parallel: the threads the loops run on
};

// Installs the error handler and the parallel loops' runner (thread_pool.h:
// the call's ParallelRunner where it lends one, else gradtune's pool), once,
// thread-safe. Halide's default error handler aborts
// the process; ours records the message in the call's CallContext.
// It also applies GRADTUNE_MAX_CPU_ISA (cpu_features.h).
void install_halide_handlers();

// Whether a CUDA device can be used; `why` says why not.
bool cuda_available(std::string *why);

// After a CUDA kernel: copies `output` back to host memory and frees the
// device copies of all buffers.
Status finish_cuda_call(CallContext *context, halide_buffer_t *output, std::initializer_list<halide_buffer_t *> inputs);

// Turns a kernel's nonzero result into a Status.
Status kernel_status(int result, const CallContext &context, const std::string &kernel);

// Halide buffers index with int32: tensors of 2**31 or more elements are
// refused (Unimplemented) before any kernel runs.
Status check_int32_elements(std::initializer_list<int64_t> element_counts);

// Where no kernel needs to run: an empty `output`, or one that no input
// element reaches (`zeros`: every element a sum of nothing), which is
// zero-filled. True when `output` is complete.
bool output_without_kernel(const TensorRef &output, bool zeros);

// Everything around one kernel call that is the same for every op: the
// variant dispatch chooses, the device check, Halide errors routed to this
// call, the CUDA round trip and the GRADTUNE_VERBOSE line. An op's Execute():
//   KernelCall call;
//   GRADTUNE_RETURN_IF_ERROR(call.begin(info, options));
//   ... buffers ...
//   int result = call.kernel<Signature>()(call.user_context(), args...);
//   return call.finish(result, output, {inputs...});
class KernelCall {
public:
    // Chooses the variant for the call (dispatch.h) and checks the device.
    Status begin(const CallInfo &info, const RunOptions &options);
    // The chosen variant, cast back to the op's Halide signature.
    template <typename Signature>
    Signature kernel() const {
        return reinterpret_cast<Signature>(selection_.function);
    }
    void *user_context() { return &context_; }
    // The output channels of the chosen variant's register tile
    // (Selection::output_channel_tile).
    int64_t output_channel_tile() const { return selection_.output_channel_tile; }
    // The kernel's result as a Status; for CUDA, copies `output` back to the
    // host and frees the device copies of it and of `inputs`; then reports
    // the call when GRADTUNE_VERBOSE is set.
    Status finish(int result, halide_buffer_t *output, std::initializer_list<halide_buffer_t *> inputs);

private:
    const CallInfo *info_ = nullptr;
    Device device_ = Device::cpu;
    Selection selection_;
    CallContext context_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace gradtune::internal
