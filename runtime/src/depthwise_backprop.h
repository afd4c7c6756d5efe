// What the two depthwise gradients (DepthwiseConv2dNativeBackpropInput and
// DepthwiseConv2dNativeBackpropFilter) share: TF runs both through one set
// of checks (depthwise_conv_grad_op.cc: the kernel constructor, then
// EXTRACT_AND_VERIFY_DIMENSIONS), in the same order and with the same texts
// apart from the label, and both ops' kernels take the same geometry. Each
// op checks its own tensor types first (docs/tf-ops.md sections 3 and 4).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "float32_detour.h"
#include "gradtune/op_call.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "halide_call.h"
#include "nhwc_detour.h"
#include "op_entry.h"
#include "tf_checks.h"

namespace gradtune::internal {

// Which of the two ops: one operand gives its shape by value (input_sizes or
// filter_sizes), the other is a tensor (filter or input).
struct DepthwiseBackpropOp {
    const char *op;           // the op's name, for CallInfo
    const char *label;        // TF's label: "DepthwiseConv2DBackpropInput" / "...Filter"
    const char *sizes_name;   // "input_sizes" or "filter_sizes"
    const char *tensor_name;  // "filter" or "input"
    const char *sizes_label;  // TF's rank text names "Conv2DBackpropInput" / "Conv2DBackpropFilter"
    bool sizes_are_input;     // true: the sizes give the input's shape, else the filter's
};

// The call, as both ops see it.
struct DepthwiseBackpropCall {
    const DepthwiseBackpropOp &op;
    const ConstTensorRef &sizes;   // the 1-D int32 shape operand
    const ConstTensorRef &tensor;  // the other operand: the filter (sizes are the input's) or the input
    const ConstTensorRef &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding, data_format;
    const std::vector<int> &explicit_paddings, &dilations;
};

// What the checks found: the kernels' geometry and the call's description.
// The output is the operand the sizes describe, of the tensor's dtype.
struct DepthwiseBackpropPrepared {
    CallInfo info;
    std::vector<int64_t> input_shape, filter_shape;  // data_format order; [FH, FW, C, M]
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int64_t stride = 1, dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: out_backprop or the tensor operand is empty
};

// TF's checks from the padding attr on, in TF's order with TF's texts.
Status PrepareDepthwiseBackprop(const DepthwiseBackpropCall &call, DepthwiseBackpropPrepared *p);

// The same with the typed API's strides, padding and Attrs.
template <typename Attrs>
Status PrepareDepthwiseBackprop(const DepthwiseBackpropOp &op, const ConstTensorRef &sizes,
                                const ConstTensorRef &tensor, const ConstTensorRef &out_backprop,
                                const std::vector<int> &strides, std::string_view padding, const Attrs &attrs,
                                DepthwiseBackpropPrepared *p) {
    return PrepareDepthwiseBackprop({op, sizes, tensor, out_backprop, strides, padding, attrs.data_format_,
                                     attrs.explicit_paddings_, attrs.dilations_},
                                    p);
}

// What both ops' Execute() would refuse, from the output's element count:
// tensors of 2**31 or more elements (int32 Halide indices).
inline Status DepthwiseBackpropRefusal(const DepthwiseBackpropPrepared &p, int64_t output_elements,
                                       const ConstTensorRef &tensor, const ConstTensorRef &out_backprop) {
    if (output_elements == 0 || p.zeros) return Status::OK();
    return check_int32_elements({output_elements, out_backprop.num_elements(), tensor.num_elements()});
}

// Both ops' Execute(): zeros where no kernel needs to run, else the kernel
// (a 16-bit call as its float32 call where that is faster: float32_detour.h;
// an NCHW call on the NHWC kernels where only the generic variant has its
// layout: nhwc_detour.h),
// whose Halide signature (the op's generated header, so that a mismatch is a
// compile error) takes the geometry, then the tensor operand, out_backprop
// and the output. Halide dimension orders (innermost first): activations
// (c, w, h, n); the filter [FH, FW, C, M] as (m, c, fw, fh). The tensor
// operand is the filter where the sizes give the input's shape, else the
// input; the output is the other one.
// A 16-bit call first meets the float32 detour (float32_detour.h), unless
// `may_widen` is false: the detour's own "direct" way.
template <typename KernelSignature>
Status ExecuteDepthwiseBackprop(const DepthwiseBackpropOp &op, const DepthwiseBackpropPrepared &p,
                                const ConstTensorRef &tensor, const ConstTensorRef &out_backprop,
                                const TensorRef &output, const RunOptions &options, bool may_widen = true) {
    if (output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(DepthwiseBackpropRefusal(p, output.num_elements(), tensor, out_backprop));
    if (may_widen && float32_detour_fits(p.info, options))
        return run_direct_or_float32(
            p, tensor, out_backprop, output, options,
            [&](const DepthwiseBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                const TensorRef &out, const RunOptions &o) {
                return ExecuteDepthwiseBackprop<KernelSignature>(op, q, t, dy, out, o);
            },
            [&](const RunOptions &o) {
                return ExecuteDepthwiseBackprop<KernelSignature>(op, p, tensor, out_backprop, output, o,
                                                                 /*may_widen=*/false);
            });
    if (p.format == tf::DataFormat::kNCHW && detour_to_nhwc(p.info, options))
        return run_on_nhwc(p, /*operand_is_activation=*/!op.sizes_are_input, tensor, out_backprop, output, options.parallel,
                           [&](const DepthwiseBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                               const TensorRef &out) {
                               return ExecuteDepthwiseBackprop<KernelSignature>(op, q, t, dy, out, options);
                           });
    KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));
    const std::array<int, 4> activations = activation_order(p.format), filter = {3, 2, 1, 0};
    HalideBuffer tensor_buffer(tensor.dtype, tensor.shape, tensor.data, op.sizes_are_input ? filter : activations);
    HalideBuffer out_backprop_buffer(out_backprop.dtype, out_backprop.shape, out_backprop.data, activations);
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, op.sizes_are_input ? activations : filter);
    int result = call.kernel<KernelSignature>()(
        call.user_context(), static_cast<int32_t>(p.stride), static_cast<int32_t>(p.dilation_rows),
        static_cast<int32_t>(p.dilation_cols), static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left),
        tensor_buffer.get(), out_backprop_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {tensor_buffer.get(), out_backprop_buffer.get()});
}

