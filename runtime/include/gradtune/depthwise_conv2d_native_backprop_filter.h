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

#include <string>
#include <string_view>
#include <vector>

#include "gradtune/convolution_attrs.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes (convolution_attrs.h):
//   DepthwiseConv2dNativeBackpropFilter::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeBackpropFilterAttrs : ConvolutionAttrs<DepthwiseConv2dNativeBackpropFilterAttrs> {};

class DepthwiseConv2dNativeBackpropFilter : public ConvolutionShortcuts<DepthwiseConv2dNativeBackpropFilterAttrs> {
public:
    // Writes the gradient into `output`, which must have dtype T and shape
    // filter_sizes. On any error `output` is left untouched.
    static Status Compute(const ConstTensorRef &input, const ConstTensorRef &filter_sizes,
                          const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                          std::string_view padding, const TensorRef &output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());

    // Allocates the output.
    static Status Compute(const ConstTensorRef &input, const ConstTensorRef &filter_sizes,
                          const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                          std::string_view padding, Tensor *output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());
};

}  // namespace gradtune
