// Conv2DBackpropFilter: TF validation (spec/tf-ops.md section 7, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
//
// TF's default CPU kernel (Conv2DCustomBackpropFilterOp) refuses NCHW,
// dilations and grouped filters; gradtune supports all three (spec 15.1), so
// those refusals are replaced by the checks of TF's dilation-capable kernel
// (Conv2DBackpropFilterOp, the GPU one) for the values that stay invalid. The
// shape checks keep the CPU kernel's label "Conv2DCustomBackpropFilter".
#include "gradtune/conv2d_backprop_filter.h"

#include <algorithm>

#include "Conv2DBackpropFilter_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
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

constexpr const char *kOp = "Conv2DBackpropFilter";
constexpr const char *kLabel = "Conv2DCustomBackpropFilter";  // TF's CPU kernel label (spec 1.5)

// The Halide signature of every variant (generators/conv2d_backprop_filter_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&Conv2DBackpropFilter_cpu_float32_NHWC_generic);

struct Prepared {
    CallInfo info;
    std::vector<int64_t> filter_shape;  // the output's shape, [FH, FW, Cg, O]
    DataFormat format = DataFormat::kNHWC;
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t groups = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: input or out_backprop is empty
};

// The op's part of the shared front end (op_entry.h).
struct Definition {
    struct Args {
        const ConstTensorRef &input, &filter_sizes, &out_backprop;
        const std::vector<int> &strides;
        std::string_view padding;
        const Conv2DBackpropFilter::Attrs &attrs;
    };
    struct Values {
        ConstTensorRef input, filter_sizes, out_backprop;
        std::vector<int> strides;
        std::string padding;
        Conv2DBackpropFilter::Attrs attrs;
        Args args() const { return {input, filter_sizes, out_backprop, strides, padding, attrs}; }
    };
    using Prepared = gradtune::Prepared;
    static constexpr const char *kShapeInput = "filter_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
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
    const auto &[input, filter_sizes, out_backprop, strides, padding_text, attrs] = args;
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input", input));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter_sizes", filter_sizes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", out_backprop));

    // Op definition: T, input types, attr values.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(input.dtype, kTypes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 1, DataType::kInt32, filter_sizes.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 2, input.dtype, out_backprop.dtype));
    Padding padding;
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(padding_text, &padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(attrs.data_format_, &p->format));
    const DataFormat format = p->format;

    // Kernel constructor: strides, paddings, then dilations (this kernel's
    // order; a batch/depth stride or dilation is InvalidArgument here, not
    // Unimplemented as in Conv2DBackpropInput). TF's CPU kernel refuses NCHW
    // and every dilation but 1.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckConv2DBackpropStrides(strides, format, StatusCode::kInvalidArgument));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckValidPadding(padding, attrs.explicit_paddings_, format));
    GRADTUNE_RETURN_IF_ERROR(
        tf::CheckConv2DBackpropDilations(attrs.dilations_, format, StatusCode::kInvalidArgument));

    // Compute.
    if (filter_sizes.dims() != 1)
        return InvalidArgument(std::string(kLabel) + ": filter_sizes input must be 1-dim, not " +
                               std::to_string(filter_sizes.dims()));
    std::vector<int64_t> filter_shape;
    GRADTUNE_RETURN_IF_ERROR(tf::MakeShape(filter_sizes, &filter_shape));
    tf::ConvBackpropDimensions dims;
    GRADTUNE_RETURN_IF_ERROR(tf::ConvBackpropComputeDimensionsV2(kLabel, input.shape, filter_shape,
                                                                  out_backprop.shape, attrs.dilations_, strides,
                                                                  padding, attrs.explicit_paddings_, format, &dims));
    p->filter_shape = filter_shape;
    // TF returns here, before any other check, when the filter is empty
    // (Execute does the same).
    const bool empty_filter = NumElements(filter_shape) == 0;