// Compute()'s arguments but the output and the options: TF's inputs in TF's
// order (input_sizes, filter or input, filter_sizes; then out_backprop) and
// attrs.
template <typename Attrs>
struct DepthwiseBackpropArgs {
    const ConstTensorRef &first, &second, &out_backprop;
    const std::vector<int> &strides;
    std::string_view padding;
    const Attrs &attrs;
};

// Either op's part of the shared front end (op_entry.h): kOp says which,
// Kernel is the Halide signature of its variants (its generated header, so
// that a call that does not match is a compile error).
template <const DepthwiseBackpropOp &kOp, typename Kernel, typename Attrs>
struct DepthwiseBackpropDefinition : ConvolutionDefinition<DepthwiseBackpropArgs<Attrs>, 3> {
    using Args = DepthwiseBackpropArgs<Attrs>;
    using Prepared = DepthwiseBackpropPrepared;
    static constexpr const char *kShapeInput = kOp.sizes_name;
    // T's allowed dtypes, in TF's order.
    static constexpr DataType kTypes[] = {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
    // TF's first two inputs: the sizes first for the input gradient, second
    // for the filter's.
    static constexpr int kSizesIndex = kOp.sizes_are_input ? 0 : 1;
    static constexpr const char *kFirst = kOp.sizes_are_input ? kOp.sizes_name : kOp.tensor_name;
    static constexpr const char *kSecond = kOp.sizes_are_input ? kOp.tensor_name : kOp.sizes_name;

    static const ConstTensorRef &sizes(const Args &args) { return kOp.sizes_are_input ? args.first : args.second; }
    static const ConstTensorRef &tensor(const Args &args) { return kOp.sizes_are_input ? args.second : args.first; }

    static OpSpec Spec() {
        return ConvolutionSpec(kOp.op, {kFirst, kSecond, "out_backprop"},
                               {kSizesIndex == 0 ? "int32" : "T", kSizesIndex == 1 ? "int32" : "T", "T"},
                               /*use_cudnn_on_gpu=*/false);
    }

    static Status Prepare(const Args &args, Prepared *p) {
        GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument(kFirst, args.first));
        GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument(kSecond, args.second));
        GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("out_backprop", args.out_backprop));
        // Op definition: T (from the tensor operand), input types; then the
        // checks both depthwise gradients share, from the attr values on.
        const ConstTensorRef &t = tensor(args);
        GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(t.dtype, kTypes));
        GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp.op, kSizesIndex, DataType::kInt32, sizes(args).dtype));
        GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(kOp.op, 2, t.dtype, args.out_backprop.dtype));
        return PrepareDepthwiseBackprop(kOp, sizes(args), t, args.out_backprop, args.strides, args.padding, args.attrs,
                                        p);
    }

    static Status Refusal(const Prepared &p, const Args &args, int64_t output_elements, const RunOptions &) {
        return DepthwiseBackpropRefusal(p, output_elements, tensor(args), args.out_backprop);
    }

    // TF leaves the output uninitialised for M = 0; gradtune returns zeros
    // (docs/tf-ops.md section 15.2), as for an empty out_backprop or filter.
    static Status Execute(const Prepared &p, const Args &args, const TensorRef &output, const RunOptions &options) {
        return ExecuteDepthwiseBackprop<Kernel>(kOp, p, tensor(args), args.out_backprop, output, options);
    }
};

}  // namespace gradtune::internal
