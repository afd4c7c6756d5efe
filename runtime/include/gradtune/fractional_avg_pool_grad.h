// FractionalAvgPoolGrad: the gradient of FractionalAvgPool (docs/tf-ops.md
// section 9), with TF's inputs, attrs, validation order and error texts.
//
//   orig_input_tensor_shape  int64 [4]   the shape of FractionalAvgPool's input, NHWC
//   out_backprop             T [N', OH, OW, C'] (N' <= N, C' <= C)
//   row_pooling_sequence     int64, >= OH + 1 values (any rank; extra values ignored)
//   col_pooling_sequence     int64, >= OW + 1 values
//   output                   T of shape orig_input_tensor_shape
// T is float, double, int32 or int64. Every cell's value is spread evenly
// over the input pixels it covers, accumulated in float64 and cast to T once
// (integers truncate toward zero), as TF does.
//
// Policy (docs/tf-ops.md section 15): an out_backprop with a larger batch or
// depth than orig_input_tensor_shape (TF writes out of bounds) is rejected with
// InvalidArgument; a smaller one leaves the rest of the output zero, as TF.
// Sequences with values beyond the input or decreasing values are accepted, as
// TF: cells are clamped to the input or empty.
#pragma once

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

// Optional attributes, built like TF's C++ ops:
//   FractionalAvgPoolGrad::Overlapping(true)
struct FractionalAvgPoolGradAttrs {
    FractionalAvgPoolGradAttrs Overlapping(bool x) const {
        auto a = *this;
        a.overlapping_ = x;
        return a;
    }
    bool overlapping_ = false;
};

class FractionalAvgPoolGrad {
public:
    using Attrs = FractionalAvgPoolGradAttrs;
    static Attrs Overlapping(bool x) { return Attrs().Overlapping(x); }

    // Writes the gradient into `output`, which must have dtype T and shape
    // orig_input_tensor_shape. On any error `output` is left untouched.
    static Status Compute(const ConstTensorRef &orig_input_tensor_shape, const ConstTensorRef &out_backprop,
                          const ConstTensorRef &row_pooling_sequence, const ConstTensorRef &col_pooling_sequence,
                          const TensorRef &output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions());

    // Allocates the output.
    static Status Compute(const ConstTensorRef &orig_input_tensor_shape, const ConstTensorRef &out_backprop,
                          const ConstTensorRef &row_pooling_sequence, const ConstTensorRef &col_pooling_sequence,
                          Tensor *output, const Attrs &attrs = Attrs(), const RunOptions &options = RunOptions());
};

}  // namespace gradtune
