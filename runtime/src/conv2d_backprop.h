// What the two Conv2D gradients (Conv2DBackpropInput and
// Conv2DBackpropFilter) share once TF's checks have passed: the kernels'
// geometry, the call's description for dispatch, the int32 limits and the
// kernel call. Their kernels take the same geometry and one tensor operand
// (the filter, or the input) besides out_backprop. Each op keeps its own
// checks, in TF's order (docs/tf-ops.md sections 6 and 7).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "conv_backprop_shape.h"
#include "gradtune/op_call.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "halide_call.h"
#include "tf_checks.h"

namespace gradtune::internal {

// What the checks found: the kernels' geometry and the call's description
// (info.output_shapes[0] is the output's shape).
struct Conv2DBackpropPrepared {
    CallInfo info;
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t groups = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: an operand is empty
};

// Whether every index the kernel computes in one spatial dimension fits in
// int32 (Halide's index type): the padded input, the effective filter and a
// stride of slack.
bool FitsKernelIndices(const tf::ConvBackpropSpatialDimension &d);

// The geometry and description of a call that passed TF's checks: `op`, the
// output's dtype and shape, the filter's shape ([FH, FW, Cg, O]), the legal
// groups and TF's dimensions; strides, dilations and explicit paddings in
// data_format order (p->format is already set).
void DescribeConv2DBackprop(const char *op, DataType dtype, const std::vector<int64_t> &output_shape,
                            const std::vector<int64_t> &filter_shape, int64_t groups,
                            const tf::ConvBackpropDimensions &dims, tf::Padding padding,
                            const std::vector<int> &explicit_paddings, const std::vector<int> &strides,
                            const std::vector<int> &dilations, Conv2DBackpropPrepared *p);

// What both ops' Execute() would refuse, from the output's element count:
// tensors of 2**31 or more elements (int32 Halide indices).
inline Status Conv2DBackpropRefusal(const Conv2DBackpropPrepared &p, int64_t output_elements,
                                    const ConstTensorRef &tensor, const ConstTensorRef &out_backprop) {
    if (output_elements == 0 || p.zeros) return Status::OK();
    return check_int32_elements({output_elements, out_backprop.num_elements(), tensor.num_elements()});
}

// Both ops' Execute(): zeros where no kernel needs to run, else the kernel,
// whose Halide signature (the op's generated header, so that a mismatch is a
// compile error) takes the geometry, then the tensor operand, out_backprop
// and the output. Halide dimension orders (innermost first): activations
// (c, w, h, n); a filter [FH, FW, Cg, O] as (o, ci, fw, fh). The tensor
// operand is the filter when the output is the input gradient
// (`output_is_input`), else the input; the output is the other one.
template <typename KernelSignature>
Status ExecuteConv2DBackprop(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                             const ConstTensorRef &out_backprop, const TensorRef &output, const RunOptions &options) {
    if (output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Conv2DBackpropRefusal(p, output.num_elements(), tensor, out_backprop));
    KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));
    const std::array<int, 4> activations = activation_order(p.format), filter = {3, 2, 1, 0};
    HalideBuffer tensor_buffer(tensor.dtype, tensor.shape, tensor.data, output_is_input ? filter : activations);
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, activations);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, output_is_input ? activations : filter);
    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride_rows), static_cast<int32_t>(p.stride_cols),
        static_cast<int32_t>(p.dilation_rows), static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.groups),
        static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left), tensor_buffer.get(),
        out_backprop_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {tensor_buffer.get(), out_backprop_buffer.get()});
}

}  // namespace gradtune::internal
