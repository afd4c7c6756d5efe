#include "conv_reference.h"

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

std::vector<double> depthwise_conv2d(const std::vector<double> &in, const std::vector<int64_t> &s,
                                     const std::vector<double> &filter, const std::vector<int64_t> &fs,
                                     int64_t out_rows, int64_t out_cols, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], M = fs[3];
    std::vector<double> out(N * out_rows * out_cols * C * M, 0.0);
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < out_rows; oh++)
            for (int64_t ow = 0; ow < out_cols; ow++)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t m = 0; m < M; m++) {
                        double sum = 0;
                        for (int64_t fh = 0; fh < FH; fh++)
                            for (int64_t fw = 0; fw < FW; fw++) {
                                const int64_t h = oh * g.stride_rows - g.pad_top + fh * g.dilation_rows;
                                const int64_t w = ow * g.stride_cols - g.pad_left + fw * g.dilation_cols;
                                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                                sum += in[((b * H + h) * W + w) * C + c] * filter[((fh * FW + fw) * C + c) * M + m];
                            }
                        out[((b * out_rows + oh) * out_cols + ow) * C * M + c * M + m] = sum;
                    }
    return out;
}

std::vector<double> depthwise_conv2d_backprop_input(const std::vector<int64_t> &s, const std::vector<double> &filter,
                                                    const std::vector<int64_t> &fs,
                                                    const std::vector<double> &out_backprop,
                                                    const std::vector<int64_t> &os, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], M = fs[3];
    const int64_t OH = os[1], OW = os[2];
    std::vector<double> in_backprop(N * H * W * C, 0.0);
    // Scatter: every out_backprop element and tap adds to the input position
    // the forward op read it from.
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t fh = 0; fh < FH; fh++)
                    for (int64_t fw = 0; fw < FW; fw++) {
                        const int64_t h = oh * g.stride_rows - g.pad_top + fh * g.dilation_rows;
                        const int64_t w = ow * g.stride_cols - g.pad_left + fw * g.dilation_cols;
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t m = 0; m < M; m++)
                                in_backprop[((b * H + h) * W + w) * C + c] +=
                                    out_backprop[((b * OH + oh) * OW + ow) * C * M + c * M + m] *
                                    filter[((fh * FW + fw) * C + c) * M + m];
                    }
    return in_backprop;
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
