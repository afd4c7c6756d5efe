#include "dilation_phases.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>

#include "dispatch.h"
#include "scratch.h"
#include "tf_checks.h"

namespace gradtune::internal {

namespace {

constexpr int64_t kMinPhaseSize = 8;

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Positions of residue `r` mod d below `size`.
int64_t residue_count(int64_t size, int64_t r, int64_t d) { return size > r ? (size - r + d - 1) / d : 0; }

// One dimension of a stride-1 call: size (the input's), filter, dilation,
// the pads TF computes and the output (out_backprop) size.
struct Dimension {
    int64_t size, filter, dilation, pad, out;
};

// TF's window geometry (tf::GetWindowedOutputSizeVerbose) of dimension
// `index` (0: rows, 1: columns); false where it does not hold.
bool dimension(const CallInfo &info, int index, Dimension *d) {
    const char *names[2][3] = {{"H", "filter_height", "dilation_height"}, {"W", "filter_width", "dilation_width"}};
    *d = {info.shape.at(names[index][0]), info.structure.at(names[index][1]), info.structure.at(names[index][2]), 0, 0};
    tf::Padding padding;
    if (!tf::ParsePadding(info.padding, &padding).ok()) return false;
    int64_t pad_after = 0;
    if (padding == tf::Padding::kExplicit) {
        d->pad = info.explicit_paddings.at(2 * index);
        pad_after = info.explicit_paddings.at(2 * index + 1);
    }
    return tf::GetWindowedOutputSizeVerbose(d->size, d->filter, d->dilation, 1, padding, &d->out, &d->pad, &pad_after)
        .ok();
}

// Input gradient: phase r of the input gradient reads out_backprop's phase
// q = (r + p) mod d with pad b = (r + p) div d; every phase gets the largest
// pad, its out_backprop grid shifted by the difference.
bool input_gradient_phases(const Dimension &d, int dim, DilationPhases *ph) {
    int64_t pad = 0, input = 0, out_data = 0;
    for (int64_t r = 0; r < d.dilation; r++) pad = std::max(pad, (r + d.pad) / d.dilation);
    for (int64_t r = 0; r < d.dilation; r++) {
        const int64_t q = (r + d.pad) % d.dilation, b = (r + d.pad) / d.dilation;
        const int64_t count = residue_count(d.out, q, d.dilation);
        ph->out_backprop[dim].push_back({q, pad - b, count});
        ph->input[dim].push_back({r, 0, residue_count(d.size, r, d.dilation)});
        input = std::max(input, residue_count(d.size, r, d.dilation));
        out_data = std::max(out_data, count + pad - b);
    }
    // The undilated call's out_backprop: out = input + pad + pad_after - k + 1.
    const int64_t base = input + pad - d.filter + 1;
    ph->pad_before[dim] = pad;
    ph->pad_after[dim] = std::max({int64_t{0}, out_data - base, 1 - base});
    ph->twin_input[dim] = input;
    ph->twin_out[dim] = base + ph->pad_after[dim];
    return input > 0;
}

// Filter gradient: out_backprop's phase q meets the input's phase
// r = (q - p) mod d from position c = floor((q - p) / d) on; every phase
// gets the smallest pad -c (a larger one would read a phase's first
// positions as padding), its input grid shifted by the difference.
bool filter_gradient_phases(const Dimension &d, int dim, DilationPhases *ph) {
    int64_t pad = INT64_MAX, out = 0;
    for (int64_t q = 0; q < d.dilation; q++) {
        pad = std::min(pad, -floor_div(q - d.pad, d.dilation));
        out = std::max(out, residue_count(d.out, q, d.dilation));
    }
    pad = std::max<int64_t>(pad, 0);
    for (int64_t q = 0; q < d.dilation; q++) {
        const int64_t r = q - d.pad - d.dilation * floor_div(q - d.pad, d.dilation);
        const int64_t c = floor_div(q - d.pad, d.dilation);
        ph->out_backprop[dim].push_back({q, 0, residue_count(d.out, q, d.dilation)});
        ph->input[dim].push_back({r, -(c + pad), residue_count(d.size, r, d.dilation)});
    }
    // The undilated call's input: out = input + pad - k + 1 (no pad after).
    const int64_t input = out + d.filter - 1 - pad;
    ph->pad_before[dim] = pad;
    ph->pad_after[dim] = 0;
    ph->twin_input[dim] = input;
    ph->twin_out[dim] = out;
    return input > 0 && out > 0;
}

}  // namespace

DilationPhases dilation_phases(const CallInfo &info) {
    DilationPhases ph;
    const bool input_gradient = info.op == "Conv2DBackpropInput";
    if (!input_gradient && info.op != "Conv2DBackpropFilter") return ph;
    // Every dense gradient call asks: an undilated one is answered before any work.
    if (info.structure.at("dilation_height") == 1 && info.structure.at("dilation_width") == 1) return ph;
    if (info.data_format != "NHWC" || info.structure.at("stride_height") != 1 || info.structure.at("stride_width") != 1)
        return ph;
    bool usable = true;
    for (int dim = 0; dim < 2; dim++) {
        Dimension d;
        if (!dimension(info, dim, &d) || d.out < 1 || d.size < 1) return ph;
        ph.dilation[dim] = d.dilation;
        usable = usable && (input_gradient ? input_gradient_phases(d, dim, &ph) : filter_gradient_phases(d, dim, &ph));
    }
    // Phases of fewer than 8 x 8 positions stay on the generic variant: a
    // 15x17x64 <- 32 input gradient at dilation 3 (phases of 5x6) ran 0.45 ms
    // as phases, 0.39 ms generic (Sapphire Rapids, gradtune-bench).
    ph.usable = usable && ph.phases() > 1 && ph.twin_input[0] >= kMinPhaseSize && ph.twin_input[1] >= kMinPhaseSize;
    return ph;
}

CallInfo phase_twin(const CallInfo &info, const DilationPhases &ph) {
    CallInfo twin = info;
    twin.structure["dilation_height"] = twin.structure["dilation_width"] = 1;
    twin.shape["N"] = info.shape.at("N") * ph.phases();
    twin.shape["H"] = ph.twin_input[0];
    twin.shape["W"] = ph.twin_input[1];
    twin.padding = "EXPLICIT";
    twin.explicit_paddings = {ph.pad_before[0], ph.pad_after[0], ph.pad_before[1], ph.pad_after[1]};
    if (info.op == "Conv2DBackpropInput")
        twin.output_shapes = {{twin.shape["N"], ph.twin_input[0], ph.twin_input[1], info.shape.at("C")}};
    return twin;
}

bool detour_to_phases(const CallInfo &info, const RunOptions &options) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    if (info.op != "Conv2DBackpropInput" && info.op != "Conv2DBackpropFilter") return false;
    const DilationPhases ph = dilation_phases(info);
    if (!ph.usable) return false;
    Selection own, twin;
    if (!select_kernel(info, options, &own).ok() || own.tier != Tier::generic) return false;
    return select_kernel(phase_twin(info, ph), options, &twin).ok() && twin.tier != Tier::generic;
}

