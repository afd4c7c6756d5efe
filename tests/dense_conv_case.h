// The case the dense convolution gradients' tests share (Conv2DBackpropInput,
// Conv2DBackpropFilter): the NHWC sizes and geometry of one call, and how it
// reads in either layout.
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

inline bool is_nchw(const std::string &layout) {
    return layout == "NCHW";
}

// An NHWC shape in `layout` order.
inline std::vector<int64_t> in_layout(const std::vector<int64_t> &s, const std::string &layout) {
    return is_nchw(layout) ? std::vector<int64_t>{s[0], s[3], s[1], s[2]} : s;
}

// A (row, column) attr in `layout` order, 1 for batch and depth.
inline std::vector<int> spatial_attr(int64_t rows, int64_t cols, const std::string &layout) {
    const int r = static_cast<int>(rows), c = static_cast<int>(cols);
    return is_nchw(layout) ? std::vector<int>{1, 1, r, c} : std::vector<int>{1, r, c, 1};
}

// The case's optional attrs (data_format, dilations, explicit paddings) for
// Op's typed API.
template <typename Op>
typename Op::Attrs attrs_of(const DenseConvCase &k, const std::string &layout) {
    auto attrs = Op::DataFormat(layout).Dilations(spatial_attr(k.dilation_h, k.dilation_w, layout));
    if (k.padding == "EXPLICIT") {
        auto [t, b, l, r] = k.pads;
        attrs = attrs.ExplicitPaddings(is_nchw(layout) ? std::vector<int>{0, 0, 0, 0, t, b, l, r}
                                                       : std::vector<int>{0, 0, t, b, l, r, 0, 0});
    }
    return attrs;
}

}  // namespace gradtune::testing
