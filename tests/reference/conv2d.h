// Reference: Conv2D, a gather loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2D (spec 5): in [N,H,W,C], HWIO filter [FH,FW,Cg,O] with G = C / Cg
// groups (output channel o reads input channels g*Cg .. g*Cg + Cg - 1 of its
// group g = o / (O / G)) -> [N,OH,OW,O].
std::vector<double> conv2d(const std::vector<double> &in, const std::vector<int64_t> &in_shape,
                           const std::vector<double> &filter, const std::vector<int64_t> &filter_shape,
                           int64_t out_rows, int64_t out_cols, const Geometry2D &g);

}  // namespace gradtune::reference
