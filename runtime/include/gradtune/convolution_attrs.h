// TF's optional attributes of the convolution ops, built like TF's C++ ops:
//   Conv2DBackpropInput::DataFormat("NCHW").Dilations({1, 1, 2, 2})
// Each op's Attrs derives from ConvolutionAttrs<Attrs> (the depthwise ops) or
// DenseConvolutionAttrs<Attrs> (the dense ops, which add TF's
// use_cudnn_on_gpu), and each op class from the matching *Shortcuts, which
// start a chain from the class: Op::DataFormat(x) == Op::Attrs().DataFormat(x).
// The op class gets its two Compute() overloads from ConvolutionOp (below).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune {

template <class Attrs>
struct ConvolutionAttrs {
    // "NHWC" or "NCHW".
    Attrs DataFormat(std::string_view x) const {
        Attrs a = self();
        a.data_format_ = std::string(x);
        return a;
    }
    // 4 values in data_format order; batch and channel must be 1.
    Attrs Dilations(std::vector<int> x) const {
        Attrs a = self();
        a.dilations_ = std::move(x);
        return a;
    }
    // With padding "EXPLICIT": 8 values, (before, after) per dimension in
    // data_format order.
    Attrs ExplicitPaddings(std::vector<int> x) const {
        Attrs a = self();
        a.explicit_paddings_ = std::move(x);
        return a;
    }
    std::string data_format_ = "NHWC";
    std::vector<int> dilations_ = {1, 1, 1, 1};
    std::vector<int> explicit_paddings_ = {};

private:
    const Attrs &self() const { return static_cast<const Attrs &>(*this); }
};

template <class Attrs>
struct DenseConvolutionAttrs : ConvolutionAttrs<Attrs> {
    // TF's use_cudnn_on_gpu: accepted for compatibility, no effect (gradtune
    // never calls cuDNN).
    Attrs UseCudnnOnGpu(bool x) const {
        Attrs a = static_cast<const Attrs &>(*this);
        a.use_cudnn_on_gpu_ = x;
        return a;
    }
    bool use_cudnn_on_gpu_ = true;
};

template <class OpAttrs>
struct ConvolutionShortcuts {
    using Attrs = OpAttrs;
    static Attrs DataFormat(std::string_view x) { return Attrs().DataFormat(x); }
    static Attrs Dilations(std::vector<int> x) { return Attrs().Dilations(std::move(x)); }
    static Attrs ExplicitPaddings(std::vector<int> x) { return Attrs().ExplicitPaddings(std::move(x)); }
};

template <class OpAttrs>
struct DenseConvolutionShortcuts : ConvolutionShortcuts<OpAttrs> {
    static OpAttrs UseCudnnOnGpu(bool x) { return OpAttrs().UseCudnnOnGpu(x); }
};

// A Compute() call of a convolution op, as both overloads hand it to the op's
// Run(): TF's tensor inputs in TF's order, then the attrs and the options.
template <class Attrs, size_t Inputs>
struct ConvolutionCall {
    std::array<const ConstTensorRef *, Inputs> inputs;
    const std::vector<int> &strides;
    std::string_view padding;
    const Attrs &attrs;
    const RunOptions &options;
};

namespace internal {
template <size_t>
using TensorInput = ConstTensorRef;
}  // namespace internal

template <class Op, class Shortcuts, class InputIndices>
class ConvolutionOpBase;

template <class Op, class Shortcuts, size_t... I>
class ConvolutionOpBase<Op, Shortcuts, std::index_sequence<I...>> : public Shortcuts {
public:
    using Attrs = typename Shortcuts::Attrs;
    using Call = ConvolutionCall<Attrs, sizeof...(I)>;

    // TF's tensor inputs (in the order of the op's header), strides and
    // padding, then the output. Writes the result into `output`, which must
    // have dtype T and the output's shape. On any error `output` is left
    // untouched.
    static Status Compute(const internal::TensorInput<I> &...inputs, const std::vector<int> &strides,
                          std::string_view padding, const TensorRef &output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions()) {
        return Op::Run(Call{{&inputs...}, strides, padding, attrs, options}, output);
    }

    // Allocates the output.
    static Status Compute(const internal::TensorInput<I> &...inputs, const std::vector<int> &strides,
                          std::string_view padding, Tensor *output, const Attrs &attrs = Attrs(),
                          const RunOptions &options = RunOptions()) {
        return Op::Run(Call{{&inputs...}, strides, padding, attrs, options}, output);
    }
};

// The typed API of a convolution op with `Inputs` tensor inputs (2: input
// and filter; 3: a gradient's two operands and out_backprop). Op declares
//   static Status Run(const Call &call, const TensorRef &output);
//   static Status Run(const Call &call, Tensor *output);
// which its runtime file defines; Shortcuts is ConvolutionShortcuts or
// DenseConvolutionShortcuts of its Attrs.
template <class Op, class Shortcuts, size_t Inputs>
using ConvolutionOp = ConvolutionOpBase<Op, Shortcuts, std::make_index_sequence<Inputs>>;

}  // namespace gradtune
