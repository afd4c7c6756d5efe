// DepthwiseConv2dNativeBackpropInput: TF validation (spec/tf-ops.md section 3,
// in TF's order, with TF's texts), geometry, dispatch and the kernel call.
#include "gradtune/depthwise_conv2d_native_backprop_input.h"

#include "DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "dispatch.h"
#include "halide_call.h"
#include "op_entry.h"
#include "structures.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using internal::HalideBuffer;
using tf::DataFormat;
using tf::Padding;

constexpr const char *kOp = "DepthwiseConv2dNativeBackpropInput";
constexpr const char *kLabel = "DepthwiseConv2DBackpropInput";  // TF's label (capital D in 2D)

// The Halide signature of every variant (generators/depthwise_conv2d_native_backprop_input_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic);

struct Prepared {
    CallInfo info;
    std::vector<int64_t> input_shape;  // = input_sizes, data_format order
    DataFormat format = DataFormat::kNHWC;
    int64_t stride = 1, dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: out_backprop or filter is empty
};

// The op's part of the shared front end (op_entry.h).
struct Definition {
    struct Args {
        const ConstTensorRef &input_sizes, &filter, &out_backprop;
        const std::vector<int> &strides;
        std::string_view padding;
        const DepthwiseConv2dNativeBackpropInput::Attrs &attrs;
    };
    struct Values {
        ConstTensorRef input_sizes, filter, out_backprop;
        std::vector<int> strides;
        std::string padding;
        DepthwiseConv2dNativeBackpropInput::Attrs attrs;
        Args args() const { return {input_sizes, filter, out_backprop, strides, padding, attrs}; }
    };
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "input_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
    static OpSpec Spec();
    static Status Unpack(const OpCall &call, const OpSpec &spec, Values *v);
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

Status Definition::Prepare(const Args &args, Prepared *p) {
    const auto &[input_sizes, filter, out_backprop, strides, padding_text, attrs] = args;
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input_sizes", input_sizes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter", filter));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", out_backprop));

    // Op definition: T, input types, attr values.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(filter.dtype, kTypes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 0, DataType::kInt32, input_sizes.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 2, filter.dtype, out_backprop.dtype));
    Padding padding;
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(padding_text, &padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(attrs.data_format_, &p->format));
    const DataFormat format = p->format;
    const int n_dim = tf::DimIndex(format, 'N'), h_dim = tf::DimIndex(format, 'H');
    const int w_dim = tf::DimIndex(format, 'W'), c_dim = tf::DimIndex(format, 'C');

    // Kernel constructor (steps 1-5), then the dilations that gradtune honours.
    GRADTUNE_RETURN_IF_ERROR(
        tf::CheckDepthwiseBackpropAttrs(strides, padding, attrs.explicit_paddings_, attrs.dilations_, format));
    const std::vector<int> &dilations = attrs.dilations_;

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
    tf::Window2D window;
    // TF passes dilation 1 here (it ignores dilations); gradtune computes the
    // dilated gradient, so the effective filter size uses the real dilation.
    GRADTUNE_RETURN_IF_ERROR(tf::GetWindowedOutputSize2D(in, filter.shape[0], filter.shape[1], dilations[h_dim],
                                                         dilations[w_dim], stride, stride, padding,
                                                         attrs.explicit_paddings_, format, &window));
    if (out[h_dim] != window.rows)
        return InvalidArgument(label + ": Number of rows of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[h_dim]) + ", computed = " + std::to_string(window.rows));
    if (out[w_dim] != window.cols)
        return InvalidArgument(label + ": Number of cols of out_backprop doesn't match computed: actual = " +
                               std::to_string(out[w_dim]) + ", computed = " + std::to_string(window.cols));

    p->input_shape = in;
    p->stride = stride;
    p->dilation_rows = dilations[h_dim];
    p->dilation_cols = dilations[w_dim];
    p->pad_top = window.pad_top;
    p->pad_left = window.pad_left;
    p->zeros = out_backprop.num_elements() == 0 || filter.num_elements() == 0;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(filter.dtype);
    p->info.output_dtypes = {filter.dtype};
    p->info.output_shapes = {p->input_shape};
    p->info.data_format = tf::DataFormatName(format);
    const DepthwiseStructure structure{.depth_multiplier = static_cast<int>(multiplier),
                                       .dilation_height = dilations[h_dim],
                                       .dilation_width = dilations[w_dim],
                                       .filter_height = static_cast<int>(filter.shape[0]),
                                       .filter_width = static_cast<int>(filter.shape[1]),
                                       .stride = static_cast<int>(stride)};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, attrs.explicit_paddings_, format);
    p->info.shape = {{"N", in[n_dim]}, {"H", in[h_dim]}, {"W", in[w_dim]}, {"C", in_depth}};
    return Status::OK();
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    const ConstTensorRef &out_backprop = args.out_backprop, &filter = args.filter;
    if (output_elements == 0 || p.zeros) return Status::OK();
    return internal::check_int32_elements({output_elements, out_backprop.num_elements(), filter.num_elements()});
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    const ConstTensorRef &filter = args.filter, &out_backprop = args.out_backprop;
    // TF leaves the output uninitialised for M = 0; gradtune returns zeros
    // (spec 15.2), as for an empty out_backprop or filter.
    if (internal::output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
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

OpSpec Definition::Spec() {
    OpSpec spec;
    spec.name = kOp;
    spec.inputs = {"input_sizes", "filter", "out_backprop"};
    spec.input_types = {"int32", "T", "T"};
    spec.outputs = {"output"};
    spec.output_types = {"T"};
    spec.attrs = internal::ConvolutionAttrs(/*use_cudnn_on_gpu=*/false);
    return spec;
}

Status Definition::Unpack(const OpCall &call, const OpSpec &spec, Values *v) {
    using namespace internal;
    GRADTUNE_RETURN_IF_ERROR(GetInputs(call, spec, {&v->input_sizes, &v->filter, &v->out_backprop}));
    return GetConvolutionAttrs(call, spec, &v->strides, &v->padding, &v->attrs);
}

}  // namespace

Status DepthwiseConv2dNativeBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                                   const ConstTensorRef &out_backprop,
                                                   const std::vector<int> &strides, std::string_view padding,
                                                   const TensorRef &output, const Attrs &attrs,
                                                   const RunOptions &options) {
    return internal::Compute<Definition>({input_sizes, filter, out_backprop, strides, padding, attrs}, output, options);
}

Status DepthwiseConv2dNativeBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                                   const ConstTensorRef &out_backprop,
                                                   const std::vector<int> &strides, std::string_view padding,
                                                   Tensor *output, const Attrs &attrs, const RunOptions &options) {
    return internal::Compute<Definition>({input_sizes, filter, out_backprop, strides, padding, attrs}, output, options);
}

namespace internal {

OpEntry depthwise_conv2d_native_backprop_input_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
