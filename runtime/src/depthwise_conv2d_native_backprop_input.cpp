// DepthwiseConv2dNativeBackpropInput: TF validation (spec/tf-ops.md section 3,
// in TF's order, with TF's texts), geometry, dispatch and the kernel call.
#include "gradtune/depthwise_conv2d_native_backprop_input.h"

#include <cstring>
#include <type_traits>

#include "DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic.h"  // generated: checks KernelSignature
#include "dispatch.h"
#include "halide_call.h"
#include "op_entry.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using internal::HalideBuffer;
using tf::DataFormat;
using tf::Padding;

constexpr const char *kOp = "DepthwiseConv2dNativeBackpropInput";
constexpr const char *kLabel = "DepthwiseConv2DBackpropInput";  // TF's label (capital D in 2D)

// The Halide signature of every variant (generators/depthwise_conv2d_native_backprop_input_generator.cpp).
using KernelSignature = int (*)(const void *user_context, int32_t call_stride, int32_t call_dilation_height,
                                int32_t call_dilation_width, int32_t pad_top, int32_t pad_left,
                                halide_buffer_t *filter, halide_buffer_t *out_backprop, halide_buffer_t *output);
static_assert(std::is_same_v<decltype(&DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic), KernelSignature>,
              "KernelSignature must match the generator's Inputs and Outputs");

struct Prepared {
    CallInfo info;
    std::vector<int64_t> input_shape;  // = input_sizes, data_format order
    DataFormat format = DataFormat::kNHWC;
    int64_t stride = 1, dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: out_backprop or filter is empty
};

Status Prepare(const ConstTensorRef &input_sizes, const ConstTensorRef &filter, const ConstTensorRef &out_backprop,
               const std::vector<int> &strides, std::string_view padding_text,
               const DepthwiseConv2dNativeBackpropInput::Attrs &attrs, Prepared *p) {
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input_sizes", input_sizes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter", filter));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", out_backprop));

    // Op definition: T, input types, attr values.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(
        filter.dtype, {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble}));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 0, DataType::kInt32, input_sizes.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 2, filter.dtype, out_backprop.dtype));
    Padding padding;
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(padding_text, &padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(attrs.data_format_, &p->format));
    const DataFormat format = p->format;
    const int n_dim = tf::DimIndex(format, 'N'), h_dim = tf::DimIndex(format, 'H');
    const int w_dim = tf::DimIndex(format, 'W'), c_dim = tf::DimIndex(format, 'C');

    // Kernel constructor (steps 1-5), then the dilations that gradtune honours.
    if (strides.size() != 4) return InvalidArgument("Sliding window strides field must specify 4 dimensions");
    if (strides[h_dim] != strides[w_dim])
        return InvalidArgument(
            "Current implementation only supports equal length strides in the row and column dimensions.");
    if (strides[n_dim] != 1 || strides[c_dim] != 1)
        return InvalidArgument("Current implementation does not yet support strides in the batch and depth dimensions.");
    GRADTUNE_RETURN_IF_ERROR(tf::CheckValidPadding(padding, attrs.explicit_paddings_, format));
    const std::vector<int> &dilations = attrs.dilations_;
    if (dilations.size() != 4) return InvalidArgument("Sliding window dilations field must specify 4 dimensions");
    if (dilations[n_dim] != 1 || dilations[c_dim] != 1)
        return InvalidArgument(
            "Current implementation does not yet support dilations in the batch and depth dimensions.");

    // Compute (steps 6-14).
    if (input_sizes.dims() != 1)
        return InvalidArgument("Conv2DBackpropInput: input_sizes input must be 1-dim, not " +
                               std::to_string(input_sizes.dims()));
    tf::ShapeBuilder input_shape;
    for (int64_t i = 0; i < input_sizes.num_elements(); i++) {
        const int64_t size = tf::ShapeElement(input_sizes, i);
        if (size < 0) return InvalidArgument("Dimension " + std::to_string(i) + " of input_sizes must be >= 0");
        GRADTUNE_RETURN_IF_ERROR(input_shape.AddDim(size));
    }
    const std::string label = kLabel;
    if (input_shape.dims().size() != 4) return InvalidArgument(label + ": input must be 4-dimensional");
    if (filter.dims() != 4) return InvalidArgument(label + ": filter must be 4-dimensional");
    if (out_backprop.dims() != 4) return InvalidArgument(label + ": out_backprop must be 4-dimensional");
    const std::vector<int64_t> &in = input_shape.dims();
    const std::vector<int64_t> &out = out_backprop.shape;
    if (in[n_dim] != out[n_dim]) return InvalidArgument(label + ": input and out_backprop must have the same batch size");
    if (!tf::FitsInt32(in[h_dim])) return InvalidArgument("Input rows too large");
    if (!tf::FitsInt32(in[w_dim])) return InvalidArgument("Input cols too large");
    if (!tf::FitsInt32(out[h_dim])) return InvalidArgument("Output rows too large");
    if (!tf::FitsInt32(out[w_dim])) return InvalidArgument("Output cols too large");
    const int64_t in_depth = in[c_dim];
    if (in_depth != filter.shape[2]) return InvalidArgument(label + ": input and filter must have the same in_depth");
    const int64_t multiplier = filter.shape[3];
    if (!tf::FitsInt32(out[c_dim])) return InvalidArgument("Output depth too large");
    if (tf::MultiplySaturated(multiplier, in_depth) != out[c_dim])
        return InvalidArgument(label + ": depth_multiplier * in_depth not equal to out_depth");

    const int64_t stride = strides[h_dim];
    int64_t out_rows = 0, pad_top = 0, pad_bottom = 0, out_cols = 0, pad_left = 0, pad_right = 0;
    if (padding == Padding::kExplicit) {
        pad_top = attrs.explicit_paddings_[2 * h_dim];
        pad_bottom = attrs.explicit_paddings_[2 * h_dim + 1];
        pad_left = attrs.explicit_paddings_[2 * w_dim];
        pad_right = attrs.explicit_paddings_[2 * w_dim + 1];
    }
    // TF passes dilation 1 here (it ignores dilations); gradtune computes the
    // dilated gradient, so the effective filter size uses the real dilation.
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSizeVerbose(in[h_dim], filter.shape[0], dilations[h_dim], stride,
                                                              padding, &out_rows, &pad_top, &pad_bottom));
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSizeVerbose(in[w_dim], filter.shape[1], dilations[w_dim], stride,
                                                              padding, &out_cols, &pad_left, &pad_right));
    if (out[h_dim] != out_rows)
        return InvalidArgument(label + ": Number of rows of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[h_dim]) + ", computed = " + std::to_string(out_rows));
    if (out[w_dim] != out_cols)
        return InvalidArgument(label + ": Number of cols of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[w_dim]) + ", computed = " + std::to_string(out_cols));

    p->input_shape = in;
    p->stride = stride;
    p->dilation_rows = dilations[h_dim];
    p->dilation_cols = dilations[w_dim];
    p->pad_top = pad_top;
    p->pad_left = pad_left;
    p->zeros = out_backprop.num_elements() == 0 || filter.num_elements() == 0;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(filter.dtype);
    p->info.output_dtypes = {filter.dtype};
    p->info.output_shapes = {p->input_shape};
    p->info.data_format = tf::DataFormatName(format);
    p->info.structure = {{"depth_multiplier", static_cast<int>(multiplier)},
                         {"dilation_height", dilations[h_dim]},
                         {"dilation_width", dilations[w_dim]},
                         {"filter_height", static_cast<int>(filter.shape[0])},
                         {"filter_width", static_cast<int>(filter.shape[1])},
                         {"stride", static_cast<int>(stride)}};
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, attrs.explicit_paddings_, format);
    p->info.shape = {{"N", in[n_dim]}, {"H", in[h_dim]}, {"W", in[w_dim]}, {"C", in_depth}};
    return Status::OK();
}

