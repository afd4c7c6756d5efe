// What the two depthwise gradients (DepthwiseConv2dNativeBackpropInput and
// DepthwiseConv2dNativeBackpropFilter) share: TF runs both through one set
// of checks (depthwise_conv_grad_op.cc: the kernel constructor, then
// EXTRACT_AND_VERIFY_DIMENSIONS), in the same order and with the same texts
// apart from the label, and both ops' kernels take the same geometry. Each
// op checks its own tensor types first (spec/tf-ops.md sections 3 and 4).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gradtune/op_call.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "tf_checks.h"

namespace gradtune::internal {

// Which of the two ops: one operand gives its shape by value (input_sizes or
// filter_sizes), the other is a tensor (filter or input).
struct DepthwiseBackpropOp {
    const char *op;           // the op's name, for CallInfo
    const char *label;        // TF's label: "DepthwiseConv2DBackpropInput" / "...Filter"
    const char *sizes_name;   // "input_sizes" or "filter_sizes"
    const char *sizes_label;  // TF's rank text names "Conv2DBackpropInput" / "Conv2DBackpropFilter"
    bool sizes_are_input;     // true: the sizes give the input's shape, else the filter's
};

// The call, as both ops see it.
struct DepthwiseBackpropCall {
    const DepthwiseBackpropOp &op;
    const ConstTensorRef &sizes;   // the 1-D int32 shape operand
    const ConstTensorRef &tensor;  // the other operand: the filter (sizes are the input's) or the input
    const ConstTensorRef &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding, data_format;
    const std::vector<int> &explicit_paddings, &dilations;
};

// What the checks found: the kernels' geometry and the call's description.
// The output is the operand the sizes describe, of the tensor's dtype.
struct DepthwiseBackpropPrepared {
    CallInfo info;
    std::vector<int64_t> input_shape, filter_shape;  // data_format order; [FH, FW, C, M]
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int64_t stride = 1, dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: out_backprop or the tensor operand is empty
};

// TF's checks from the padding attr on, in TF's order with TF's texts.
Status PrepareDepthwiseBackprop(const DepthwiseBackpropCall &call, DepthwiseBackpropPrepared *p);

// The same with the typed API's strides, padding and Attrs.
template <typename Attrs>
Status PrepareDepthwiseBackprop(const DepthwiseBackpropOp &op, const ConstTensorRef &sizes,
                                const ConstTensorRef &tensor, const ConstTensorRef &out_backprop,
                                const std::vector<int> &strides, std::string_view padding, const Attrs &attrs,
                                DepthwiseBackpropPrepared *p) {
    return PrepareDepthwiseBackprop({op, sizes, tensor, out_backprop, strides, padding, attrs.data_format_,
                                     attrs.explicit_paddings_, attrs.dilations_},
                                    p);
}

}  // namespace gradtune::internal
