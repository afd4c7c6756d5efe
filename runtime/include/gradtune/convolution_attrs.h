// TF's optional attributes of the convolution ops, built like TF's C++ ops:
//   Conv2DBackpropInput::DataFormat("NCHW").Dilations({1, 1, 2, 2})
// Each op's Attrs derives from ConvolutionAttrs<Attrs> (the depthwise ops) or
// DenseConvolutionAttrs<Attrs> (the dense ops, which add TF's
// use_cudnn_on_gpu), and each op class from the matching *Shortcuts, which
// start a chain from the class: Op::DataFormat(x) == Op::Attrs().DataFormat(x).
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

}  // namespace gradtune