// What Execute refuses once a call is valid, from the output's element count
// alone: the Compute that allocates the output asks first, so that an output
// Execute would refuse is never allocated (and zero-filled) for nothing.
Status Refusal(const Prepared &p, const ConstTensorRef &out_backprop, const ConstTensorRef &filter,
               int64_t output_elements) {
    if (output_elements == 0 || p.zeros) return Status::OK();
    return internal::check_int32_elements({output_elements, out_backprop.num_elements(), filter.num_elements()});
}

Status Execute(const Prepared &p, const ConstTensorRef &filter, const ConstTensorRef &out_backprop,
               const TensorRef &output, const RunOptions &options) {
    if (output.num_elements() == 0) return Status::OK();
    if (p.zeros) {
        // TF leaves the output uninitialised for M = 0; gradtune returns zeros
        // (spec 15.2), as for an empty out_backprop or filter.
        std::memset(output.data, 0, static_cast<size_t>(output.num_elements()) * DataTypeSize(output.dtype));
        return Status::OK();
    }
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, out_backprop, filter, output.num_elements()));
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    // Halide dimension orders (innermost first): activations (c, w, h, n);
    // the filter [FH, FW, C, M] as (m, c, fw, fh).
    const std::array<int, 4> activations = p.format == DataFormat::kNHWC ? std::array<int, 4>{3, 2, 1, 0}
                                                                         : std::array<int, 4>{1, 3, 2, 0};
    HalideBuffer filter_buffer(filter.dtype, filter.shape, filter.data, {3, 2, 1, 0});
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, activations);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, activations);

    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride), static_cast<int32_t>(p.dilation_rows),
        static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left),
        filter_buffer.get(), out_backprop_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {filter_buffer.get(), out_backprop_buffer.get()});
}

}  // namespace

