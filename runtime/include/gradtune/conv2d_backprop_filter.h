// Conv2DBackpropFilter: the gradient of Conv2D with respect to its filter
// (docs/tf-ops.md section 7), with TF's inputs, attrs, validation order and
// error texts. Policy (docs/tf-ops.md section 15): NHWC and NCHW, dilations and
// grouped filters work on every device (TF's CPU kernel refuses all three);
// invalid values are still refused with TF's kind and text; an empty input or
// out_backprop gives zeros.
//
//   input         T [N, H, W, C] (NHWC) or [N, C, H, W] (NCHW)
//   filter_sizes  int32 [4]: the filter's shape [FH, FW, C / G, O] (HWIO; G
//                 groups when C != filter_sizes[2])
//   out_backprop  T [N, OH, OW, O] (NHWC) or [N, O, OH, OW] (NCHW)
//   output        T of shape filter_sizes
// T is half, bfloat16, float or double.
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   Conv2DBackpropFilter::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct Conv2DBackpropFilterAttrs : DenseConvolutionAttrs<Conv2DBackpropFilterAttrs> {};

class Conv2DBackpropFilter
    : public ConvolutionOp<Conv2DBackpropFilter, DenseConvolutionShortcuts<Conv2DBackpropFilterAttrs>, 3> {
public:
    // Compute(input, filter_sizes, out_backprop, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the gradient into `output`,
    // which must have dtype T and shape filter_sizes, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