    // TF checks that the filter has FH * FW * in_depth * out_depth elements
    // (CVE-2021-29540), which every grouped filter fails. gradtune computes
    // the legal groups (spec 15.1) and keeps TF's refusal for the rest:
    // zero groups (input depth 0) and an output depth that is not a multiple
    // of the groups.
    const int64_t filter_in_depth = filter_shape[2];
    const int64_t legal_groups = tf::LegalConv2DGroups(dims.in_depth, filter_in_depth, dims.out_depth);
    if (!empty_filter && dims.in_depth != filter_in_depth && legal_groups == 0) {
        const int64_t requested = tf::MultiplySaturated(
            tf::MultiplySaturated(dims.spatial_dims[0].filter_size, dims.spatial_dims[1].filter_size),
            tf::MultiplySaturated(dims.in_depth, dims.out_depth));
        return InvalidArgument("filter_size does not have enough elements, requested " + std::to_string(requested) +
                               ", got " + std::to_string(NumElements(filter_shape)));
    }
    // (TF's next check, a GEMM work size of 0 (CVE-2021-29538), cannot fail
    // once the filter is not empty.)
    // An empty input (TF: testConv2DBackpropFilterWithEmptyInput) or an
    // out_backprop without positions gives zeros. Only calls that run a
    // kernel need int32 indices.
    p->zeros = input.num_elements() == 0 || out_backprop.num_elements() == 0;
    for (const tf::ConvBackpropSpatialDimension &d : dims.spatial_dims) {
        if (!empty_filter && !p->zeros && !FitsKernelIndices(d))
            return Unimplemented("gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }
    const int64_t groups = std::max<int64_t>(1, legal_groups);

    const int h_dim = tf::DimIndex(format, 'H'), w_dim = tf::DimIndex(format, 'W');
    p->stride_rows = strides[h_dim];
    p->stride_cols = strides[w_dim];
    p->dilation_rows = attrs.dilations_[h_dim];
    p->dilation_cols = attrs.dilations_[w_dim];
    p->groups = groups;
    p->pad_top = dims.spatial_dims[0].forward_pad_before;
    p->pad_left = dims.spatial_dims[1].forward_pad_before;
    p->info.op = kOp;
    p->info.dtype = DataTypeName(input.dtype);
    p->info.output_dtypes = {input.dtype};
    p->info.output_shapes = {p->filter_shape};
    p->info.data_format = tf::DataFormatName(format);
    const Conv2DBackpropStructure structure{.dilation_height = static_cast<int>(p->dilation_rows),
                                            .dilation_width = static_cast<int>(p->dilation_cols),
                                            .filter_height = static_cast<int>(filter_shape[0]),
                                            .filter_width = static_cast<int>(filter_shape[1]),
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
    const ConstTensorRef &out_backprop = args.out_backprop, &input = args.input;
    if (output_elements == 0 || p.zeros) return Status::OK();
    return internal::check_int32_elements({output_elements, out_backprop.num_elements(), input.num_elements()});
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    const ConstTensorRef &input = args.input, &out_backprop = args.out_backprop;
    if (internal::output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Refusal(p, args, output.num_elements(), options));
    internal::KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));

    // Halide dimension orders (innermost first): activations (c, w, h, n);
    // the filter gradient [FH, FW, Cg, O] as (o, ci, fw, fh).
    const std::array<int, 4> activations = internal::activation_order(p.format);
    HalideBuffer input_buffer(input.dtype, input.shape, input.data, activations);
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, activations);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, {3, 2, 1, 0});

    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride_rows), static_cast<int32_t>(p.stride_cols),
        static_cast<int32_t>(p.dilation_rows), static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.groups),
        static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left), input_buffer.get(),
        out_backprop_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {input_buffer.get(), out_backprop_buffer.get()});
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input", "filter_sizes", "out_backprop"}, {"T", "int32", "T"},
                                     /*use_cudnn_on_gpu=*/true);
}

Status Definition::Unpack(const OpCall &call, const OpSpec &spec, Values *v) {
    return internal::UnpackConvolution(call, spec, {&v->input, &v->filter_sizes, &v->out_backprop}, v);
}

}  // namespace

Status Conv2DBackpropFilter::Compute(const ConstTensorRef &input, const ConstTensorRef &filter_sizes,
                                     const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                                     std::string_view padding, const TensorRef &output, const Attrs &attrs,
                                     const RunOptions &options) {
    return internal::Compute<Definition>({input, filter_sizes, out_backprop, strides, padding, attrs}, output, options);
}

Status Conv2DBackpropFilter::Compute(const ConstTensorRef &input, const ConstTensorRef &filter_sizes,
                                     const ConstTensorRef &out_backprop, const std::vector<int> &strides,
                                     std::string_view padding, Tensor *output, const Attrs &attrs,
                                     const RunOptions &options) {
    return internal::Compute<Definition>({input, filter_sizes, out_backprop, strides, padding, attrs}, output, options);
}

namespace internal {

OpEntry conv2d_backprop_filter_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
