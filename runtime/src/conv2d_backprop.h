// What the two Conv2D gradients (Conv2DBackpropInput and
// Conv2DBackpropFilter) share once TF's checks have passed: the kernels'
// geometry, the call's description for dispatch, the int32 limits and the
// kernel call. Their kernels take the same geometry and one tensor operand
// (the filter, or the input) besides out_backprop. Each op keeps its own
// checks, in TF's order (docs/tf-ops.md sections 6 and 7).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "channel_split.h"
#include "conv_backprop_shape.h"
#include "dilation_phases.h"
#include "dispatch.h"
#include "float32_detour.h"
#include "gradtune/op_call.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "group_blocks.h"
#include "halide_call.h"
#include "nhwc_detour.h"
#include "scratch.h"
#include "taps_pointwise.h"
#include "tf_checks.h"

namespace gradtune::internal {

// What the checks found: the kernels' geometry and the call's description
// (info.output_shapes[0] is the output's shape).
struct Conv2DBackpropPrepared {
    CallInfo info;
    tf::DataFormat format = tf::DataFormat::kNHWC;
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t groups = 1, pad_top = 0, pad_left = 0;
    bool zeros = false;  // nothing reaches the output: an operand is empty
    // A pointwise call (PointwiseView): the kernels see each activation as
    // `pointwise_images` images of pointwise_rows x pointwise_cols positions
    // (0: as the call's tensors are shaped).
    int64_t pointwise_images = 0, pointwise_rows = 0, pointwise_cols = 0;
    // Channel slices of wider NHWC tensors (group_blocks.h): the channels in
    // memory of out_backprop and of the other activation (the input or the
    // input gradient), of which the call sees its own (0: dense tensors).
    int64_t out_backprop_pitch = 0, activation_pitch = 0;
};

// A 1x1 filter at stride 1 without padding makes a call pointwise: each
// output position depends on the same position of the operands alone, so
// the positions can be laid out in any grid of the same count. Small images
// (4x4 to 14x14 in the late stages of mobile and residual networks) are
// otherwise tiled along rows of a few columns and a few rows per image: a
// 4x4x960 <- 160 input gradient at N=8 took 0.97 ms, and 0.22 ms as 2 rows
// of 64 positions (Sapphire Rapids, gradtune-bench, one run), as fast as
// oneDNN with its own layouts. The view: NHWC, every position of the batch
// as rows of up to 64 columns (the largest divisor of the position count up
// to 64 that leaves at least two rows, for the threads); NCHW, each image's
// positions so (its channels lie between images). It applies only where
// rows get longer than the call's own. Dispatch, records and the journal see
// the view's shape (N, H, W), a legal call of the same computation, with
// VALID padding and dilation 1 (the same thing for a 1x1 filter).
void PointwiseView(Conv2DBackpropPrepared *p);

// Whether every index the kernel computes in one spatial dimension fits in
// int32 (Halide's index type): the padded input, the effective filter and a
// stride of slack.
bool FitsKernelIndices(const tf::ConvBackpropSpatialDimension &d);

// The geometry and description of a call that passed TF's checks: `op`, the
// output's dtype and shape, the filter's shape ([FH, FW, Cg, O]), the legal
// groups and TF's dimensions; strides, dilations and explicit paddings in
// data_format order (p->format is already set).
void DescribeConv2DBackprop(const char *op, DataType dtype, const std::vector<int64_t> &output_shape,
                            const std::vector<int64_t> &filter_shape, int64_t groups,
                            const tf::ConvBackpropDimensions &dims, tf::Padding padding,
                            const std::vector<int> &explicit_paddings, const std::vector<int> &strides,
                            const std::vector<int> &dilations, Conv2DBackpropPrepared *p);

// What both ops' Execute() would refuse, from the output's element count:
// tensors of 2**31 or more elements (int32 Halide indices).
inline Status Conv2DBackpropRefusal(const Conv2DBackpropPrepared &p, int64_t output_elements,
                                    const ConstTensorRef &tensor, const ConstTensorRef &out_backprop) {
    if (output_elements == 0 || p.zeros) return Status::OK();
    return check_int32_elements({output_elements, out_backprop.num_elements(), tensor.num_elements()});
}

// A dilated call at stride 1 as one undilated call of its phases
// (dilation_phases.h): `execute(q, tensor, out_backprop, output)` runs the
// undilated call `q` on the phases' images in scratch memory.
template <typename Execute>
Status RunOnPhases(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                   const ConstTensorRef &out_backprop, const TensorRef &output, ParallelRunner *parallel,
                   Execute execute) {
    const DilationPhases ph = dilation_phases(p.info);
    Conv2DBackpropPrepared q = p;
    q.info = phase_twin(p.info, ph);
    q.dilation_rows = q.dilation_cols = 1;
    q.pad_top = ph.pad_before[0];
    q.pad_left = ph.pad_before[1];
    const int64_t images = q.info.shape.at("N");
    const int64_t channels = output_is_input ? output.shape[3] : tensor.shape[3];
    const std::vector<int64_t> out_backprop_shape = {images, ph.twin_out[0], ph.twin_out[1], out_backprop.shape[3]};
    const std::vector<int64_t> input_shape = {images, ph.twin_input[0], ph.twin_input[1], channels};
    auto bytes = [&](const std::vector<int64_t> &shape) {
        return static_cast<size_t>(NumElements(shape)) * DataTypeSize(out_backprop.dtype);
    };
    void *out_backprop_phases = scratch_buffer(ScratchBuffer::phase_activation, bytes(out_backprop_shape));
    void *input_phases = scratch_buffer(output_is_input ? ScratchBuffer::phase_output : ScratchBuffer::phase_operand,
                                        bytes(input_shape));
    if (!out_backprop_phases || !input_phases)
        return ResourceExhausted("gradtune: no memory for the phases of a dilated call");
    gather_phases(ph, ph.out_backprop, out_backprop, out_backprop_phases, ph.twin_out[0], ph.twin_out[1], parallel);
    const ConstTensorRef dy{out_backprop.dtype, out_backprop_shape, out_backprop_phases};
    if (!output_is_input) {  // the filter gradient sums over the phases' images
        gather_phases(ph, ph.input, tensor, input_phases, ph.twin_input[0], ph.twin_input[1], parallel);
        return execute(q, ConstTensorRef{tensor.dtype, input_shape, input_phases}, dy, output);
    }
    GRADTUNE_RETURN_IF_ERROR(execute(q, tensor, dy, TensorRef{output.dtype, input_shape, input_phases}));
    scatter_phases(ph, ph.input, input_phases, ph.twin_input[0], ph.twin_input[1], output, parallel);
    return Status::OK();
}

// A grouped call as ungrouped calls of its group blocks (group_blocks.h):
// `execute(q, tensor, out_backprop, output, options)` runs the ungrouped call
// `q` of one block, its activations channel slices of the call's (q's
// pitches), its filter (or filter gradient) the block-diagonal one in the
// thread's scratch memory. Blocks write disjoint parts of the output. Where
// there are at least two blocks per thread, the blocks run at once, each on
// one thread (its kernel's loops serial): a block is a small call, and its
// own parallel loop cost more than its work (RegNetX-200MF's 368 channels in
// 46 groups of 8 at 4x4, N=8: 23 blocks of 0.02 ms each, Sapphire Rapids).
template <typename Execute>
Status RunOnGroupBlocks(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                        const ConstTensorRef &out_backprop, const TensorRef &output, const RunOptions &options,
                        Execute execute) {
    const GroupBlocks gb = group_blocks(p.info);
    Conv2DBackpropPrepared common = p;
    common.groups = 1;
    common.out_backprop_pitch = out_backprop.shape[3];
    common.activation_pitch = (output_is_input ? output.shape : tensor.shape)[3];
    const std::vector<int64_t> &f = output_is_input ? tensor.shape : output.shape;
    const size_t element = DataTypeSize(out_backprop.dtype);
    // Block b's channels of an NHWC activation whose groups hold `per_group` channels each.
    auto slice = [&](auto activation, int64_t per_group, int64_t b) {
        const int64_t offset = b * gb.per_block * per_group * static_cast<int64_t>(element);
        activation.shape[3] = gb.groups_of(b) * per_group;
        if constexpr (std::is_same_v<decltype(activation), TensorRef>)
            activation.data = static_cast<char *>(activation.data) + offset;
        else
            activation.data = static_cast<const char *>(activation.data) + offset;
        return activation;
    };
    auto run_block = [&](int64_t b, const RunOptions &block_options) -> Status {
        Conv2DBackpropPrepared q = common;
        q.info = block_twin(p.info, gb, b);
        const std::vector<int64_t> filter_shape = {f[0], f[1], gb.block_in(b), gb.block_out(b)};
        void *filter = scratch_buffer(ScratchBuffer::group_filter, static_cast<size_t>(NumElements(filter_shape)) * element);
        if (!filter) return ResourceExhausted("gradtune: no memory for the filter of a group block");
        const ConstTensorRef dy = slice(out_backprop, gb.out_channels, b);
        if (output_is_input) {
            block_filter(gb, b, tensor, filter);
            return execute(q, ConstTensorRef{tensor.dtype, filter_shape, filter}, dy, slice(output, gb.in_channels, b),
                           block_options);
        }
        GRADTUNE_RETURN_IF_ERROR(execute(q, slice(tensor, gb.in_channels, b), dy,
                                         TensorRef{output.dtype, filter_shape, filter}, block_options));
        unblock_filter(gb, b, filter, output);
        return Status::OK();
    };
    const int threads = options.parallel ? options.parallel->Threads() : PoolThreads();
    if (threads > 1 && gb.blocks() >= 2 * threads) {
        SerialRunner serial;
        RunOptions block_options = options;
        block_options.parallel = &serial;
        std::vector<Status> statuses(static_cast<size_t>(gb.blocks()));
        parallel_tasks(static_cast<int>(gb.blocks()), [&](int b) { statuses[b] = run_block(b, block_options); },
                       options.parallel);
        for (const Status &status : statuses) GRADTUNE_RETURN_IF_ERROR(status);
        return Status::OK();
    }
    for (int64_t b = 0; b < gb.blocks(); b++) GRADTUNE_RETURN_IF_ERROR(run_block(b, options));
    return Status::OK();
}

template <typename KernelSignature>
Status RunConv2DBackpropKernel(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                               const ConstTensorRef &out_backprop, const TensorRef &output,
                               const RunOptions &options);

// The stride-1 call of out_backprop's grid, the filter's taps as channels
// (taps_pointwise.h), as its own call: its own pointwise view and dispatch.
inline Conv2DBackpropPrepared taps_pointwise_prepared(const Conv2DBackpropPrepared &p, int64_t out_rows,
                                                      int64_t out_cols) {
    Conv2DBackpropPrepared q = p;
    q.info = taps_pointwise_twin(p.info, out_rows, out_cols);
    q.stride_rows = q.stride_cols = 1;
    q.pad_top = q.pad_left = 0;
    PointwiseView(&q);
    return q;
}

// A call as its pointwise call (taps_pointwise.h), or on its own kernels
// (`direct(options)`), whichever measured faster on the signature's first
// call: `pointwise(q, operand, out, options)` runs the stride-1 call `q`.
// An input gradient's operand is the filter read as [1, 1, FH FW C, O] and
// `out` its products, in scratch memory, then summed into place; a filter
// gradient's operand is the input's taps gathered as channels, in scratch
// memory, and `out` the filter gradient read as [1, 1, FH FW C, O].
template <typename Pointwise, typename Direct>
Status RunDirectOrTapsPointwise(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                                const ConstTensorRef &out_backprop, const TensorRef &output,
                                const RunOptions &options, Pointwise pointwise, Direct direct) {
    const std::vector<int64_t> &filter_shape = output_is_input ? tensor.shape : output.shape;
    TapsIntoPlace g;
    g.rows = out_backprop.shape[1];
    g.cols = out_backprop.shape[2];
    g.taps_rows = filter_shape[0];
    g.taps_cols = filter_shape[1];
    g.stride_rows = p.stride_rows;
    g.stride_cols = p.stride_cols;
    g.pad_top = p.pad_top;
    g.pad_left = p.pad_left;
    const Conv2DBackpropPrepared q = taps_pointwise_prepared(p, g.rows, g.cols);
    const int64_t taps_channels = g.taps_rows * g.taps_cols * filter_shape[2];
    const std::vector<int64_t> taps_filter_shape = {1, 1, taps_channels, filter_shape[3]};
    const std::vector<int64_t> shape = {out_backprop.shape[0], g.rows, g.cols, taps_channels};
    auto scratch = [&] {
        const size_t bytes = static_cast<size_t>(NumElements(shape)) * DataTypeSize(output.dtype);
        return TensorRef{output.dtype, shape, scratch_buffer(ScratchBuffer::taps_products, bytes)};
    };
    // The pointwise call on `columns` (the products, or the gathered taps).
    auto run_pointwise = [&](const TensorRef &columns, const RunOptions &o) {
        if (output_is_input)
            return pointwise(q, ConstTensorRef{tensor.dtype, taps_filter_shape, tensor.data}, columns, o);
        return pointwise(q, ConstTensorRef(columns), TensorRef{output.dtype, taps_filter_shape, output.data}, o);
    };
    auto detour = [&](const RunOptions &o) {
        const TensorRef columns = scratch();
        // No memory for the products: the strided kernels, which need none.
        if (!columns.data) return direct(o);
        if (!output_is_input) gather_taps(tensor, g, columns, o.parallel);
        GRADTUNE_RETURN_IF_ERROR(run_pointwise(columns, o));
        if (output_is_input) sum_taps_into_place(columns.data, g, output, o.parallel);
        return Status::OK();
    };
    DetourChoice choice = taps_pointwise_choice(p.info, options);
    if (!choice.known && !probe_running_here()) {
        // The pointwise call's own probe first (a nearest record for it
        // serves only once measured faster than its default), then both ways.
        const TensorRef columns = scratch();
        if (columns.data) {
            if (!output_is_input) gather_taps(tensor, g, columns, options.parallel);
            probe_dispatch(q.info, options, [&](const RunOptions &o) { return run_pointwise(columns, o); });
        }
        GRADTUNE_RETURN_IF_ERROR(probe_two_ways(
            taps_pointwise_decisions(), p.info, [&] { return detour(options); }, [&] { return direct(options); }));
        choice = taps_pointwise_choice(p.info, options);
    }
    return choice.detour ? detour(options) : direct(options);
}

// Both ops' Execute(): zeros where no kernel needs to run, else the kernel
// (a 16-bit call as its float32 call where that is faster: float32_detour.h;
// an NCHW call on the NHWC kernels where only the generic variant has its
// layout: nhwc_detour.h; a grouped call as ungrouped calls of its group
// blocks where only the generic variant has its groups: group_blocks.h; a
// dilated call as its undilated phases where only the generic variant has
// its dilation: dilation_phases.h), in two runs on slices of its output
// channels where the kernel's register tile does not divide a filter
// gradient's (channel_split.h),
// whose Halide signature (the op's generated header, so that a mismatch is a
// compile error) takes the geometry, then the tensor operand, out_backprop
// and the output. Halide dimension orders (innermost first): activations
// (c, w, h, n); a filter [FH, FW, Cg, O] as (o, ci, fw, fh). The tensor
// operand is the filter when the output is the input gradient
// (`output_is_input`), else the input; the output is the other one.
// A 16-bit call first meets the float32 detour (float32_detour.h), unless
// `may_widen` is false: the detour's own "direct" way.
template <typename KernelSignature>
Status ExecuteConv2DBackprop(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                             const ConstTensorRef &out_backprop, const TensorRef &output, const RunOptions &options,
                             bool may_widen = true) {
    if (output_without_kernel(output, p.zeros)) return Status::OK();
    GRADTUNE_RETURN_IF_ERROR(Conv2DBackpropRefusal(p, output.num_elements(), tensor, out_backprop));
    // Dense tensors only (a group block's activations are channel slices).
    if (may_widen && !p.out_backprop_pitch && !p.activation_pitch && float32_detour_fits(p.info, options))
        return run_direct_or_float32(
            p, tensor, out_backprop, output, options,
            [&](const Conv2DBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                const TensorRef &out, const RunOptions &o) {
                return ExecuteConv2DBackprop<KernelSignature>(q, output_is_input, t, dy, out, o);
            },
            [&](const RunOptions &o) {
                return ExecuteConv2DBackprop<KernelSignature>(p, output_is_input, tensor, out_backprop, output, o,
                                                              /*may_widen=*/false);
            });
    if (p.format == tf::DataFormat::kNCHW && detour_to_nhwc(p.info, options))
        return run_on_nhwc(p, /*operand_is_activation=*/!output_is_input, tensor, out_backprop, output, options.parallel,
                           [&](const Conv2DBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                               const TensorRef &out) {
                               return ExecuteConv2DBackprop<KernelSignature>(q, output_is_input, t, dy, out, options);
                           });
    if (detour_to_group_blocks(p.info, options) &&
        (!output_is_input || input_gradient_blocks_exact(group_blocks(p.info), out_backprop)))
        return RunOnGroupBlocks(p, output_is_input, tensor, out_backprop, output, options,
                                [&](const Conv2DBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                                    const TensorRef &out, const RunOptions &block_options) {
                                    return ExecuteConv2DBackprop<KernelSignature>(q, output_is_input, t, dy, out,
                                                                                  block_options);
                                });
    if (detour_to_phases(p.info, options))
        return RunOnPhases(p, output_is_input, tensor, out_backprop, output, options.parallel,
                           [&](const Conv2DBackpropPrepared &q, const ConstTensorRef &t, const ConstTensorRef &dy,
                               const TensorRef &out) {
                               return ExecuteConv2DBackprop<KernelSignature>(q, output_is_input, t, dy, out, options);
                           });
    int64_t rows = 0, cols = 0;
    // Dense tensors only: a group block's activations are channel slices
    // (pitches), which neither the products nor their sums into place take.
    if (p.format == tf::DataFormat::kNHWC && !p.out_backprop_pitch && !p.activation_pitch &&
        taps_pointwise_fits(p.info, options, &rows, &cols) && rows == out_backprop.shape[1] &&
        cols == out_backprop.shape[2])
        return RunDirectOrTapsPointwise(
            p, output_is_input, tensor, out_backprop, output, options,
            [&](const Conv2DBackpropPrepared &q, const ConstTensorRef &operand, const TensorRef &out,
                const RunOptions &o) {
                return ExecuteConv2DBackprop<KernelSignature>(q, output_is_input, operand, out_backprop, out, o);
            },
            [&](const RunOptions &o) {
                return RunConv2DBackpropKernel<KernelSignature>(p, output_is_input, tensor, out_backprop, output, o);
            });
    return RunConv2DBackpropKernel<KernelSignature>(p, output_is_input, tensor, out_backprop, output, options);
}

// The kernel dispatch chose for the call itself (no detour), on slices of
// a filter gradient's output channels where its tile does not divide them.
template <typename KernelSignature>
Status RunConv2DBackpropKernel(const Conv2DBackpropPrepared &p, bool output_is_input, const ConstTensorRef &tensor,
                               const ConstTensorRef &out_backprop, const TensorRef &output,
                               const RunOptions &options) {
    KernelCall call;
    GRADTUNE_RETURN_IF_ERROR(call.begin(p.info, options));
    const std::array<int, 4> activations = activation_order(p.format), filter = {3, 2, 1, 0};
    // An activation as the kernels see it: as shaped, or in the pointwise view.
    auto activation_shape = [&](const std::vector<int64_t> &shape) {
        if (!p.pointwise_cols) return shape;
        const int64_t channels = shape[tf::DimIndex(p.format, 'C')];
        return p.format == tf::DataFormat::kNHWC
                   ? std::vector<int64_t>{p.pointwise_images, p.pointwise_rows, p.pointwise_cols, channels}
                   : std::vector<int64_t>{p.pointwise_images, channels, p.pointwise_rows, p.pointwise_cols};
    };
    HalideBuffer tensor_buffer(tensor.dtype, output_is_input ? tensor.shape : activation_shape(tensor.shape),
                               tensor.data, output_is_input ? filter : activations,
                               output_is_input ? 0 : p.activation_pitch);
    // Output channels [first, first + count): the whole call, or one slice
    // of a filter gradient the kernel runs in two (channel_split.h).
    std::optional<HalideBuffer> out_backprop_buffer, output_buffer;
    auto run = [&](int64_t first, int64_t count) {
        const int64_t channels = out_backprop.shape[3];
        const bool slice = count != channels;
        const size_t offset = static_cast<size_t>(first) * DataTypeSize(out_backprop.dtype);
        std::vector<int64_t> dy_shape = activation_shape(out_backprop.shape), filter_shape = output.shape;
        if (slice) dy_shape[3] = filter_shape[3] = count;  // NHWC, filter gradient only
        out_backprop_buffer.emplace(out_backprop.dtype, dy_shape, static_cast<const char *>(out_backprop.data) + offset,
                                    activations, slice && !p.out_backprop_pitch ? channels : p.out_backprop_pitch);
        if (output_is_input) {
            output_buffer.emplace(output.dtype, activation_shape(output.shape), output.data, activations,
                                  p.activation_pitch);
        } else {
            output_buffer.emplace(output.dtype, filter_shape, static_cast<char *>(output.data) + offset, filter,
                                  slice ? channels : 0);
        }
        return call.kernel<KernelSignature>()(
            call.user_context(), static_cast<int32_t>(p.stride_rows), static_cast<int32_t>(p.stride_cols),
            static_cast<int32_t>(p.dilation_rows), static_cast<int32_t>(p.dilation_cols),
            static_cast<int32_t>(p.groups), static_cast<int32_t>(p.pad_top), static_cast<int32_t>(p.pad_left),
            tensor_buffer.get(), out_backprop_buffer->get(), output_buffer->get());
    };
    const int64_t split = output_is_input ? 0 : split_output_channels(p.info, options.device, call.output_channel_tile());
    int result = run(0, split ? split : out_backprop.shape[3]);
    if (result == 0 && split) result = run(split, out_backprop.shape[3] - split);
    return call.finish(result, output_buffer->get(), {tensor_buffer.get(), out_backprop_buffer->get()});
}

}  // namespace gradtune::internal
