// The front matter the op generators share, declared once: per family a base
// class with T, data_format, the family's structural GeneratorParams
// (schedules/structures.h) and the call-geometry Inputs; per kind of op its
// tensors; and OpGenerator, which adds the tensors in configure() and makes
// the one schedule() call into schedules/. Helpers the generators' algorithms
// share (fixed_or, the NCHW strides, the filter-size promises) come with it.
//
// Halide finds a generator's GeneratorParams and Inputs by their addresses
// inside the generator object and orders the Inputs by address. A base class
// lies before the generator's own members, so a family's Inputs below come
// first, in the order written here, then the generator's own (and last the
// tensors of configure()). That order and these names are the compiled
// kernels' C signature, which the runtime calls (runtime/src/<op>.cpp): never
// reorder or rename them.
#pragma once

#include "Halide.h"
#include "window.h"
#include "halide_knobs.h"
#include "structures.h"

#include <array>
#include <map>
#include <string>
#include <utility>

namespace gradtune::generator {

// The window geometry and the accumulator conversions, for the generators.
using window::narrow;
using window::TapGather;
using window::has_bf16_dot;
using window::widen;

enum class DataFormat { NHWC, NCHW };

// A variant's compile-time value where it fixes one (> 0), else the call's.
inline Halide::Expr fixed_or(int fixed, Halide::Expr call) {
    return fixed > 0 ? Halide::Expr(fixed) : call;
}

// T and data_format; kNchw: whether the op takes NCHW besides NHWC.
template <bool kNchw>
struct DtypeAndFormat {
    Halide::GeneratorParam<Halide::Type> T{"T", Halide::Float(32)};
    Halide::GeneratorParam<DataFormat> data_format{"data_format", DataFormat::NHWC, formats()};

    bool nchw() const { return data_format == DataFormat::NCHW; }
    const char *layout_name() const { return nchw() ? "NCHW" : "NHWC"; }
    // The variant's Structure, given its structural values by name.
    gradtune::Structure structure_of(std::map<std::string, int> fixed) const {
        return {Halide::Internal::halide_type_to_enum_string(T), layout_name(), std::move(fixed)};
    }

private:
    static std::map<std::string, DataFormat> formats() {
        if (kNchw) return {{"NHWC", DataFormat::NHWC}, {"NCHW", DataFormat::NCHW}};
        return {{"NHWC", DataFormat::NHWC}};
    }
};

// NCHW tensors are the NHWC buffers with other strides: the unit stride moves
// from the channels (dim 0) to the columns (dim 1).
template <typename Buffer>
void unit_stride_on_columns(Buffer &buffer) {
    buffer->dim(0).set_stride(Halide::Expr());
    buffer->dim(1).set_stride(1);
}

// A fixed filter size (and depth multiplier: depthwise filters
// [FH, FW, C, M] as (m, c, fw, fh)) is also a promise the filter-shaped
// tensor must keep.
template <typename Buffer>
void promise_filter_size(Buffer &filter, int fixed_height, int fixed_width, int fixed_multiplier = 0) {
    if (fixed_height > 0) filter->dim(3).set_bounds(0, fixed_height);
    if (fixed_width > 0) filter->dim(2).set_bounds(0, fixed_width);
    if (fixed_multiplier > 0) filter->dim(0).set_bounds(0, fixed_multiplier);
}

// The call-geometry Inputs, in the pieces the families combine as bases in
// this order: stride(s), dilations, [groups], pads. A variant that fixes a
// value ignores its input.
struct CallStride {
    Halide::GeneratorInput<int> call_stride{"call_stride"};
};
struct CallStrides {
    Halide::GeneratorInput<int> call_stride_height{"call_stride_height"};
    Halide::GeneratorInput<int> call_stride_width{"call_stride_width"};
};
struct CallDilations {
    Halide::GeneratorInput<int> call_dilation_height{"call_dilation_height"};
    Halide::GeneratorInput<int> call_dilation_width{"call_dilation_width"};
};
struct CallGroups {
    Halide::GeneratorInput<int> call_groups{"call_groups"};  // G = C / Cg >= 1, and Cout % G == 0
};
struct CallPads {
    Halide::GeneratorInput<int> pad_top{"pad_top"};    // TF's pad_before for rows
    Halide::GeneratorInput<int> pad_left{"pad_left"};  // TF's pad_before for columns
};

// DepthwiseConv2dNative and its two gradients: one stride for rows and columns.
struct DepthwiseFrontMatter : DtypeAndFormat<true>, CallStride, CallDilations, CallPads {
    GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)