Status DepthwiseConv2dNativeBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                                   const ConstTensorRef &out_backprop,
                                                   const std::vector<int> &strides, std::string_view padding,
                                                   const TensorRef &output, const Attrs &attrs,
                                                   const RunOptions &options) {
    Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Prepare(input_sizes, filter, out_backprop, strides, padding, attrs, &p));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckCallerOutput(output, filter.dtype, p.input_shape, "input_sizes"));
    return Execute(p, filter, out_backprop, output, options);
}

Status DepthwiseConv2dNativeBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                                   const ConstTensorRef &out_backprop,
                                                   const std::vector<int> &strides, std::string_view padding,
                                                   Tensor *output, const Attrs &attrs, const RunOptions &options) {
    Prepared p;
    GRADTUNE_RETURN_IF_ERROR(Prepare(input_sizes, filter, out_backprop, strides, padding, attrs, &p));
    // TF's OOM first, then what Execute would refuse, before allocating.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckOutputFits(filter.dtype, p.input_shape));
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, out_backprop, filter, NumElements(p.input_shape)));
    Tensor result;
    GRADTUNE_RETURN_IF_ERROR(tf::AllocateOutput(filter.dtype, p.input_shape, &result));
    GRADTUNE_RETURN_IF_ERROR(Execute(p, filter, out_backprop, result.ref(), options));
    *output = std::move(result);
    return Status::OK();
}

namespace internal {

OpEntry depthwise_conv2d_native_backprop_input_entry() {
    OpEntry entry;
    entry.spec = {kOp,
                  {"input_sizes", "filter", "out_backprop"},
                  {"int32", "T", "T"},
                  {"output"},
                  {{"strides", AttrKind::kIntList, true, std::vector<int64_t>{}},
                   {"padding", AttrKind::kString, true, std::string()},
                   {"explicit_paddings", AttrKind::kIntList, false, std::vector<int64_t>{}},
                   {"data_format", AttrKind::kString, false, std::string("NHWC")},
                   {"dilations", AttrKind::kIntList, false, std::vector<int64_t>{1, 1, 1, 1}}}};
    // Reads the call's inputs and attrs into the typed API's arguments.
    auto unpack = [spec = entry.spec](const OpCall &call, ConstTensorRef *input_sizes, ConstTensorRef *filter,
                                      ConstTensorRef *out_backprop, std::vector<int> *strides, std::string *padding,
                                      DepthwiseConv2dNativeBackpropInput::Attrs *attrs) -> Status {
        GRADTUNE_RETURN_IF_ERROR(GetInput(call, "input_sizes", input_sizes));
        GRADTUNE_RETURN_IF_ERROR(GetInput(call, "filter", filter));
        GRADTUNE_RETURN_IF_ERROR(GetInput(call, "out_backprop", out_backprop));
        GRADTUNE_RETURN_IF_ERROR(GetIntList(call, spec, "strides", strides));
        GRADTUNE_RETURN_IF_ERROR(GetString(call, spec, "padding", padding));
        GRADTUNE_RETURN_IF_ERROR(GetIntList(call, spec, "explicit_paddings", &attrs->explicit_paddings_));
        GRADTUNE_RETURN_IF_ERROR(GetString(call, spec, "data_format", &attrs->data_format_));
        GRADTUNE_RETURN_IF_ERROR(GetIntList(call, spec, "dilations", &attrs->dilations_));
        return Status::OK();
    };
    entry.run = [unpack](const OpCall &call, const Outputs &outputs, const RunOptions &options) -> Status {
        ConstTensorRef input_sizes, filter, out_backprop;
        std::vector<int> strides;
        std::string padding;
        DepthwiseConv2dNativeBackpropInput::Attrs attrs;
        GRADTUNE_RETURN_IF_ERROR(unpack(call, &input_sizes, &filter, &out_backprop, &strides, &padding, &attrs));
        return run_single_output(outputs, [&](auto output) {
            return DepthwiseConv2dNativeBackpropInput::Compute(input_sizes, filter, out_backprop, strides, padding,
                                                               output, attrs, options);
        });
    };
    entry.describe = [unpack](const OpCall &call, CallInfo *info) -> Status {
        ConstTensorRef input_sizes, filter, out_backprop;
        std::vector<int> strides;
        std::string padding;
        DepthwiseConv2dNativeBackpropInput::Attrs attrs;
        GRADTUNE_RETURN_IF_ERROR(unpack(call, &input_sizes, &filter, &out_backprop, &strides, &padding, &attrs));
        Prepared p;
        GRADTUNE_RETURN_IF_ERROR(Prepare(input_sizes, filter, out_backprop, strides, padding, attrs, &p));
        *info = p.info;
        return Status::OK();
    };
    return entry;
}

}  // namespace internal

}  // namespace gradtune
