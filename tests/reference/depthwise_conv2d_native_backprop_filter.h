// Reference: DepthwiseConv2dNativeBackpropFilter, a loop over input pixels.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// DepthwiseConv2dNativeBackpropFilter (spec 4): returns dF [FH,FW,C,M] from
// input [N,H,W,C] and out_backprop [N,OH,OW,C*M]. It walks the input pixels
// and, for each filter tap, finds the output position that read the pixel
// through that tap (the generator walks the output positions instead).
std::vector<double> depthwise_conv2d_native_backprop_filter(const std::vector<double> &input,
                                                            const std::vector<int64_t> &in_shape,
                                                            const std::vector<int64_t> &filter_shape,
                                                            const std::vector<double> &out_backprop,
                                                            const std::vector<int64_t> &out_shape,
                                                            const Geometry2D &g);

}  // namespace gradtune::reference
