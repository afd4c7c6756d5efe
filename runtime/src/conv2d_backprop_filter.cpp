// Conv2DBackpropFilter: TF validation (docs/tf-ops.md section 7, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
//
// TF's default CPU kernel (Conv2DCustomBackpropFilterOp) refuses NCHW,
// dilations and grouped filters; gradtune supports all three (docs/tf-ops.md
// section 15.1), so those refusals are replaced by the checks of TF's
// dilation-capable kernel (Conv2DBackpropFilterOp, the GPU one) for the values
// that stay invalid. The shape checks keep the CPU kernel's label
// "Conv2DCustomBackpropFilter".
#include "gradtune/conv2d_backprop_filter.h"

#include <algorithm>

#include "Conv2DBackpropFilter_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "conv2d_backprop.h"
#include "conv_backprop_shape.h"
#include "dispatch.h"
#include "op_entry.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using tf::DataFormat;
using tf::Padding;

constexpr const char *kOp = "Conv2DBackpropFilter";
constexpr const char *kLabel = "Conv2DCustomBackpropFilter";  // TF's CPU kernel label (docs/tf-ops.md section 1.5)

// The Halide signature of every variant (generators/conv2d_backprop_filter_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&Conv2DBackpropFilter_cpu_float32_NHWC_generic);

// Compute()'s arguments but the output and the options.
struct Args {
    const ConstTensorRef &input, &filter_sizes, &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding;
    const Conv2DBackpropFilter::Attrs &attrs;
};

// The op's part of the shared front end (op_entry.h).
struct Definition : internal::ConvolutionDefinition<Args, 3> {
    using Prepared = internal::Conv2DBackpropPrepared;
    static constexpr const char *kShapeInput = "filter_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
    static OpSpec Spec();
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

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
    GRADTUNE_RETURN_IF_ERROR(tf::ConvBackpropComputeDimensionsV2(kLabel, input.shape, filter_shape, out_backprop.shape,
                                                                 attrs.dilations_, strides, padding,
                                                                 attrs.explicit_paddings_, format, &dims));
    // TF returns here, before any other check, when the filter is empty
    // (Execute does the same).
    const bool empty_filter = NumElements(filter_shape) == 0;

    // TF checks that the filter has FH * FW * in_depth * out_depth elements
    // (CVE-2021-29540), which every grouped filter fails. gradtune computes the
    // legal groups (docs/tf-ops.md section 15.1) and keeps TF's refusal for the
    // rest: zero groups (input depth 0) and an output depth that is not a
    // multiple of the groups.
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
        if (!empty_filter && !p->zeros && !internal::FitsKernelIndices(d))
            return Unimplemented("gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }
    const int64_t groups = std::max<int64_t>(1, legal_groups);

    internal::DescribeConv2DBackprop(kOp, input.dtype, filter_shape, filter_shape, groups, dims, padding,
                                     attrs.explicit_paddings_, strides, attrs.dilations_, p);
    return Status::OK();
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    return internal::Conv2DBackpropRefusal(p, output_elements, args.input, args.out_backprop);
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    return internal::ExecuteConv2DBackprop<KernelSignature>(p, /*output_is_input=*/false, args.input, args.out_backprop,
                                                            output, options);
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input", "filter_sizes", "out_backprop"}, {"T", "int32", "T"},
                                     /*use_cudnn_on_gpu=*/true);
}

}  // namespace

Status Conv2DBackpropFilter::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status Conv2DBackpropFilter::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry conv2d_backprop_filter_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
