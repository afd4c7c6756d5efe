// Conv2D: the forward convolution (docs/tf-ops.md section 5), with TF's inputs,
// attrs, validation order and error texts. Policy (docs/tf-ops.md section 15):
// NHWC and NCHW, dilations and groups on every device (TF's CPU kernel refuses
// NCHW).
//
//   input   T [N, H, W, C_in] (NHWC) or [N, C_in, H, W] (NCHW)
//   filter  T [FH, FW, C_in / G, C_out]   (HWIO; G groups, G divides C_out)
//   output  T [N, OH, OW, C_out] (NHWC) or [N, C_out, OH, OW] (NCHW)
// T is half, bfloat16, float, double or int32.
#pragma once

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   Conv2D::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct Conv2DAttrs : DenseConvolutionAttrs<Conv2DAttrs> {};

class Conv2D : public ConvolutionOp<Conv2D, DenseConvolutionShortcuts<Conv2DAttrs>, 2> {
public:
    // Compute(input, filter, strides, padding, output[, attrs, options])
    // (ConvolutionOp, convolution_attrs.h) writes the convolution into `output`,
    // which must have dtype T and the output shape above, or allocates it.
    // Run: its runtime half.
    static Status Run(const Call &call, const TensorRef &output);
    static Status Run(const Call &call, Tensor *output);
};

}  // namespace gradtune
