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

#include <string>
#include <string_view>
#include <vector>

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   DepthwiseConv2dNativeBackpropInput::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeBackpropInputAttrs : ConvolutionAttrs<DepthwiseConv2dNativeBackpropInputAttrs> {};

class DepthwiseConv2dNativeBackpropInput : public ConvolutionShortcuts<DepthwiseConv2dNativeBackpropInputAttrs> {
public:
    // Writes the gradient into `output`, which must have dtype T and shape
    // input_sizes. On any error `output` is left untouched.
    static Status Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                          const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                          std::string_view padding, const TensorRef &output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());

    // Allocates the output.
    static Status Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                          const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                          std::string_view padding, Tensor *output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());
};

}  // namespace gradtune
