// What the two forward convolutions (Conv2D and DepthwiseConv2dNative) share:
// their Compute() arguments, the op-definition checks TF runs first (the
// tensors, T, the filter's type, then the padding and data_format attrs;
// docs/tf-ops.md sections 2 and 5), and the kernel call, which both make with
// the input and the filter (an NCHW call on the NHWC kernels where only the
// generic variant has its layout: nhwc_detour.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "halide_call.h"
#include "nhwc_detour.h"
#include "tf_checks.h"

namespace gradtune::internal {

// Compute()'s arguments but the output and the options.
template <typename Attrs>
struct ForwardConvolutionArgs {
    const ConstTensorRef &input, &filter;
    const std::vector<int> &strides;
    std::string_view padding;
    const Attrs &attrs;
};

// What both ops' Prepare() finds that their kernel calls share: the call's
// description, the layout, the dilations and the leading pads.
struct ForwardConvolutionPrepared {
    CallInfo info;
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int64_t dilation_rows = 1, dilation_cols = 1, pad_top = 0, pad_left = 0;
};

// The window's leading pads, and the call's description: the op, T, the
// output's dtype and shape (N, OH, OW, C_out in `format`'s order) and the
// format.
inline void DescribeForwardConvolution(const char *op, DataType dtype, tf::DataFormat format, int64_t batch,
                                       const tf::Window2D &window, int64_t out_depth, ForwardConvolutionPrepared *p) {
    p->pad_top = window.pad_top;
    p->pad_left = window.pad_left;
    p->info.op = op;
    p->info.dtype = DataTypeName(dtype);
    p->info.output_dtypes = {dtype};
    p->info.output_shapes = {format == tf::DataFormat::kNHWC
                                 ? std::vector<int64_t>{batch, window.rows, window.cols, out_depth}
                                 : std::vector<int64_t>{batch, out_depth, window.rows, window.cols}};
    p->info.data_format = tf::DataFormatName(format);
}

// What the first checks read: the padding, the data format (also the
// Prepared's `format`) and its dimension indices.
struct ForwardConvolutionLayout {
    tf::Padding padding = tf::Padding::kValid;
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int n_dim = 0, h_dim = 0, w_dim = 0, c_dim = 0;
};

// TF's first checks of both ops, in TF's order: the tensors, T (from the
// input) among `types`, the filter's type, the padding and data_format attrs.
template <typename Attrs, typename Prepared, size_t N>
Status CheckForwardConvolution(const char *op, const ForwardConvolutionArgs<Attrs> &args, const DataType (&types)[N],
                               Prepared *p, ForwardConvolutionLayout *layout) {
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("input", args.input));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckTensorArgument("filter", args.filter));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckAllowedType(args.input.dtype, types));
    GRADTUNE_RETURN_IF_ERROR(tf::CheckInputType(op, 1, args.input.dtype, args.filter.dtype));
    GRADTUNE_RETURN_IF_ERROR(tf::ParsePadding(args.padding, &layout->padding));
    GRADTUNE_RETURN_IF_ERROR(tf::ParseDataFormat(args.attrs.data_format_, &layout->format));
    p->format = layout->format;
    layout->n_dim = tf::DimIndex(layout->format, 'N');
    layout->h_dim = tf::DimIndex(layout->format, 'H');
    layout->w_dim = tf::DimIndex(layout->format, 'W');
    layout->c_dim = tf::DimIndex(layout->format, 'C');
    return Status::OK();
}

// Both ops' kernel call, once their Execute() has returned where no kernel
// runs: an NCHW call that detours (nhwc_detour.h) runs the op's Execute() on
// the NHWC copies; else the kernel, whose Halide signature (the op's
// generated header, so that a mismatch is a compile error) takes the
// `geometry` scalars, then the input, the filter and the output. Halide
// dimension orders (innermost first): activations (c, w, h, n); the filter
// [FH, FW, ., .] as (., ., fw, fh).
template <typename Definition, typename KernelSignature, typename... Geometry>
Status CallForwardConvolution(const typename Definition::Prepared &p, const typename Definition::Args &args,
                              const TensorRef &output, const RunOptions &options, Geometry... geometry) {
    using Prepared = typename Definition::Prepared;
    const ConstTensorRef &input = args.input, &filter = args.filter;
    if (p.format == tf::DataFormat::kNCHW && detour_to_nhwc(p.info, options))
        return run_on_nhwc(p, /*operand_is_activation=*/false, filter, input, output, options.parallel,
                           [&](const Prepared &q, const ConstTensorRef &f, const ConstTensorRef &x,
                               const TensorRef &out) {
                               return Definition::Execute(q, {x, f, args.strides, args.padding, args.attrs}, out,
                                                          options);
                           });
    KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));
    const std::array<int, 4> activations = activation_order(p.format);
    HalideBuffer input_buffer(input.dtype, input.shape, input.data, activations);
    HalideBuffer filter_buffer(filter.dtype, filter.shape, filter.data, {3, 2, 1, 0});
    HalideBuffer output_buffer(output.dtype, output.shape, output.data, activations);
    int result = call.kernel<KernelSignature>()(call.user_context(), static_cast<int32_t>(geometry)...,
                                                input_buffer.get(), filter_buffer.get(), output_buffer.get());
    return call.finish(result, output_buffer.get(), {input_buffer.get(), filter_buffer.get()});
}

}  // namespace gradtune::internal