    Halide::Expr stride_value() const { return fixed_or(stride, call_stride); }
    Halide::Expr dilation_rows() const { return fixed_or(dilation_height, call_dilation_height); }
    Halide::Expr dilation_cols() const { return fixed_or(dilation_width, call_dilation_width); }
    gradtune::Structure structure() const {
        return structure_of({GRADTUNE_DEPTHWISE_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)});
    }
};

// What the schedules of DepthwiseConv2dNative and its input gradient read of
// their output, activations (c, w, h, n): channels, width and height; and the
// depth multiplier.
template <class Pipeline, class Output>
void set_depthwise_extents(Pipeline &p, Output &output, Halide::Expr multiplier) {
    p.channels = output->dim(0).extent();
    p.width = output->dim(1).extent();
    p.height = output->dim(2).extent();
    p.depth_multiplier = multiplier;
}

// Conv2D: a stride per axis.
struct Conv2DFrontMatter : DtypeAndFormat<true>, CallStrides, CallDilations, CallPads {
    GRADTUNE_CONV2D_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)

    Halide::Expr stride_rows() const { return fixed_or(stride_height, call_stride_height); }
    Halide::Expr stride_cols() const { return fixed_or(stride_width, call_stride_width); }
    Halide::Expr dilation_rows() const { return fixed_or(dilation_height, call_dilation_height); }
    Halide::Expr dilation_cols() const { return fixed_or(dilation_width, call_dilation_width); }
    gradtune::Structure structure() const {
        return structure_of({GRADTUNE_CONV2D_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)});
    }
};

// Conv2DBackpropInput and Conv2DBackpropFilter: Conv2D's geometry and groups.
struct Conv2DBackpropFrontMatter : DtypeAndFormat<true>, CallStrides, CallDilations, CallGroups, CallPads {
    GRADTUNE_CONV2D_BACKPROP_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)

    Halide::Expr stride_rows() const { return fixed_or(stride_height, call_stride_height); }
    Halide::Expr stride_cols() const { return fixed_or(stride_width, call_stride_width); }
    Halide::Expr groups_value() const { return fixed_or(groups, call_groups); }
    Halide::Expr dilation_rows() const { return fixed_or(dilation_height, call_dilation_height); }
    Halide::Expr dilation_cols() const { return fixed_or(dilation_width, call_dilation_width); }
    gradtune::Structure structure() const {
        return structure_of({GRADTUNE_CONV2D_BACKPROP_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)});
    }
};

// FractionalAvgPool and its gradient (NHWC only): TF's bool attr
// `overlapping` as a structural value (0 = from the call, 1 = false,
// 2 = true), and its Input.
struct PoolingFrontMatter : DtypeAndFormat<false> {
    GRADTUNE_POOLING_STRUCTURE(GRADTUNE_STRUCTURE_GENERATOR_PARAM)
    Halide::GeneratorInput<int> call_overlapping{"call_overlapping"};  // 0 or 1; ignored when `overlapping` is fixed

    Halide::Expr overlapping_value() const {
        return overlapping > 0 ? Halide::Expr(overlapping == 2) : call_overlapping != 0;
    }
    void check_overlapping() const {
        _halide_user_assert(overlapping >= 0 && overlapping <= 2)
            << "overlapping must be 0 (run time), 1 (false) or 2 (true), not " << static_cast<int>(overlapping);
    }
    gradtune::Structure structure() const {
        return structure_of({GRADTUNE_POOLING_STRUCTURE(GRADTUNE_STRUCTURE_VALUE)});
    }

    // One spatial axis: TF's cell bounds from its pooling sequence.
    struct Axis {
        const Halide::GeneratorInput<Halide::Buffer<int64_t, 1>> &sequence;
        Halide::Expr overlap, in_size, out_size;

