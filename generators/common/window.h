// TF window geometry for the generators, shared by every conv-like op.
//
// Backprop-input ops are written as gathers: input position h (one spatial
// dimension) receives out_backprop[o] * filter[k] for every filter tap k with
//     o * stride - pad_before + k * dilation == h,   0 <= o < O,  0 <= k < F.
// With t = h + pad_before that is o = (t - k * dilation) / stride, valid only
// when the division is exact. TapGather enumerates exactly the valid taps,
// so that the reduction never visits a tap whose contribution is zero.
#pragma once

#include "Halide.h"

#include <numeric>
#include <string>

namespace gradtune::window {

// Modular inverse of a mod m (gcd(a, m) == 1, m >= 1), by search: m is a
// stride, so tiny.
inline int inverse_mod(int a, int m) {
    for (int x = 0; x < m; x++) {
        if ((a * x) % m == 1 % m) return x;
    }
    return 0;
}

class TapGather {
public:
    // t: the padded input position (h + pad_before), >= 0.
    // fixed_stride / fixed_dilation: compile-time values, or 0 to use the
    // run-time `stride` / `dilation` expressions.
    // filter_size: the number of taps F (constant or run time).
    TapGather(Halide::Expr t, int fixed_stride, Halide::Expr stride, int fixed_dilation,
              Halide::Expr dilation, Halide::Expr filter_size)
        : t_(t), filter_size_(filter_size) {
        fixed_ = fixed_stride > 0 && fixed_dilation > 0;
        if (fixed_) {
            // Both known: (t - k*d) % s == 0 holds for k = k0 + s'*j only, with
            // g = gcd(s, d), s' = s/g, d' = d/g, and t % g == 0 required;
            // k0 = (t/g) * inverse(d' mod s') mod s'.
            stride_ = fixed_stride;
            dilation_ = fixed_dilation;
            const int g = std::gcd(fixed_stride, fixed_dilation);
            phase_step_ = fixed_stride / g;
            const int inverse = inverse_mod((fixed_dilation / g) % phase_step_, phase_step_);
            gcd_ = g;
            first_tap_ = phase_step_ == 1 ? Halide::Expr(0) : ((t / g) * inverse) % phase_step_;
            count_ = (filter_size + (phase_step_ - 1)) / phase_step_;
        } else {
            // Run-time stride or dilation: visit every tap, keep the exact ones.
            stride_ = fixed_stride > 0 ? Halide::Expr(fixed_stride) : stride;
            dilation_ = fixed_dilation > 0 ? Halide::Expr(fixed_dilation) : dilation;
            count_ = filter_size;
        }
    }

    // Extent of the reduction over j (independent of t).
    Halide::Expr count() const { return count_; }

    // The filter tap visited at reduction index j.
    Halide::Expr tap(Halide::Expr j) const {
        return fixed_ ? first_tap_ + phase_step_ * j : j;
    }

    // The tap as a filter index that bounds inference can trust: tap(j) may
    // pass the end of the filter where valid(j) is false.
    Halide::Expr clamped_tap(Halide::Expr j) const {
        return fixed_ && phase_step_ == 1 ? tap(j) : Halide::clamp(tap(j), 0, filter_size_ - 1);
    }

    // Whether reduction index j contributes; const true when it always does.
    Halide::Expr valid(Halide::Expr j) const {
        if (!fixed_) return (t_ - j * dilation_) % stride_ == 0;
        Halide::Expr ok = Halide::Internal::const_true();
        if (gcd_ > 1) ok = ok && t_ % gcd_ == 0;
        if (phase_step_ > 1) ok = ok && tap(j) < filter_size_;
        return ok;
    }

    // The out_backprop position read at reduction index j (exact division
    // where valid(j); may fall outside [0, O), where out_backprop reads 0).
    Halide::Expr source(Halide::Expr j) const {
        return (t_ - tap(j) * dilation_) / stride_;
    }

private:
    Halide::Expr t_, filter_size_;
    bool fixed_ = false;
    Halide::Expr stride_, dilation_;
    int gcd_ = 1, phase_step_ = 1;
    Halide::Expr first_tap_, count_;
};

// Accumulator type of TF semantics under the gradtune policy (docs/tf-ops.md
// section 15.5): 16-bit floats accumulate in float32 and round once; others in
// their own type.
inline Halide::Type accumulator_type(Halide::Type t) {
    return t.is_float() && t.bits() < 32 ? Halide::Float(32) : t;
}

// T -> accumulator type. bfloat16 is widened through its bits (it is the
// upper half of a float32, so this is exact): Halide 21's CUDA backend
// crashes on bfloat16 casts, and the bit form is the same on every target.
inline Halide::Expr widen(Halide::Expr value, Halide::Type accumulator) {
    if (value.type().is_bfloat()) {
        Halide::Expr bits = Halide::cast(Halide::UInt(32), Halide::reinterpret(Halide::UInt(16), value));
        return Halide::cast(accumulator, Halide::reinterpret(Halide::Float(32), bits << 16));
    }
    return Halide::cast(accumulator, value);
}

// Whether Halide emits AVX512_BF16's vdpbf16ps (a pair of bfloat16
// products summed into each float32 lane) for `target`.
inline bool has_bf16_dot(const Halide::Target &target) {
    using Halide::Target;
    return target.arch == Target::X86 &&
           (target.has_feature(Target::AVX512_SapphireRapids) || target.has_feature(Target::AVX512_Zen4) ||
            target.has_feature(Target::AVX512_Zen5));
}

// `f` (a 4-D Func of 16-bit values) widened to the accumulator type, named
// `name`. The CPU generators of the dense gradients define the copies that
// their schedules stage or pack so (OpGenerator::copied): a copy then holds
// float32, converted once per element copied, and the register tile's inner
// loop is float32's. Converted where it is read instead, every broadcast
// operand of a bfloat16 filter gradient took a 16-bit load, a shift and a
// broadcast (3 instructions, one on the FMA's port 5) per FMA, and bfloat16
// and float16 ran at half of float32's speed (zoo rows X5 and X7, Intel
// Xeon, x86-64-linux-avx512_sapphirerapids). The sums are unchanged:
// widening is exact, so the products are the same wherever it happens.
inline Halide::Func widened(const Halide::Func &f, Halide::Type accumulator, const std::string &name) {
    Halide::Var a{"a"}, b{"b"}, c{"c"}, d{"d"};
    Halide::Func out{name};
    out(a, b, c, d) = widen(f(a, b, c, d), accumulator);
    return out;
}

// Accumulator -> T, rounding once to nearest even (bfloat16 through its bits,
// for the reason above; NaN stays NaN).
inline Halide::Expr narrow(Halide::Expr value, Halide::Type t) {
    if (t.is_bfloat()) {
        Halide::Expr bits = Halide::reinterpret(Halide::UInt(32), Halide::cast(Halide::Float(32), value));
        Halide::Expr rounded = (bits + (0x7fff + ((bits >> 16) & 1))) >> 16;
        Halide::Expr nan = (bits & 0x7fffffff) > 0x7f800000;
        Halide::Expr half = Halide::select(nan, (bits >> 16) | 0x40, rounded);
        return Halide::reinterpret(t, Halide::cast(Halide::UInt(16), half));
    }
    return Halide::cast(t, value);
}

}  // namespace gradtune::window
