// DepthwiseConv2dNativeBackpropFilter: TF validation (docs/tf-ops.md section 4,
// in TF's order, with TF's texts), geometry, dispatch and the kernel call, as
// both depthwise gradients share them (depthwise_backprop.h).
#include "gradtune/depthwise_conv2d_native_backprop_filter.h"

#include "DepthwiseConv2dNativeBackpropFilter_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "depthwise_backprop.h"
#include "op_entry.h"

namespace gradtune {

namespace {

// TF's label (capital D in 2D); its rank check of filter_sizes names the dense op.
constexpr internal::DepthwiseBackpropOp kDepthwiseOp{
    "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2DBackpropFilter", "filter_sizes", "input",
    "Conv2DBackpropFilter", /*sizes_are_input=*/false};

// The Halide signature of every variant (generators/depthwise_conv2d_native_backprop_filter_generator.cpp).
using KernelSignature = decltype(&DepthwiseConv2dNativeBackpropFilter_cpu_float32_NHWC_generic);
using Definition = internal::DepthwiseBackpropDefinition<kDepthwiseOp, KernelSignature,
                                                         DepthwiseConv2dNativeBackpropFilter::Attrs>;

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
