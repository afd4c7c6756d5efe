// The case the dense convolution gradients' tests share (Conv2DBackpropInput,
// Conv2DBackpropFilter): the NHWC sizes and geometry of one call (its layout
// and attrs helpers are test_util.h's).
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace gradtune::testing {

struct DenseConvCase {
    int64_t N, H, W, C, O, FH, FW, G;  // G groups: the filter is [FH, FW, C / G, O]
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    std::string padding;
    std::array<int, 4> pads{};  // top, bottom, left, right (EXPLICIT only)

    std::string describe() const {
        std::ostringstream out;
        out << "N" << N << " H" << H << " W" << W << " C" << C << " O" << O << " G" << G << " f" << FH << "x" << FW
            << " s" << stride_h << "x" << stride_w << " d" << dilation_h << "x" << dilation_w << " " << padding;
        if (padding == "EXPLICIT") out << "(" << pads[0] << "," << pads[1] << "," << pads[2] << "," << pads[3] << ")";
        return out.str();
    }
    std::vector<int64_t> filter_shape() const { return {FH, FW, C / G, O}; }
};

}  // namespace gradtune::testing
