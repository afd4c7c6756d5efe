// The front matter the op generators share: T, data_format, the family's
// structural GeneratorParams (schedules/structures.h) and the call-geometry
// Inputs, declared once per family as a base class of the generator.
//
// Halide finds a generator's GeneratorParams and Inputs by their addresses
// inside the generator object and orders the Inputs by address. A base class
// lies before the generator's own members, so a family's Inputs below come
// first, in the order written here, then the generator's own (and last those
// of configure()). That order and these names are the compiled kernels' C
// signature, which the runtime calls (runtime/src/<op>.cpp): never reorder or
// rename them.
#pragma once

#include "Halide.h"
#include "halide_knobs.h"
#include "structures.h"

#include <map>
#include <string>
#include <utility>

namespace gradtune::generator {

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
};

}  // namespace gradtune::generator
