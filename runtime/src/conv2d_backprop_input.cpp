// Conv2DBackpropInput: TF validation (spec/tf-ops.md section 6, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
//
// TF's default CPU kernel (Conv2DCustomBackpropInputOp) refuses NCHW,
// dilations and grouped filters; gradtune supports all three (spec 15.1), so
// those refusals are replaced by the checks of TF's dilation-capable kernel
// (Conv2DBackpropInputOp, the GPU one) for the values that stay invalid. The
// shape checks keep the CPU kernel's label "Conv2DCustomBackpropInput".
#include "gradtune/conv2d_backprop_input.h"

#include "Conv2DBackpropInput_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "conv_backprop_shape.h"
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

constexpr const char *kOp = "Conv2DBackpropInput";
constexpr const char *kLabel = "Conv2DCustomBackpropInput";  // TF's CPU kernel label (spec 1.5)

// The Halide signature of every variant (generators/conv2d_backprop_input_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&Conv2DBackpropInput_cpu_float32_NHWC_generic);

struct Prepared {
    CallInfo info;
    std::vector<int64_t> input_shape;  // the output's shape, data_format order
    DataFormat format = DataFormat::kNHWC;
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t groups = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: out_backprop or filter is empty
};

// The op's part of the shared front end (op_entry.h).
struct Definition {
    struct Args {
        const ConstTensorRef &input_sizes, &filter, &out_backprop;
        const std::vector<int> &strides;
        std::string_view padding;
        const Conv2DBackpropInput::Attrs &attrs;
    };
    struct Values {
        ConstTensorRef input_sizes, filter, out_backprop;
        std::vector<int> strides;
        std::string padding;
        Conv2DBackpropInput::Attrs attrs;
        Args args() const { return {input_sizes, filter, out_backprop, strides, padding, attrs}; }
    };
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "input_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble,
                                          DataType::kInt32};
    static OpSpec Spec();
    static Status Unpack(const OpCall &call, const OpSpec &spec, Values *v);
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

