// Reference: DepthwiseConv2dNative, a gather loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// DepthwiseConv2dNative (spec 2): in [N,H,W,C], filter [FH,FW,C,M] ->
// [N,OH,OW,C*M].
std::vector<double> depthwise_conv2d_native(const std::vector<double> &in, const std::vector<int64_t> &in_shape,
                                            const std::vector<double> &filter, const std::vector<int64_t> &filter_shape,
                                            int64_t out_rows, int64_t out_cols, const Geometry2D &g);

}  // namespace gradtune::reference
