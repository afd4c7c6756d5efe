// A Conv2D gradient in a 16-bit float (bfloat16, float16) as its float32
// call: the operands widened to float32 in scratch memory (exact), the
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
// mixed_bfloat16 step of the model ran at 0.28x TensorFlow's. The
// conversions are passes over memory, small beside a convolution's work,
// but not nothing beside a 1x1 call's: which way serves a call that a 16-bit
// variant fits is measured on its first call (dispatch.h's probes); one
// that only the generic variant fits takes the detour without a probe.
#pragma once

#include <cstdint>

#include "dispatch.h"
#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

// The most scratch memory the float32 copies (operands and output) may
// take: above it the 16-bit kernels serve the call, without a probe.
constexpr int64_t kFloat32DetourScratchBytes = int64_t{512} << 20;

// Whether a call can run as its float32 call: a Conv2DBackpropInput or
// Conv2DBackpropFilter in bfloat16 or float16, on the CPU, without a forced
// variant or external kernel, whose float32 copies fit
// kFloat32DetourScratchBytes.
bool float32_detour_fits(const CallInfo &info, const RunOptions &options);

// The call in float32, as dispatch sees it.
CallInfo float32_twin(const CallInfo &info);

// Which way a signature runs (GRADTUNE_FLOAT32_DETOUR=detour|direct forces
// it): the detour where only the generic variant fits the 16-bit call,
// else measured on its first call (unknown before); where probes are off,
// the 16-bit kernels.
DetourChoice float32_detour_choice(const CallInfo &info, const RunOptions &options);
DetourDecisions &float32_detour_decisions();

// `to` (float32, dense, from's element count) = `from` (bfloat16 or
// float16), exactly.
void widen_to_float32(const ConstTensorRef &from, float *to, ParallelRunner *parallel);
// `to` (bfloat16 or float16) = `from` (float32, to's element count), each
// rounded to nearest even (NaN stays NaN), as the 16-bit kernels round.
void narrow_from_float32(const float *from, const TensorRef &to, ParallelRunner *parallel);

}  // namespace gradtune::internal
