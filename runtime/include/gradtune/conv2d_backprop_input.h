// Conv2DBackpropInput: the gradient of Conv2D with respect to its input
// (docs/tf-ops.md section 6), with TF's inputs, attrs, validation order and
// error texts. Policy (docs/tf-ops.md section 15): NHWC and NCHW, dilations and
// grouped filters work on every device (TF's CPU kernel refuses all three);
// invalid values are still refused with TF's kind and text.
//
//   input_sizes   int32 [4] (the shape of `input`, in data_format order)
//                 or [2] ([H, W]; batch from out_backprop, depth = filter dim 2)
//   filter        T [FH, FW, C / G, O]  (HWIO; G groups when C != filter dim 2)
//   out_backprop  T [N, OH, OW, O] (NHWC) or [N, O, OH, OW] (NCHW)
//   output        T of shape input_sizes
// T is half, bfloat16, float, double or int32 (int32 accumulates in int32
// and wraps on overflow).
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   Conv2DBackpropInput::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct Conv2DBackpropInputAttrs : DenseConvolutionAttrs<Conv2DBackpropInputAttrs> {};

class Conv2DBackpropInput
    : public ConvolutionOp<Conv2DBackpropInput, DenseConvolutionShortcuts<Conv2DBackpropInputAttrs>, 3> {
public:
    // Compute(input_sizes, filter, out_backprop, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the gradient into `output`,
    // which must have dtype T and the shape input_sizes describes, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
