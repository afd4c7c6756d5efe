// DepthwiseConv2dNativeBackpropInput: the gradient of DepthwiseConv2dNative
// with respect to its input (docs/tf-ops.md section 3), with TF's inputs,
// attrs, validation order and error texts. Policy (docs/tf-ops.md section 15):
// NHWC and NCHW, real dilated gradients, zeros for M = 0 and empty
// out_backprop.
//
//   input_sizes   int32 [4]     the shape of `input`, in data_format order
//   filter        T [FH, FW, C, M]
//   out_backprop  T [N, OH, OW, C*M] (NHWC) or [N, C*M, OH, OW] (NCHW)
//   output        T of shape input_sizes
// T is half, bfloat16, float or double.
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   DepthwiseConv2dNativeBackpropInput::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeBackpropInputAttrs : ConvolutionAttrs<DepthwiseConv2dNativeBackpropInputAttrs> {};

class DepthwiseConv2dNativeBackpropInput
    : public ConvolutionOp<DepthwiseConv2dNativeBackpropInput,
                           ConvolutionShortcuts<DepthwiseConv2dNativeBackpropInputAttrs>, 3> {
public:
    // Compute(input_sizes, filter, out_backprop, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the gradient into `output`,
    // which must have dtype T and shape input_sizes, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
