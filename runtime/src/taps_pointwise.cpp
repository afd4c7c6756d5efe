#include "taps_pointwise.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "dispatch.h"
#include "scratch.h"

namespace gradtune::internal {

namespace {

// The call's geometry as TapsIntoPlace (out_backprop's grid and the pads
// before it, as TF computes them), or false where it is no NHWC gradient of
// one group at dilation 1, strided or of a small grid.
bool taps_geometry(const CallInfo &info, TapsIntoPlace *g) {
    if ((info.op != "Conv2DBackpropInput" && info.op != "Conv2DBackpropFilter") || info.data_format != "NHWC")
        return false;
    const std::map<std::string, int> &s = info.structure;
    if (s.at("groups") != 1 || s.at("dilation_height") != 1 || s.at("dilation_width") != 1) return false;
    g->stride_rows = s.at("stride_height");
    g->stride_cols = s.at("stride_width");
    g->taps_rows = s.at("filter_height");
    g->taps_cols = s.at("filter_width");
    if (g->taps_rows < 1 || g->taps_cols < 1) return false;
    const int64_t height = info.shape.at("H"), width = info.shape.at("W");
    // One spatial dimension: out_backprop's extent and the pad before it.
    auto dimension = [&](int64_t size, int64_t taps, int64_t stride, int64_t before, int64_t after, int64_t *out,
                         int64_t *pad) {
        if (info.padding == "SAME") {
            *out = (size + stride - 1) / stride;
            *pad = std::max<int64_t>((*out - 1) * stride + taps - size, 0) / 2;
        } else {  // VALID (no pads) or EXPLICIT
            *out = (size + before + after - taps) / stride + 1;
            *pad = before;
            if (size + before + after < taps) *out = 0;
        }
    };
    int64_t pads[4] = {0, 0, 0, 0};  // top, bottom, left, right
    if (info.padding == "EXPLICIT") {
        if (info.explicit_paddings.size() != 4) return false;
        std::copy(info.explicit_paddings.begin(), info.explicit_paddings.end(), pads);
    }
    dimension(height, g->taps_rows, g->stride_rows, pads[0], pads[1], &g->rows, &g->pad_top);
    dimension(width, g->taps_cols, g->stride_cols, pads[2], pads[3], &g->cols, &g->pad_left);
    if (g->rows <= 0 || g->cols <= 0) return false;
    // At stride 1 the kernels waste taps only at the borders: small grids
    // alone (a 1x1 filter there is a pointwise call already).
    if (g->stride_rows == 1 && g->stride_cols == 1)
        return g->taps_rows * g->taps_cols > 1 && g->rows * g->cols <= kTapsPointwiseUnstridedPositions;
    return true;
}

}  // namespace

bool taps_pointwise_fits(const CallInfo &info, const RunOptions &options, int64_t *out_rows, int64_t *out_cols) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    TapsIntoPlace g;
    if (!taps_geometry(info, &g)) return false;
    const std::optional<DataType> dtype = DataTypeFromString(info.dtype);
    if (!dtype) return false;
    // An input gradient's overlapping taps are summed in the dtype: float32
    // and float64 only. A filter gradient's taps are copies.
    const bool overlap = g.taps_rows > g.stride_rows || g.taps_cols > g.stride_cols;
    if (info.op == "Conv2DBackpropInput" && overlap && *dtype != DataType::kFloat && *dtype != DataType::kDouble)
        return false;
    const int64_t products = info.shape.at("N") * g.rows * g.cols * g.taps_rows * g.taps_cols * info.shape.at("C");
    if (products > kTapsPointwiseScratchBytes / DataTypeSize(*dtype)) return false;
    *out_rows = g.rows;
    *out_cols = g.cols;
    return true;
}

CallInfo taps_pointwise_twin(const CallInfo &info, int64_t out_rows, int64_t out_cols) {
    CallInfo twin = info;
    const int64_t taps = static_cast<int64_t>(info.structure.at("filter_height")) * info.structure.at("filter_width");
    twin.structure["stride_height"] = twin.structure["stride_width"] = 1;
    twin.structure["filter_height"] = twin.structure["filter_width"] = 1;
    twin.shape["H"] = out_rows;
    twin.shape["W"] = out_cols;
    twin.shape["C"] = taps * info.shape.at("C");
    twin.padding = "VALID";
    twin.explicit_paddings.clear();
    twin.output_shapes = {info.op == "Conv2DBackpropInput"
                              ? std::vector<int64_t>{info.shape.at("N"), out_rows, out_cols, twin.shape["C"]}
                              : std::vector<int64_t>{1, 1, twin.shape["C"], info.shape.at("O")}};
    return twin;
}