namespace {

// One row of a phase's image, [phase rows][phase columns][N][rows][cols][C]
// (task i: phase row, phase column, image and row, outermost first), and
// the call's tensor [N, H, W, C]: copies each position one of them holds
// (gather: into the image, zeros where the grid holds nothing; scatter:
// into the tensor).
struct PhaseCopy {
    const DilationPhases &ph;
    const std::vector<PhaseRange> (&ranges)[2];
    int64_t images, rows, cols, height, width, channel_bytes;

    // The image row's byte offset, and the tensor row it maps to (-1: none).
    void locate(int i, int64_t *image_row, int64_t *tensor_row, const PhaseRange **col_range) const {
        const int64_t row = i % rows, n = (i / rows) % images, phase = i / (rows * images);
        const int64_t phase_row = phase / ph.dilation[1], phase_col = phase % ph.dilation[1];
        const PhaseRange &r = ranges[0][phase_row];
        *col_range = &ranges[1][phase_col];
        *image_row = static_cast<int64_t>(i) * cols;
        const int64_t m = row - r.offset;
        *tensor_row = m >= 0 && m < r.count ? n * height + r.first + ph.dilation[0] * m : -1;
    }

    void gather(int i, const char *from, char *to) const {
        int64_t image_row, tensor_row;
        const PhaseRange *c;
        locate(i, &image_row, &tensor_row, &c);
        for (int64_t col = 0; col < cols; col++) {
            char *dst = to + (image_row + col) * channel_bytes;
            const int64_t m = col - c->offset;
            if (tensor_row < 0 || m < 0 || m >= c->count)
                std::memset(dst, 0, channel_bytes);
            else
                std::memcpy(dst, from + (tensor_row * width + c->first + ph.dilation[1] * m) * channel_bytes,
                            channel_bytes);
        }
    }

    void scatter(int i, const char *from, char *to) const {
        int64_t image_row, tensor_row;
        const PhaseRange *c;
        locate(i, &image_row, &tensor_row, &c);
        if (tensor_row < 0) return;
        for (int64_t m = 0; m < c->count; m++)
            std::memcpy(to + (tensor_row * width + c->first + ph.dilation[1] * m) * channel_bytes,
                        from + (image_row + m + c->offset) * channel_bytes, channel_bytes);
    }
};

}  // namespace

namespace {

// The image rows of every phase (scratch.h: parallel_row_chunks).
void for_row_chunks(const PhaseCopy &copy, const std::function<void(int)> &row, ParallelRunner *parallel) {
    parallel_row_chunks(copy.ph.phases() * copy.images * copy.rows, copy.cols * copy.channel_bytes,
                        [&](int64_t i) { row(static_cast<int>(i)); }, parallel);
}

}  // namespace

void gather_phases(const DilationPhases &ph, const std::vector<PhaseRange> (&ranges)[2], const ConstTensorRef &from,
                   void *to, int64_t rows, int64_t cols, ParallelRunner *parallel) {
    const auto &s = from.shape;  // [N, H, W, C]
    const PhaseCopy copy{ph, ranges, s[0], rows, cols, s[1], s[2], s[3] * static_cast<int64_t>(DataTypeSize(from.dtype))};
    for_row_chunks(copy, [&](int i) { copy.gather(i, static_cast<const char *>(from.data), static_cast<char *>(to)); },
                   parallel);
}

void scatter_phases(const DilationPhases &ph, const std::vector<PhaseRange> (&ranges)[2], const void *from,
                    int64_t rows, int64_t cols, const TensorRef &to, ParallelRunner *parallel) {
    const auto &s = to.shape;  // [N, H, W, C]
    const PhaseCopy copy{ph, ranges, s[0], rows, cols, s[1], s[2], s[3] * static_cast<int64_t>(DataTypeSize(to.dtype))};
    for_row_chunks(copy, [&](int i) { copy.scatter(i, static_cast<const char *>(from), static_cast<char *>(to.data)); },
                   parallel);
}

}  // namespace gradtune::internal
