// DepthwiseConv2dNative: the forward depthwise convolution (docs/tf-ops.md
// section 2), with TF's inputs, attrs, validation order and error texts. Policy
// (docs/tf-ops.md section 15): NHWC and NCHW on the CPU, and real dilations,
// where TF's CPU kernel refuses both.
//
//   input   T [N, H, W, C] (NHWC) or [N, C, H, W] (NCHW)
//   filter  T [FH, FW, C, M]
//   output  T [N, OH, OW, C*M] (NHWC) or [N, C*M, OH, OW] (NCHW);
//           output channel c*M + m is input channel c times filter[.., c, m]
// T is half, bfloat16, float or double.
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   DepthwiseConv2dNative::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeAttrs : ConvolutionAttrs<DepthwiseConv2dNativeAttrs> {};

class DepthwiseConv2dNative
    : public ConvolutionOp<DepthwiseConv2dNative, ConvolutionShortcuts<DepthwiseConv2dNativeAttrs>, 2> {
public:
    // Compute(input, filter, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the convolution into `output`,
    // which must have dtype T and the output shape above, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
