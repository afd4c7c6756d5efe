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

#include <string>
#include <string_view>
#include <vector>

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes, built like TF's C++ ops:
//   DepthwiseConv2dNative::DataFormat("NCHW").Dilations({1, 1, 2, 2})
struct DepthwiseConv2dNativeAttrs {
    DepthwiseConv2dNativeAttrs DataFormat(std::string_view x) const {
        auto a = *this;
        a.data_format_ = std::string(x);
        return a;
    }
    DepthwiseConv2dNativeAttrs Dilations(std::vector<int> x) const {
        auto a = *this;
        a.dilations_ = std::move(x);
        return a;
    }
    DepthwiseConv2dNativeAttrs ExplicitPaddings(std::vector<int> x) const {
        auto a = *this;
        a.explicit_paddings_ = std::move(x);
        return a;
    }
    std::string data_format_ = "NHWC";
    std::vector<int> dilations_ = {1, 1, 1, 1};
    std::vector<int> explicit_paddings_ = {};
};

class DepthwiseConv2dNative {
public:
    using Attrs = DepthwiseConv2dNativeAttrs;
    static Attrs DataFormat(std::string_view x) { return Attrs().DataFormat(x); }
    static Attrs Dilations(std::vector<int> x) { return Attrs().Dilations(std::move(x)); }
    static Attrs ExplicitPaddings(std::vector<int> x) { return Attrs().ExplicitPaddings(std::move(x)); }

    // Writes the convolution into `output`, which must have dtype T and the
    // output shape above. On any error `output` is left untouched.
    static Status Compute(const ConstTensorRef &input, const ConstTensorRef &filter, const std::vector<int> &strides,
                          std::string_view padding, const TensorRef &output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());

    // Allocates the output.
    static Status Compute(const ConstTensorRef &input, const ConstTensorRef &filter, const std::vector<int> &strides,
                          std::string_view padding, Tensor *output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());
};

}  // namespace gradtune