// Whether every index the kernel computes in one spatial dimension fits in
// int32 (Halide's index type): the padded input, the effective filter and a
// stride of slack.
bool FitsKernelIndices(const tf::ConvBackpropSpatialDimension &d) {
    const int64_t effective_filter = tf::EffectiveFilterSize(d.filter_size, d.dilation);
    const int64_t reach = d.input_size + d.forward_pad_before + d.forward_pad_after + effective_filter + d.stride;
    return reach < INT32_MAX && d.output_size * d.stride < INT32_MAX;
}

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

    // Kernel constructor: strides, dilations, then paddings. (TF's CPU
    // kernel refuses NCHW here, and every dilation but 1.)
    GRADTUNE_RETURN_IF_ERROR(tf::CheckConv2DBackpropStrides(strides, format, StatusCode::kUnimplemented));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckConv2DBackpropDilations(attrs.dilations_, format, StatusCode::kUnimplemented));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckValidPadding(padding, attrs.explicit_paddings_, format));

    // Compute. TF's message names input_sizes but counts out_backprop's rank.
    if (out_backprop.dims() != 4)
        return InvalidArgument("input_sizes must be 4-dimensional, got: " + std::to_string(out_backprop.dims()));
    std::vector<int64_t> input_shape;
    GRADTUNE_RETURN_IF_ERROR(
        tf::Conv2DBackpropComputeInputShape(input_sizes, filter.shape, out_backprop.shape, format, &input_shape));
    tf::ConvBackpropDimensions dims;
    GRADTUNE_RETURN_IF_ERROR(tf::ConvBackpropComputeDimensionsV2(kLabel, input_shape, filter.shape,
                                                                  out_backprop.shape, attrs.dilations_, strides,
                                                                  padding, attrs.explicit_paddings_, format, &dims));
    // TF's CPU kernel refuses every grouped filter here; gradtune computes
    // the legal ones (spec 15.1: G = in_depth / Cg >= 1 groups and an output
    // depth that is a multiple of G) and keeps TF's refusal for the rest.
    const int64_t filter_in_depth = filter.shape[2];
    const int64_t groups = tf::LegalConv2DGroups(dims.in_depth, filter_in_depth, dims.out_depth);
    if (groups == 0)
        return InvalidArgument(
            "Gradients for grouped convolutions are not supported on CPU. Please file a feature request if you "
            "run into this issue. Computed input depth " +
            std::to_string(dims.in_depth) + " doesn't match filter input depth " + std::to_string(filter_in_depth));
    // (TF then checks out_depth == filter dim 3, which ConvBackpropComputeDimensionsV2
    // has already made true, and later that the GEMM work size is not 0 for a
    // non-empty call (CVE-2021-29525), which cannot fail once empty
    // out_backprop and output are handled in Execute.)
    // An empty out_backprop gives zeros (TF's fix for CVE-2022-35999); so
    // does a filter with no taps (TF's GEMM then adds nothing). Only calls
    // that run a kernel need int32 indices.
    p->zeros = out_backprop.num_elements() == 0 || filter.num_elements() == 0;
    for (const tf::ConvBackpropSpatialDimension &d : dims.spatial_dims) {
        if (NumElements(input_shape) > 0 && !p->zeros && !FitsKernelIndices(d))
            return Unimplemented("gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }

    const int h_dim = tf::DimIndex(format, 'H'), w_dim = tf::DimIndex(format, 'W');
    p->input_shape = input_shape;
    p->stride_rows = strides[h_dim];
    p->stride_cols = strides[w_dim];
    p->dilation_rows = attrs.dilations_[h_dim];
    p->dilation_cols = attrs.dilations_[w_dim];
    p->groups = groups;
    p->pad_top = dims.spatial_dims[0].forward_pad_before;
    p->pad_left = dims.spatial_dims[1].forward_pad_before;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(filter.dtype);
    p->info.output_dtypes = {filter.dtype};
    p->info.output_shapes = {p->input_shape};
    p->info.data_format = tf::DataFormatName(format);
    const Conv2DBackpropStructure structure{.dilation_height = static_cast<int>(p->dilation_rows),
                                            .dilation_width = static_cast<int>(p->dilation_cols),
                                            .filter_height = static_cast<int>(filter.shape[0]),
                                            .filter_width = static_cast<int>(filter.shape[1]),
                                            .groups = static_cast<int>(groups),
                                            .stride_height = static_cast<int>(p->stride_rows),
                                            .stride_width = static_cast<int>(p->stride_cols)};
    p->info.structure = structure.values();
    p->info.padding = tf::PaddingName(padding);
    p->info.explicit_paddings = tf::SpatialPaddings(padding, attrs.explicit_paddings_, format);
    p->info.shape = {{"N", dims.batch_size},
                     {"H", dims.spatial_dims[0].input_size},
                     {"W", dims.spatial_dims[1].input_size},
                     {"C", dims.in_depth},
                     {"O", dims.out_depth}};
    return Status::OK();
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    if (output_elements == 0 || p.zeros) return Status::OK();
    return internal::check_int32_elements(
        {output_elements, args.out_backprop.num_elements(), args.filter.num_elements()});
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    if (internal::output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    const ConstTensorRef &filter = args.filter, &out_backprop = args.out_backprop;
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    // Halide dimension orders (innermost first): activations (c, w, h, n);
    // the filter [FH, FW, Cg, O] as (o, ci, fw, fh).
    const std::array<int, 4> activations = internal::activation_order(p.format);
    HalideBuffer filter_buffer(filter.dtype, filter.shape, filter.data, {3, 2, 1, 0});
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, activations);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, activations);

    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride_rows), static_cast<int32_t>(p.stride_cols),
        static_cast<int32_t>(p.dilation_rows), static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.groups),
        static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left), filter_buffer.get(),
        out_backprop_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {filter_buffer.get(), out_backprop_buffer.get()});
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input_sizes", "filter", "out_backprop"}, {"int32", "T", "T"},
                                     /*use_cudnn_on_gpu=*/true);
}

Status Definition::Unpack(const OpCall &call, const OpSpec &spec, Values *v) {
    return internal::UnpackConvolution(call, spec, {&v->input_sizes, &v->filter, &v->out_backprop}, v);
}

}  // namespace

Status Conv2DBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                    const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                                    std::string_view padding, const TensorRef &output, const Attrs &attrs,
                                    const RunOptions &options) {
    return internal::Compute<Definition>({input_sizes, filter, out_backprop, strides, padding, attrs}, output, options);
}

Status Conv2DBackpropInput::Compute(const ConstTensorRef &input_sizes, const ConstTensorRef &filter,
                                    const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                                    std::string_view padding, Tensor *output, const Attrs &attrs,
                                    const RunOptions &options) {
    return internal::Compute<Definition>({input_sizes, filter, out_backprop, strides, padding, attrs}, output, options);
}

namespace internal {

OpEntry conv2d_backprop_input_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