DetourDecisions &taps_pointwise_decisions() {
    // Never destroyed: calls may run from static destructors.
    static auto *d = new DetourDecisions("GRADTUNE_TAPS_POINTWISE", "as the pointwise call", "on its own kernels");
    return *d;
}

DetourChoice taps_pointwise_choice(const CallInfo &info, const RunOptions &options) {
    // Without probes, the static choice: the call's own kernels, as before.
    return taps_pointwise_decisions().choice(info, options, [] { return DetourChoice{true, false, "not probed"}; });
}

namespace {

// One output row's sums: `row` (zeroed) += the products landing on it.
template <typename T>
void add_products(const char *products, int64_t channels, T *row) {
    const T *from = reinterpret_cast<const T *>(products);
    for (int64_t c = 0; c < channels; c++) row[c] += from[c];
}

}  // namespace

void sum_taps_into_place(const void *from, const TapsIntoPlace &g, const TensorRef &to, ParallelRunner *parallel) {
    const int64_t images = to.shape[0], height = to.shape[1], width = to.shape[2], channels = to.shape[3];
    const int64_t channel_bytes = channels * static_cast<int64_t>(DataTypeSize(to.dtype));
    const int64_t row_bytes = width * channel_bytes;
    // Each output position gets at most one product where the taps do not
    // overlap: copied, whatever the dtype.
    const bool overlap = g.taps_rows > g.stride_rows || g.taps_cols > g.stride_cols;
    const char *src = static_cast<const char *>(from);
    char *dst = static_cast<char *>(to.data);
    parallel_row_chunks(
        images * height, row_bytes,
        [&](int64_t r) {
            const int64_t n = r / height, y = r % height;
            char *row = dst + r * row_bytes;
            std::memset(row, 0, static_cast<size_t>(row_bytes));
            // The out_backprop rows i whose tap ky = y + pad_top - i stride lands here.
            for (int64_t i = 0; i < g.rows; i++) {
                const int64_t ky = y + g.pad_top - i * g.stride_rows;
                if (ky < 0 || ky >= g.taps_rows) continue;
                for (int64_t j = 0; j < g.cols; j++) {
                    for (int64_t kx = 0; kx < g.taps_cols; kx++) {
                        const int64_t x = j * g.stride_cols - g.pad_left + kx;
                        if (x < 0 || x >= width) continue;
                        const char *product =
                            src +
                            ((((n * g.rows + i) * g.cols + j) * g.taps_rows + ky) * g.taps_cols + kx) * channel_bytes;
                        char *place = row + x * channel_bytes;
                        if (!overlap)
                            std::memcpy(place, product, static_cast<size_t>(channel_bytes));
                        else if (to.dtype == DataType::kDouble)
                            add_products(product, channels, reinterpret_cast<double *>(place));
                        else
                            add_products(product, channels, reinterpret_cast<float *>(place));
                    }
                }
            }
        },
        parallel);
}

void gather_taps(const ConstTensorRef &from, const TapsIntoPlace &g, const TensorRef &to, ParallelRunner *parallel) {
    const int64_t height = from.shape[1], width = from.shape[2];
    const int64_t channel_bytes = from.shape[3] * static_cast<int64_t>(DataTypeSize(from.dtype));
    const int64_t row_bytes = g.cols * g.taps_rows * g.taps_cols * channel_bytes;
    const char *src = static_cast<const char *>(from.data);
    char *dst = static_cast<char *>(to.data);
    parallel_row_chunks(
        from.shape[0] * g.rows, row_bytes,
        [&](int64_t r) {
            const int64_t n = r / g.rows, i = r % g.rows;
            char *place = dst + r * row_bytes;
            for (int64_t j = 0; j < g.cols; j++) {
                for (int64_t ky = 0; ky < g.taps_rows; ky++) {
                    const int64_t y = i * g.stride_rows - g.pad_top + ky;
                    for (int64_t kx = 0; kx < g.taps_cols; kx++, place += channel_bytes) {
                        const int64_t x = j * g.stride_cols - g.pad_left + kx;
                        if (y < 0 || y >= height || x < 0 || x >= width)
                            std::memset(place, 0, static_cast<size_t>(channel_bytes));
                        else
                            std::memcpy(place, src + ((n * height + y) * width + x) * channel_bytes,
                                        static_cast<size_t>(channel_bytes));
                    }
                }
            }
        },
        parallel);
}

}  // namespace gradtune::internal