        // sequence[i], the index clamped into the buffer (the runtime passes
        // out_size + 1 values).
        Halide::Expr at(Halide::Expr i) const { return sequence(Halide::clamp(i, 0, out_size)); }
        // in_row_start / in_row_end of TF's loop (the end clamped to the input).
        Halide::Expr start(Halide::Expr cell) const { return at(cell); }
        Halide::Expr end(Halide::Expr cell) const {
            Halide::Expr next = at(cell + 1);
            return Halide::min(Halide::select(overlap, next, next - 1), Halide::cast<int64_t>(in_size) - 1);
        }
        Halide::Expr covers(Halide::Expr cell, Halide::Expr pixel) const {
            Halide::Expr p = Halide::cast<int64_t>(pixel);
            return start(cell) <= p && p <= end(cell);
        }
        // Number of pixels of the cell along this axis (>= 1 where it covers one).
        Halide::Expr size(Halide::Expr cell) const { return end(cell) - start(cell) + 1; }
    };
};

// The 4-D tensors of type T an op's generator adds in configure(), as TF
// names them: its tensor inputs in TF's order (after every scalar Input in
// the kernels' signature), then `output`. One struct per kind of op.
using TensorInput = Halide::GeneratorInput<Halide::Buffer<>>;
using TensorOutput = Halide::GeneratorOutput<Halide::Buffer<>>;
using TensorSlot = std::pair<TensorInput **, const char *>;

// Conv2D, DepthwiseConv2dNative.
struct ForwardTensors {
    TensorInput *input = nullptr, *filter = nullptr;
    TensorOutput *output = nullptr;
    std::array<TensorSlot, 2> inputs() { return {{{&input, "input"}, {&filter, "filter"}}}; }
};
// Conv2DBackpropInput, DepthwiseConv2dNativeBackpropInput.
struct InputGradientTensors {
    TensorInput *filter = nullptr, *out_backprop = nullptr;
    TensorOutput *output = nullptr;
    std::array<TensorSlot, 2> inputs() { return {{{&filter, "filter"}, {&out_backprop, "out_backprop"}}}; }
};
// Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter.
struct FilterGradientTensors {
    TensorInput *input = nullptr, *out_backprop = nullptr;
    TensorOutput *output = nullptr;
    std::array<TensorSlot, 2> inputs() { return {{{&input, "input"}, {&out_backprop, "out_backprop"}}}; }
};
// FractionalAvgPool.
struct PoolingTensors {
    TensorInput *value = nullptr;
    TensorOutput *output = nullptr;
    std::array<TensorSlot, 1> inputs() { return {{{&value, "value"}}}; }
};
// FractionalAvgPoolGrad.
struct PoolingGradientTensors {
    TensorInput *out_backprop = nullptr;
    TensorOutput *output = nullptr;
    std::array<TensorSlot, 1> inputs() { return {{{&out_backprop, "out_backprop"}}}; }
};

// An op's generator Gen: Halide's Generator, its family's FrontMatter and
// its Tensors, which configure() adds.
template <class Gen, class FrontMatter, class Tensors>
class OpGenerator : public Halide::Generator<Gen>, public FrontMatter, public Tensors {
public:
    void configure() {
        for (const TensorSlot &slot : Tensors::inputs())
            *slot.first = this->template add_input<Halide::Buffer<>>(slot.second, this->T, 4);
        this->output = this->template add_output<Halide::Buffer<>>("output", this->T, 4);
    }

    // The accumulator type of T (window.h).
    Halide::Type accumulator_type() const { return window::accumulator_type(this->T); }

    // Whether the copies a schedule stages or packs hold the accumulator type
    // rather than T: on the CPU, for 16-bit T (window::widened says why).
    bool widens_copies() const {
        return device_of(this->get_target()) == Device::cpu && accumulator_type() != this->T;
    }
    // A value, and a whole Func named `name`, as such a copy holds them.
    Halide::Expr copied(Halide::Expr value) const {
        return widens_copies() ? window::widen(value, accumulator_type()) : value;
    }
    Halide::Func copied(const Halide::Func &f, const std::string &name) const {
        return widens_copies() ? window::widened(f, accumulator_type(), name) : f;
    }

    // The schedule: one call into schedules/ with the generator's knobs,
    // checked against the op's knob space for its structure and target.
    template <class Pipeline>
    void schedule(const char *op, Pipeline &p) {
        const Structure structure = this->structure();
        const Halide::Target target = this->get_target();
        // apply() is the op's schedule's (its header follows this one): found
        // by argument-dependent lookup on the Pipeline.
        apply(gradtune::checked_knobs(op, structure, static_cast<Gen *>(this)->knobs, target), structure, p, target);
    }
};

}  // namespace gradtune::generator
