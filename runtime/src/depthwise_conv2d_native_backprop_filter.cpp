// DepthwiseConv2dNativeBackpropFilter: TF validation (docs/tf-ops.md section 4,
// in TF's order, with TF's texts), geometry, dispatch and the kernel call.
#include "gradtune/depthwise_conv2d_native_backprop_filter.h"

#include "DepthwiseConv2dNativeBackpropFilter_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "depthwise_backprop.h"
#include "dispatch.h"
#include "halide_call.h"
#include "op_entry.h"
#include "tf_checks.h"

namespace gradtune {

namespace {

constexpr const char *kOp = "DepthwiseConv2dNativeBackpropFilter";
// TF's label (capital D in 2D); its rank check of filter_sizes names the dense op.
constexpr internal::DepthwiseBackpropOp kDepthwiseOp{kOp, "DepthwiseConv2DBackpropFilter", "filter_sizes",
                                                     "Conv2DBackpropFilter", /*sizes_are_input=*/false};

// The Halide signature of every variant (generators/depthwise_conv2d_native_backprop_filter_generator.cpp),
// as the generated header declares it: a call that does not match is a
// compile error.
using KernelSignature = decltype(&DepthwiseConv2dNativeBackpropFilter_cpu_float32_NHWC_generic);

// Compute()'s arguments but the output and the options.
struct Args {
    const ConstTensorRef &input, &filter_sizes, &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding;
    const DepthwiseConv2dNativeBackpropFilter::Attrs &attrs;
};

// The op's part of the shared front end (op_entry.h).
struct Definition : internal::ConvolutionDefinition<Args, 3> {
    using Prepared = internal::DepthwiseBackpropPrepared;
    static constexpr const char *kShapeInput = "filter_sizes";
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
    static OpSpec Spec();
    static Status Prepare(const Args &args, Prepared *p);
    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &options);
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options);
};

Status Definition::Prepare(const Args &args, Prepared *p) {
    const auto &[input, filter_sizes, out_backprop, strides, padding, attrs] = args;
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input", input));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter_sizes", filter_sizes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", out_backprop));

    // Op definition: T (from input #0), input types; then the checks both
    // depthwise gradients share, from the attr values on.
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(input.dtype, kTypes));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 1, DataType::kInt32, filter_sizes.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp, 2, input.dtype, out_backprop.dtype));
    return internal::PrepareDepthwiseBackprop(kDepthwiseOp, filter_sizes, input, out_backprop, strides, padding, attrs,
                                              p);
}

Status Definition::Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
    return internal::DepthwiseBackpropRefusal(p, output_elements, args.input, args.out_backprop);
}

Status Definition::Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
    return internal::ExecuteDepthwiseBackprop<KernelSignature>(kDepthwiseOp, p, args.input, args.out_backprop, output,
                                                               options);
}

OpSpec Definition::Spec() {
    return internal::ConvolutionSpec(kOp, {"input", "filter_sizes", "out_backprop"}, {"T", "int32", "T"},
                                     /*use_cudnn_on_gpu=*/false);
}

}  // namespace

Status DepthwiseConv2dNativeBackpropFilter::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status DepthwiseConv2dNativeBackpropFilter::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry depthwise_conv2d_native_backprop_filter_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
