// DepthwiseConv2dNativeBackpropFilter: the gradient of DepthwiseConv2dNative
// with respect to its filter (docs/tf-ops.md section 4), with TF's inputs,
// attrs, validation order and error texts. Policy (docs/tf-ops.md section 15):
// NHWC and NCHW, real dilated gradients, zeros where TF leaves the output
// uninitialised (empty out_backprop, e.g. N = 0).
//
//   input         T [N, H, W, C] (NHWC) or [N, C, H, W] (NCHW)
//   filter_sizes  int32 [4]     the shape of the filter, [FH, FW, C, M]
//   out_backprop  T [N, OH, OW, C*M] (NHWC) or [N, C*M, OH, OW] (NCHW)
//   output        T of shape filter_sizes
// T is half, bfloat16, float or double. The result is deterministic: the
// same call gives the same bits whatever the number of threads.
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   DepthwiseConv2dNativeBackpropFilter::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeBackpropFilterAttrs : ConvolutionAttrs<DepthwiseConv2dNativeBackpropFilterAttrs> {};

class DepthwiseConv2dNativeBackpropFilter
    : public ConvolutionOp<DepthwiseConv2dNativeBackpropFilter,
                           ConvolutionShortcuts<DepthwiseConv2dNativeBackpropFilterAttrs>, 3> {
public:
    // Compute(input, filter_sizes, out_backprop, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the gradient into `output`,
    // which must have dtype T and shape filter_sizes, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
