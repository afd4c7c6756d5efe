// DepthwiseConv2dNativeBackpropInput: TF validation (docs/tf-ops.md section 3,
// in TF's order, with TF's texts), geometry, dispatch and the kernel call, as
// both depthwise gradients share them (depthwise_backprop.h).
#include "gradtune/depthwise_conv2d_native_backprop_input.h"

#include "DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic.h"  // generated: the kernels' signature
#include "depthwise_backprop.h"
#include "op_entry.h"

namespace gradtune {

namespace {

// TF's label (capital D in 2D); its rank check of input_sizes names the dense op.
constexpr internal::DepthwiseBackpropOp kDepthwiseOp{
    "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2DBackpropInput", "input_sizes", "filter",
    "Conv2DBackpropInput", /*sizes_are_input=*/true};

// The Halide signature of every variant (generators/depthwise_conv2d_native_backprop_input_generator.cpp).
using KernelSignature = decltype(&DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic);
using Definition = internal::DepthwiseBackpropDefinition<kDepthwiseOp, KernelSignature,
                                                         DepthwiseConv2dNativeBackpropInput::Attrs>;

}  // namespace

Status DepthwiseConv2dNativeBackpropInput::Run(const Call &call, const TensorRef &output) {
    return internal::RunConvolution<Definition>(call, output);
}

Status DepthwiseConv2dNativeBackpropInput::Run(const Call &call, Tensor *output) {
    return internal::RunConvolution<Definition>(call, output);
}

namespace internal {

OpEntry depthwise_conv2d_native_backprop_input_entry() { return MakeEntry<Definition>(); }

}  // namespace internal

}  // namespace gradtune
