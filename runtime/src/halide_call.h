// Calling AOT-compiled Halide kernels from the runtime: buffer descriptors
// over caller memory, the per-call error context, and the device round trip
// for CUDA variants. Needs only the Halide runtime, never libHalide.
#pragma once

#include <HalideRuntime.h>

#include <array>
#include <string>
#include <vector>

#include "gradtune/device.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

// A 4-D halide_buffer_t over a dense row-major tensor. `order` lists, for each
// Halide dimension (innermost first), the tensor dimension it walks; e.g. an
// NHWC tensor seen as Halide (c, w, h, n) has order {3, 2, 1, 0}.
class HalideBuffer {
public:
    HalideBuffer(DataType dtype, const std::vector<int64_t> &shape, const void *data,
                 const std::array<int, 4> &order);
    halide_buffer_t *get() { return &buffer_; }

private:
    halide_buffer_t buffer_{};
    std::array<halide_dimension_t, 4> dims_{};
};

// Passed to kernels as user_context: the Halide error handler appends the
// runtime's messages here, so that each call gets its own.
struct CallContext {
    std::string error;
};

// Installs the error handler (once, thread-safe). Halide's default handler
// aborts the process; ours records the message in the call's CallContext.
void install_halide_handlers();

// Whether a CUDA device can be used; `why` says why not.
bool cuda_available(std::string *why);

// After a CUDA kernel: copies `output` back to host memory and frees the
// device copies of all buffers.
Status finish_cuda_call(CallContext *context, halide_buffer_t *output, const std::vector<halide_buffer_t *> &inputs);

// Turns a kernel's nonzero result into a Status.
Status kernel_status(int result, const CallContext &context, const std::string &kernel);

}  // namespace gradtune::internal
