// Reference: Conv2DBackpropInput, a scatter loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2DBackpropInput (spec 6): returns dIn [N,H,W,C] from filter
// [FH,FW,C/G,O] and out_backprop [N,OH,OW,O], G = C / filter dim 2 groups, by
// scattering every out_backprop element through every tap to the input
// position the forward convolution read it from.
std::vector<double> conv2d_backprop_input(const std::vector<int64_t> &in_shape, const std::vector<double> &filter,
                                          const std::vector<int64_t> &filter_shape,
                                          const std::vector<double> &out_backprop,
                                          const std::vector<int64_t> &out_shape, const Geometry2D &g);

}  // namespace gradtune::reference
