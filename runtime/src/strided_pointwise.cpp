#include "strided_pointwise.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "dispatch.h"
#include "scratch.h"

namespace gradtune::internal {

bool strided_pointwise_fits(const CallInfo &info, const RunOptions &options, int64_t *out_rows, int64_t *out_cols) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    if (info.op != "Conv2DBackpropInput" || info.data_format != "NHWC") return false;
    const std::map<std::string, int> &s = info.structure;
    if (s.at("filter_height") != 1 || s.at("filter_width") != 1 || s.at("groups") != 1 ||
        s.at("dilation_height") != 1 || s.at("dilation_width") != 1)
        return false;
    const int64_t stride_rows = s.at("stride_height"), stride_cols = s.at("stride_width");
    if (stride_rows == 1 && stride_cols == 1) return false;
    // A 1x1 filter pads nothing under SAME; EXPLICIT pads must leave the
    // first row and column where they are.
    int64_t pads[4] = {0, 0, 0, 0};  // top, bottom, left, right
    if (info.padding == "EXPLICIT") {
        if (info.explicit_paddings.size() != 4) return false;
        std::copy(info.explicit_paddings.begin(), info.explicit_paddings.end(), pads);
    }
    if (pads[0] != 0 || pads[2] != 0) return false;
    const int64_t height = info.shape.at("H"), width = info.shape.at("W");
    const int64_t rows = (height + pads[1] - 1) / stride_rows + 1, cols = (width + pads[3] - 1) / stride_cols + 1;
    // A pad after the last row or column can put out_backprop positions in
    // the padding, where they reach no input position.
    if (stride_rows * (rows - 1) >= height || stride_cols * (cols - 1) >= width) return false;
    *out_rows = rows;
    *out_cols = cols;
    return true;
}

CallInfo strided_pointwise_twin(const CallInfo &info, int64_t out_rows, int64_t out_cols) {
    CallInfo twin = info;
    twin.structure["stride_height"] = twin.structure["stride_width"] = 1;
    twin.shape["H"] = out_rows;
    twin.shape["W"] = out_cols;
    twin.padding = "VALID";
    twin.explicit_paddings.clear();
    twin.output_shapes = {{info.shape.at("N"), out_rows, out_cols, info.shape.at("C")}};
    return twin;
}

namespace {

// The choices measured so far, for the process's life.
ProbeDecisions<StridedPointwiseChoice> &choices() {
    static auto *c =
        new ProbeDecisions<StridedPointwiseChoice>;  // never destroyed: calls may run from static destructors
    return *c;
}

}  // namespace

StridedPointwiseChoice strided_pointwise_choice(const CallInfo &info, const RunOptions &options) {
    if (const char *v = std::getenv("GRADTUNE_STRIDED_POINTWISE"); v && *v) {
        if (std::strcmp(v, "detour") == 0) return {true, true, "GRADTUNE_STRIDED_POINTWISE=detour"};
        if (std::strcmp(v, "direct") == 0) return {true, false, "GRADTUNE_STRIDED_POINTWISE=direct"};
    }
    // Without probes, the static choice: the strided kernels, as before.
    if (!probing(options)) return {true, false, "not probed"};
    return choices().find(signature_key(info, Device::cpu)).value_or(StridedPointwiseChoice{});
}

void remember_strided_pointwise_choice(const CallInfo &info, bool detour, double detour_ms, double direct_ms) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "probed on the signature's first call (as the pointwise call %.4f ms, strided %.4f ms)", detour_ms,
                  direct_ms);
    choices().remember(signature_key(info, Device::cpu), StridedPointwiseChoice{true, detour, why, true});
}

void scatter_strided(const void *from, int64_t rows, int64_t cols, int64_t stride_rows, int64_t stride_cols,
                     const TensorRef &to, ParallelRunner *parallel) {
    const int64_t images = to.shape[0], height = to.shape[1], width = to.shape[2];
    const int64_t channel_bytes = to.shape[3] * static_cast<int64_t>(DataTypeSize(to.dtype));
    const int64_t row_bytes = width * channel_bytes;
    const char *src = static_cast<const char *>(from);
    char *dst = static_cast<char *>(to.data);
    parallel_row_chunks(
        images * height, row_bytes,
        [&](int64_t i) {
            const int64_t n = i / height, h = i % height;
            char *row = dst + i * row_bytes;
            std::memset(row, 0, static_cast<size_t>(row_bytes));
            if (h % stride_rows != 0 || h / stride_rows >= rows) return;
            const char *in = src + ((n * rows + h / stride_rows) * cols) * channel_bytes;
            for (int64_t x = 0; x < cols && x * stride_cols < width; x++)
                std::memcpy(row + x * stride_cols * channel_bytes, in + x * channel_bytes,
                            static_cast<size_t>(channel_bytes));
        },
        parallel);
}

}  // namespace gradtune::internal
