// Conv2DBackpropInput: TF validation (docs/tf-ops.md section 6, in TF's
// order, with TF's texts), geometry, dispatch and the kernel call.
//
// TF's default CPU kernel (Conv2DCustomBackpropInputOp) refuses NCHW,
// dilations and grouped filters; gradtune supports all three (docs/tf-ops.md
// section 15.1), so those refusals are replaced by the checks of TF's
// dilation-capable kernel (Conv2DBackpropInputOp, the GPU one) for the values
// that stay invalid. The shape checks keep the CPU kernel's label
// "Conv2DCustomBackpropInput".
#include "gradtune/conv2d_backprop_input.h"

#include "Conv2DBackpropInput_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "conv2d_backprop.h"
#include "conv_backprop_shape.h"
#include "dispatch.h"
#include "op_entry.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

using tf::DataFormat;
using tf::Padding;

constexpr const char *kOp = "Conv2DBackpropInput";
constexpr const char *kLabel = "Conv2DCustomBackpropInput";  // TF's CPU kernel label (docs/tf-ops.md section 1.5)

// The Halide signature of every variant (generators/conv2d_backprop_input_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&Conv2DBackpropInput_cpu_float32_NHWC_generic);

// Compute()'s arguments but the output and the options.
struct Args {
    const ConstTensorRef &input_sizes, &filter, &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding;
    const Conv2DBackpropInput::Attrs &attrs;
};

// The op's part of the shared front end (op_entry.h).
struct Definition : internal::ConvolutionDefinition<Args, 3> {
    using Prepared = internal::Conv2DBackpropPrepared;
    static constexpr const char *kShapeInput = "input_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble,
                                          DataType::kInt32};
    static OpSpec Spec();
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
    // TF's CPU kernel refuses every grouped filter here; gradtune computes the
    // legal ones (docs/tf-ops.md section 15.1: G = in_depth / Cg >= 1 groups
    // and an output depth that is a multiple of G) and keeps TF's refusal for
    // the rest.
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
        if (NumElements(input_shape) > 0 && !p->zeros && !internal::FitsKernelIndices(d))
            return Unimplemented("gradtune: spatial sizes, paddings or strides of 2**31 or more are not supported");
    }

    internal::DescribeConv2DBackprop(kOp, filter.dtype, input_shape, filter.shape, groups, dims, padding,
                                     attrs.explicit_paddings_, strides, attrs.dilations_, p);
    return Status::OK();
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    return internal::Conv2DBackpropRefusal(p, output_elements, args.filter, args.out_backprop);
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    return internal::ExecuteConv2DBackprop<KernelSignature>(p, /*output_is_input=*/true, args.filter, args.out_backprop,
                                                            output, options);
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input_sizes", "filter", "out_backprop"}, {"int32", "T", "T"},
                                     /*use_cudnn_on_gpu=*/true);
}

}  // namespace

Status Conv2DBackpropInput::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status Conv2DBackpropInput::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry conv2d_backprop_input_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
