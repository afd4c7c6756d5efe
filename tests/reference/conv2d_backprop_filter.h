// Reference: Conv2DBackpropFilter, the sum over out_backprop positions
// written directly from the spec's formula.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2DBackpropFilter (spec 7): returns dF [FH,FW,C/G,O] from input
// [N,H,W,C] and out_backprop [N,OH,OW,O], G = C / filter_shape[2] groups:
// every out_backprop element times the input element each tap read.
std::vector<double> conv2d_backprop_filter(const std::vector<double> &input, const std::vector<int64_t> &in_shape,
                                           const std::vector<int64_t> &filter_shape,
                                           const std::vector<double> &out_backprop,
                                           const std::vector<int64_t> &out_shape, const Geometry2D &g);

}  // namespace gradtune::reference
