#include "reference/window.h"

#include <algorithm>

namespace gradtune::reference {

Window window(int64_t input, int64_t filter, int64_t dilation, int64_t stride, const std::string &padding,
              int64_t pad_before, int64_t pad_after) {
    const int64_t effective = (filter - 1) * dilation + 1;
    Window w;
    if (padding == "VALID") {
        w.output = (input - effective + stride) / stride;
    } else if (padding == "EXPLICIT") {
        w.pad_before = pad_before;
        w.pad_after = pad_after;
        w.output = (input + pad_before + pad_after - effective + stride) / stride;
    } else {  // SAME: output = ceil(input / stride), odd padding at the end
        w.output = (input + stride - 1) / stride;
        const int64_t needed = std::max<int64_t>(0, (w.output - 1) * stride + effective - input);
        w.pad_before = needed / 2;
        w.pad_after = needed - w.pad_before;
    }
    return w;
}

std::vector<double> nhwc_to_nchw(const std::vector<double> &x, const std::vector<int64_t> &s) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3];
    std::vector<double> y(x.size());
    for (int64_t b = 0; b < N; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t c = 0; c < C; c++) y[((b * C + c) * H + h) * W + w] = x[((b * H + h) * W + w) * C + c];
    return y;
}

std::vector<double> nchw_to_nhwc(const std::vector<double> &x, const std::vector<int64_t> &s) {
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
    std::vector<double> y(x.size());
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) y[((b * H + h) * W + w) * C + c] = x[((b * C + c) * H + h) * W + w];
    return y;
}

}  // namespace gradtune::reference
