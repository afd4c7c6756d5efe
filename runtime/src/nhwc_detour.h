// NCHW calls on the NHWC kernels. Records and structure defaults are tuned
// in NHWC, TensorFlow's CPU layout; an NCHW call of a structure nothing was
// tuned for in NCHW falls to the generic NCHW variant, 10-50x slower than
// the NHWC kernels (a 32x32x96 depthwise input gradient at N=8: 10.8 ms
// against 0.16 ms in NHWC, Sapphire Rapids). Such a call runs on the NHWC
// variants instead: its activation operands are transposed to NHWC, the NHWC
// twin of the call is dispatched and run, and an activation output is
// transposed back, the transposes counted in the call's time. The copies live
// in per-thread scratch memory that grows to the largest call a thread has
// made and is reused (no allocation or page faults per call).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "gradtune/op_call.h"
#include "scratch.h"
#include "tf_checks.h"

namespace gradtune::internal {

// Whether an NCHW call runs on the NHWC kernels: dispatch would serve it with
// the generic NCHW variant while its NHWC twin has a tuned record or a
// structure default (or runs as undilated phases that have one). Never for a forced variant, an external kernel or a
// CUDA call (the GPU variants read NCHW as fast).
bool detour_to_nhwc(const CallInfo &info, const RunOptions &options);

// The NHWC twin of an NCHW call's description.
CallInfo nhwc_twin(const CallInfo &info);

// [N, C, H, W] -> [N, H, W, C] into `to` (the same element count), and
// back, on the call's threads (`parallel`: RunOptions::parallel).
void nchw_to_nhwc(const ConstTensorRef &from, void *to, ParallelRunner *parallel);
void nhwc_to_nchw(const void *from, const TensorRef &to, ParallelRunner *parallel);

// Runs an op's NHWC execution on NHWC copies of an NCHW call's operands:
// `execute(q, operand, activation, output)` with `q` the prepared call in
// NHWC (format and info). `activation` is an activation (out_backprop, or a
// forward op's input); `operand` is the other input, an activation where
// `operand_is_activation` (a filter gradient's input) and then the output is
// the filter (left as it is), else the filter and then the output is an
// activation. The caller's output is written only when the NHWC run succeeded.
template <typename Prepared, typename Execute>
Status run_on_nhwc(const Prepared &p, bool operand_is_activation, const ConstTensorRef &operand,
                   const ConstTensorRef &activation, const TensorRef &output, ParallelRunner *parallel,
                   Execute execute) {
    auto nhwc_shape = [](const std::vector<int64_t> &s) { return std::vector<int64_t>{s[0], s[2], s[3], s[1]}; };
    auto bytes = [](const ConstTensorRef &t) { return static_cast<size_t>(t.num_elements()) * DataTypeSize(t.dtype); };
    void *operand_copy = operand_is_activation ? scratch_buffer(ScratchBuffer::nhwc_operand, bytes(operand)) : nullptr;
    void *activation_copy = scratch_buffer(ScratchBuffer::nhwc_activation, bytes(activation));
    void *output_copy = operand_is_activation ? nullptr : scratch_buffer(ScratchBuffer::nhwc_output, bytes(output));
    if ((operand_is_activation && !operand_copy) || !activation_copy || (!operand_is_activation && !output_copy))
        return ResourceExhausted("gradtune: no memory for the NHWC copies of an NCHW call");
    Prepared q = p;
    q.format = tf::DataFormat::kNHWC;
    q.info = nhwc_twin(p.info);
    ConstTensorRef nhwc_operand = operand;
    if (operand_is_activation) {
        nchw_to_nhwc(operand, operand_copy, parallel);
        nhwc_operand = {operand.dtype, nhwc_shape(operand.shape), operand_copy};
    }
    nchw_to_nhwc(activation, activation_copy, parallel);
    const ConstTensorRef nhwc_activation{activation.dtype, nhwc_shape(activation.shape), activation_copy};
    if (operand_is_activation) return execute(q, nhwc_operand, nhwc_activation, output);  // the output is a filter
    const TensorRef nhwc_output{output.dtype, nhwc_shape(output.shape), output_copy};
    GRADTUNE_RETURN_IF_ERROR(execute(q, nhwc_operand, nhwc_activation, nhwc_output));
    nhwc_to_nchw(nhwc_output.data, output, parallel);
    return Status::OK();
}

}  // namespace gradtune::internal
