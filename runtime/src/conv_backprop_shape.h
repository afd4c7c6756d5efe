// Shape logic shared by the Conv2D gradients (Conv2DBackpropInput and
// Conv2DBackpropFilter), reproduced from TF's conv_grad_shape_utils.cc and
// TensorShapeUtils::MakeShape with TF's error kinds and texts
// (docs/tf-ops.md sections 1.4, 1.5 and 6).
//
// Differences from TF, all deliberate (docs/tf-ops.md section 15):
//   - the callers pass the call's real dilations (TF's CPU kernels force 1),
//   - ConvBackpropSpatialDimension also keeps the forward pads (TF recomputes
//     them with GetWindowedOutputSizeVerbose right after this call).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "tf_checks.h"

namespace gradtune::tf {

// One spatial dimension of a Conv2D gradient.
struct ConvBackpropSpatialDimension {
    int64_t input_size = 0, filter_size = 0, output_size = 0, stride = 1, dilation = 1;
    // The "transposed convolution" view (TF's fields): the out_backprop
    // zero-stuffed to expanded_output_size = (O-1)*stride + 1 and padded by
    // pad_before / pad_after gives the input gradient by a stride-1
    // correlation with the rotated filter.
    int64_t expanded_output_size = 0, pad_before = 0, pad_after = 0;
    // The forward convolution's pads (gradtune's addition): pad_top/pad_left
    // are what the kernels need.
    int64_t forward_pad_before = 0, forward_pad_after = 0;
};

struct ConvBackpropDimensions {
    ConvBackpropSpatialDimension spatial_dims[2];  // rows, then columns
    int64_t batch_size = 0, in_depth = 0, out_depth = 0;
};

// ConvBackpropComputeDimensionsV2 for two spatial dimensions: checks ranks,
// batch, depths and spatial sizes of (input, filter, out_backprop) in TF's
// order with TF's texts, prefixed with `label` (TF's CPU kernels use
// "Conv2DCustomBackpropInput" / "Conv2DCustomBackpropFilter"). Shapes are in
// data_format order; the filter is HWIO. `dilations`, `strides` and
// `explicit_paddings` are indexed in data_format order, as TF's attrs.
Status ConvBackpropComputeDimensionsV2(std::string_view label, const std::vector<int64_t> &input_shape,
                                       const std::vector<int64_t> &filter_shape,
                                       const std::vector<int64_t> &out_backprop_shape,
                                       const std::vector<int> &dilations, const std::vector<int> &strides,
                                       Padding padding, const std::vector<int> &explicit_paddings,
                                       DataFormat data_format, ConvBackpropDimensions *dims);

// TensorShapeUtils::MakeShape over a 1-D int32 tensor: "Dimension <value>
// must be >= 0" (TF prints the value, not the index), "Shape [a,b,...] would
// have more than 2**63 - 1 elements", "Too many dimensions".
Status MakeShape(const ConstTensorRef &sizes, std::vector<int64_t> *shape);

// Conv2DBackpropComputeInputShape: input_sizes with 4 values (MakeShape), or
// 2 values [H, W] with batch from out_backprop and depth = filter dim 2 (as
// TF, which its own comment calls wrong for grouped convolutions).
// `out_backprop_shape` must be 4-D (the caller checked); `filter_shape` may
// have any rank (a bad one is reported later by ConvBackpropComputeDimensionsV2).
Status Conv2DBackpropComputeInputShape(const ConstTensorRef &input_sizes, const std::vector<int64_t> &filter_shape,
                                       const std::vector<int64_t> &out_backprop_shape, DataFormat data_format,
                                       std::vector<int64_t> *input_shape);

// The constructor checks of TF's Conv2D gradient kernels
// (conv_grad_input_ops.h / conv_grad_filter_ops.cc) under gradtune's policy:
// strides and dilations, 4 values each, 1 in the batch and depth dimensions,
// positive elsewhere (any positive dilation is supported; TF's CPU kernels
// refuse all but 1).
// `batch_depth_kind` is the error kind TF uses for a batch/depth stride or
// dilation (Unimplemented in Conv2DBackpropInput, InvalidArgument in
// Conv2DBackpropFilter).
Status CheckConv2DBackpropStrides(const std::vector<int> &strides, DataFormat format, StatusCode batch_depth_kind);
Status CheckConv2DBackpropDilations(const std::vector<int> &dilations, DataFormat format,
                                    StatusCode batch_depth_kind);

// Groups of a Conv2D gradient whose input depth is a multiple of the filter's
// input depth (checked by ConvBackpropComputeDimensionsV2): G = in_depth /
// filter_in_depth. Legal (supported, docs/tf-ops.md section 15.1) when G >= 1
// and the output depth is a multiple of G; returns 0 otherwise.
int64_t LegalConv2DGroups(int64_t in_depth, int64_t filter_in_depth, int64_t out_depth);

}  // namespace gradtune::tf
