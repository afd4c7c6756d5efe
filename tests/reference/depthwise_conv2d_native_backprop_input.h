// Reference: DepthwiseConv2dNativeBackpropInput, a scatter loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// DepthwiseConv2dNativeBackpropInput (spec 3): returns dIn [N,H,W,C] from
// filter [FH,FW,C,M] and out_backprop [N,OH,OW,C*M], by scattering every
// out_backprop element through every tap.
std::vector<double> depthwise_conv2d_native_backprop_input(const std::vector<int64_t> &in_shape,
                                                           const std::vector<double> &filter,
                                                           const std::vector<int64_t> &filter_shape,
                                                           const std::vector<double> &out_backprop,
                                                           const std::vector<int64_t> &out_shape,
                                                           const Geometry2D &g);

}  // namespace gradtune::reference
