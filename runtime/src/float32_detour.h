// A convolution gradient (dense or depthwise) in a 16-bit float (bfloat16,
// float16) as its float32 call: the operands widened to float32 in scratch memory (exact), the
// float32 call with all it has (records, structure defaults, detours), and
// its output rounded once to the 16-bit type, to nearest even. That is the
// sum the 16-bit kernels compute (docs/tf-ops.md section 15.5: 16-bit floats
// accumulate in float32 and round once), in the float32 kernels' order.
//
// The 16-bit structures have few variants of their own: the tuned suites
// name float32. A call that no 16-bit default or record fits runs the
// generic variant, which converts every operand where it reads it: DCGAN's
// 16x16x64 <- 8x8x128 5x5 stride-2 input gradient at N=32 took 100 ms in
// bfloat16 against 4.6 ms in float32 (Zen 4, gradtune-bench), and a Keras
// mixed_bfloat16 step of the model ran at 0.28x TensorFlow's; EfficientNet's
// 5x5 depthwise input gradients ran 2.3-2.8x slower in bfloat16 than in
// float32. The
// conversions are passes over memory, small beside a convolution's work,
// but not nothing beside a 1x1 call's or a depthwise one's (a bfloat16 5x5
// depthwise filter gradient of 28x28x240 took 1.74 ms as its float32 call
// against 1.65 ms on the generic variant): which way serves is measured on
// the signature's first call (dispatch.h's probes).
#pragma once

#include <cstdint>

#include "dispatch.h"
#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "scratch.h"

namespace gradtune::internal {

// The most scratch memory the float32 copies (operands and output) may
// take: above it the 16-bit kernels serve the call, without a probe.
constexpr int64_t kFloat32DetourScratchBytes = int64_t{512} << 20;

// Whether a call can run as its float32 call: a Conv2DBackpropInput,
// Conv2DBackpropFilter or depthwise gradient in bfloat16 or float16, on the
// CPU, without a forced variant or external kernel, whose float32 copies fit
// kFloat32DetourScratchBytes.
bool float32_detour_fits(const CallInfo &info, const RunOptions &options);

// The call in float32, as dispatch sees it.
CallInfo float32_twin(const CallInfo &info);

// Which way a signature runs (GRADTUNE_FLOAT32_DETOUR=detour|direct forces
// it): measured on its first call (unknown before); where probes are off,
// the detour where only the generic variant fits the 16-bit call, else its
// 16-bit kernels.
DetourChoice float32_detour_choice(const CallInfo &info, const RunOptions &options);
DetourDecisions &float32_detour_decisions();

// `to` (float32, dense, from's element count) = `from` (bfloat16 or
// float16), exactly.
void widen_to_float32(const ConstTensorRef &from, float *to, ParallelRunner *parallel);
// `to` (bfloat16 or float16) = `from` (float32, to's element count), each
// rounded to nearest even (NaN stays NaN), as the 16-bit kernels round.
void narrow_from_float32(const float *from, const TensorRef &to, ParallelRunner *parallel);

// A 16-bit call as its float32 call, or on its own 16-bit kernels
// (`direct(options)`), as the signature's choice says (on its first call,
// measured): `widened(q, tensor, out_backprop, output, options)` runs the
// float32 call `q` (the prepared call `p` with the float32 twin as its info)
// on the float32 copies.
template <typename Prepared, typename Widened, typename Direct>
Status run_direct_or_float32(const Prepared &p, const ConstTensorRef &tensor, const ConstTensorRef &out_backprop,
                             const TensorRef &output, const RunOptions &options, Widened widened, Direct direct) {
    auto detour = [&]() -> Status {
        auto copy = [](ScratchBuffer which, const std::vector<int64_t> &shape) {
            return TensorRef{DataType::kFloat, shape,
                             scratch_buffer(which, static_cast<size_t>(NumElements(shape)) * sizeof(float))};
        };
        const TensorRef t = copy(ScratchBuffer::float32_operand, tensor.shape);
        const TensorRef dy = copy(ScratchBuffer::float32_activation, out_backprop.shape);
        const TensorRef out = copy(ScratchBuffer::float32_output, output.shape);
        // No memory for the copies (they fit kFloat32DetourScratchBytes, but
        // the allocation can still fail): the 16-bit kernels, which need none.
        if (!t.data || !dy.data || !out.data) return direct(options);
        widen_to_float32(tensor, static_cast<float *>(t.data), options.parallel);
        widen_to_float32(out_backprop, static_cast<float *>(dy.data), options.parallel);
        Prepared q = p;
        q.info = float32_twin(p.info);
        // The float32 call's own probe (a record of another shape or class
        // serves it only once measured faster), as a call of its own.
        probe_dispatch(q.info, options,
                       [&](const RunOptions &o) { return widened(q, ConstTensorRef(t), ConstTensorRef(dy), out, o); });
        GRADTUNE_RETURN_IF_ERROR(widened(q, ConstTensorRef(t), ConstTensorRef(dy), out, options));
        narrow_from_float32(static_cast<const float *>(out.data), output, options.parallel);
        return Status::OK();
    };
    DetourChoice choice = float32_detour_choice(p.info, options);
    if (!choice.known && !probe_running_here()) {
        // The float32 call once first, unreported, so that its own probes
        // (records, the pointwise detour) decide; then both ways.
        {
            const QuietRun quiet;
            GRADTUNE_RETURN_IF_ERROR(detour());
        }
        GRADTUNE_RETURN_IF_ERROR(
            probe_two_ways(float32_detour_decisions(), p.info, detour, [&] { return direct(options); }));
        choice = float32_detour_choice(p.info, options);
    }
    return choice.detour ? detour() : direct(options);
}

}  // namespace gradtune::internal
