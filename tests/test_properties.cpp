// Property tests that need no fixtures (issue: "Every op, every dtype"):
//   adjoint identities  <Conv2D(x, w), dy> = <x, Conv2DBackpropInput(dy, w)>
//                                          = <w, Conv2DBackpropFilter(x, dy)>,
//   the same for the depthwise ops, and
//   <FractionalAvgPool(x), dy> = <x, FractionalAvgPoolGrad(dy)> for the
//   sequences the forward op returned;
//   gradient checks by central differences with TF's tolerances
//   (docs/tf-ops.md sections 13.3, 13.5): the backprop ops' Jacobians against
//   numeric ones of the forward op.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <random>
#include <set>

#include "test_util.h"

using namespace gradtune;
using namespace gradtune::testing;

namespace {

// An OpCall that owns its tensors.
struct Call {
    OpCall call;
    std::deque<Tensor> tensors;

    Call(std::string op, std::map<std::string, AttrValue> attrs) : call{std::move(op), {}, std::move(attrs)} {}
    Call &input(const std::string &name, Tensor t) {
        tensors.push_back(std::move(t));
        call.inputs[name] = tensors.back().cref();
        return *this;
    }
    std::vector<Tensor> run() {
        std::vector<Tensor> out;
        Status st = RunOp(call, &out);
        INFO(call.op << ": " << st.ToString());
        REQUIRE(st.ok());
        return out;
    }
};

double dot(const Tensor &a, const Tensor &b) {
    REQUIRE(a.num_elements() == b.num_elements());
    double s = 0;
    for (int64_t i = 0; i < a.num_elements(); i++) s += a.load(i) * b.load(i);
    return s;
}

Tensor random_tensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
    std::vector<double> v = random_values(NumElements(shape), seed, dtype);
    return make_tensor(dtype, shape, v);
}

std::vector<int64_t> in_format(const std::vector<int64_t> &nhwc, const std::string &format) {
    return format == "NHWC" ? nhwc : std::vector<int64_t>{nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
}

struct ConvConfig {
    int64_t N, H, W, C, FH, FW, O;  // O: output channels (dense) or depth multiplier (depthwise)
    int sh, sw, dh, dw;
    std::string padding;
    std::vector<int> pads;  // top, bottom, left, right
    int64_t groups = 1;     // dense only: filter depth = C / groups
};

std::map<std::string, AttrValue> conv_attrs(const ConvConfig &c, const std::string &format) {
    const bool nhwc = format == "NHWC";
    std::map<std::string, AttrValue> attrs = {
        {"strides", nhwc ? std::vector<int64_t>{1, c.sh, c.sw, 1} : std::vector<int64_t>{1, 1, c.sh, c.sw}},
        {"dilations", nhwc ? std::vector<int64_t>{1, c.dh, c.dw, 1} : std::vector<int64_t>{1, 1, c.dh, c.dw}},
        {"padding", c.padding},
        {"data_format", format}};
    if (c.padding == "EXPLICIT") {
        const auto &p = c.pads;
        attrs["explicit_paddings"] = nhwc ? std::vector<int64_t>{0, 0, p[0], p[1], p[2], p[3], 0, 0}
                                          : std::vector<int64_t>{0, 0, 0, 0, p[0], p[1], p[2], p[3]};
    }
    return attrs;
}

const std::vector<ConvConfig> kConvConfigs = {
    {2, 7, 6, 4, 3, 3, 5, 1, 1, 1, 1, "SAME", {}},
    {2, 9, 8, 3, 3, 2, 4, 2, 1, 1, 1, "VALID", {}},
    {1, 10, 9, 2, 3, 3, 3, 2, 2, 2, 1, "SAME", {}},
    {2, 8, 7, 6, 2, 3, 4, 1, 2, 1, 2, "EXPLICIT", {1, 2, 3, 0}},
    {1, 6, 6, 4, 3, 3, 6, 1, 1, 1, 1, "SAME", {}, 2},
};

// The adjoint identities of a convolution family, all three ops gradtune's,
// called by name: with y = forward(x, w), <y, dy> == <x, input_gradient(dy,
// w)> == <w, filter_gradient(x, dy)>, in both layouts, for each config
// (adapted to the family by `adapt`; the filter [FH, FW, filter_depth(c), O]).
// `seed` .. `seed + 2` draw x, w and dy.
void check_family_adjoint(const char *forward, const char *input_gradient, const char *filter_gradient,
                          const std::function<ConvConfig(ConvConfig)> &adapt,
                          const std::function<int64_t(const ConvConfig &)> &filter_depth, uint32_t seed) {
    for (const char *format : {"NHWC", "NCHW"})
        for (const ConvConfig &config : kConvConfigs) {
            const ConvConfig c = adapt(config);
            const DataType t = DataType::kDouble;
            Tensor x = random_tensor(t, in_format({c.N, c.H, c.W, c.C}, format), seed);
            Tensor w = random_tensor(t, {c.FH, c.FW, filter_depth(c), c.O}, seed + 1);
            Tensor y = Call(forward, conv_attrs(c, format)).input("input", x).input("filter", w).run()[0];
            Tensor dy = random_tensor(t, y.shape(), seed + 2);
            Tensor dx = Call(input_gradient, conv_attrs(c, format))
                            .input("input_sizes", int32_vector(x.shape()))
                            .input("filter", w)
                            .input("out_backprop", dy)
                            .run()[0];
            Tensor dw = Call(filter_gradient, conv_attrs(c, format))
                            .input("input", x)
                            .input("filter_sizes", int32_vector(w.shape()))
                            .input("out_backprop", dy)
                            .run()[0];
            const double forward_dot = dot(y, dy), input = dot(x, dx), filter = dot(w, dw);
            INFO(forward << " " << format << " H" << c.H << " W" << c.W << " C" << c.C << " O" << c.O << " groups "
                         << c.groups << " " << c.padding);
            CHECK(std::fabs(forward_dot - input) <= 1e-11 * std::max(1.0, std::fabs(forward_dot)));
            CHECK(std::fabs(forward_dot - filter) <= 1e-11 * std::max(1.0, std::fabs(forward_dot)));
        }
}

}  // namespace

TEST_CASE("adjoint identities of the dense convolution gradients", "[properties]") {
    check_family_adjoint(
        "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", [](ConvConfig c) { return c; },
        [](const ConvConfig &c) { return c.C / c.groups; }, 1);
}

TEST_CASE("adjoint identities of the depthwise convolution gradients", "[properties]") {
    check_family_adjoint(
        "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
        [](ConvConfig c) {
            c.sw = c.sh;        // depthwise strides are equal in rows and columns
            c.O = c.O % 3 + 1;  // depth multiplier 1..3
            c.groups = 1;
            return c;
        },
        [](const ConvConfig &c) { return c.C; }, 4);
}

TEST_CASE("adjoint identity of fractional average pooling", "[properties]") {
    for (bool overlapping : {false, true})
        for (bool pseudo_random : {false, true}) {
            const DataType t = DataType::kDouble;
            Tensor x = random_tensor(t, {2, 11, 13, 3}, 7);
            auto out = Call("FractionalAvgPool", {{"pooling_ratio", std::vector<double>{1.0, 1.44, 1.73, 1.0}},
                                                  {"pseudo_random", pseudo_random},
                                                  {"overlapping", overlapping},
                                                  {"deterministic", true},
                                                  {"seed", int64_t{5}},
                                                  {"seed2", int64_t{9}}})
                           .input("value", x)
                           .run();
            Tensor dy = random_tensor(t, out[0].shape(), 8);
            Tensor dx = Call("FractionalAvgPoolGrad", {{"overlapping", overlapping}})
                            .input("orig_input_tensor_shape",
                                   Tensor::FromVector(DataType::kInt64, {4}, x.shape()))
                            .input("out_backprop", dy)
                            .input("row_pooling_sequence", out[1])
                            .input("col_pooling_sequence", out[2])
                            .run()[0];
            const double forward = dot(out[0], dy), backward = dot(x, dx);
            INFO("overlapping " << overlapping << " pseudo_random " << pseudo_random);
            CHECK(std::fabs(forward - backward) <= 1e-12 * std::max(1.0, std::fabs(forward)));
        }
}

namespace {

// TF's ConstructAndTestGradient data: k/N for k = 0..N-1.
Tensor ramp(DataType t, std::vector<int64_t> shape) {
    Tensor x(t, shape);
    for (int64_t i = 0; i < x.num_elements(); i++) x.store(i, static_cast<double>(i) / x.num_elements());
    return x;
}

// max |J_theory - J_numeric| for the gradient of f(x) = <forward(x), v>
// against x, over random directions v: theory = <backprop(v), e_i>,
// numeric = (f(x + delta e_i) - f(x - delta e_i)) / (2 delta).
template <typename Forward, typename Backward>
double gradient_error(Tensor x, const std::vector<int64_t> &out_shape, double delta, Forward forward,
                      Backward backward) {
    Tensor v = random_tensor(x.dtype(), out_shape, 21);
    Tensor theory = backward(v);
    double worst = 0;
    for (int64_t i = 0; i < x.num_elements(); i++) {
        const double keep = x.load(i);
        x.store(i, keep + delta);
        const double plus = dot(forward(x), v);
        x.store(i, keep - delta);
        const double minus = dot(forward(x), v);
        x.store(i, keep);
        worst = std::max(worst, std::fabs(theory.load(i) - (plus - minus) / (2 * delta)));
    }
    return worst;
}

}  // namespace

TEST_CASE("gradient checks of the convolution gradients (spec 13.3)", "[properties]") {
    // (batch, rows, cols, filter rows, filter cols, in depth, out depth,
    //  stride rows, stride cols, padding), float32, delta 1e-3, TF's max_err.
    struct Config {
        int64_t N, H, W, FH, FW, C, O;
        int sh, sw;
        const char *padding;
        double max_err;
    };
    const Config configs[] = {{2, 5, 4, 3, 3, 2, 3, 1, 1, "VALID", 0.003}, {2, 4, 5, 3, 3, 2, 3, 2, 2, "VALID", 0.003},
                              {2, 7, 6, 3, 3, 2, 3, 1, 1, "SAME", 0.003},  {2, 5, 4, 3, 3, 3, 3, 2, 2, "SAME", 0.003},
                              {4, 6, 5, 2, 2, 2, 3, 1, 1, "SAME", 0.005},  {2, 8, 7, 4, 4, 2, 3, 2, 1, "SAME", 0.003}};
    const DataType t = DataType::kFloat;
    for (const Config &c : configs) {
        ConvConfig cc{c.N, c.H, c.W, c.C, c.FH, c.FW, c.O, c.sh, c.sw, 1, 1, c.padding, {}};
        auto attrs = conv_attrs(cc, "NHWC");
        Tensor x = ramp(t, {c.N, c.H, c.W, c.C}), w = ramp(t, {c.FH, c.FW, c.C, c.O});
        const std::vector<int64_t> y_shape =
            Call("Conv2D", attrs).input("input", x).input("filter", w).run()[0].shape();
        const double input_error = gradient_error(
            x, y_shape, 1e-3, [&](const Tensor &xi) { return Call("Conv2D", attrs).input("input", xi).input("filter", w).run()[0]; },
            [&](const Tensor &v) {
                return Call("Conv2DBackpropInput", attrs)
                    .input("input_sizes", int32_vector(x.shape()))
                    .input("filter", w)
                    .input("out_backprop", v)
                    .run()[0];
            });
        const double filter_error = gradient_error(
            w, y_shape, 1e-3, [&](const Tensor &wi) { return Call("Conv2D", attrs).input("input", x).input("filter", wi).run()[0]; },
            [&](const Tensor &v) {
                return Call("Conv2DBackpropFilter", attrs)
                    .input("input", x)
                    .input("filter_sizes", int32_vector(w.shape()))
                    .input("out_backprop", v)
                    .run()[0];
            });
        INFO("H" << c.H << " W" << c.W << " f" << c.FH << "x" << c.FW << " " << c.padding);
        CHECK(input_error <= c.max_err);
        CHECK(filter_error <= c.max_err);
    }
}

TEST_CASE("gradient checks of the depthwise gradients (spec 13.4)", "[properties]") {
    struct Config {
        int64_t N, H, W, C, FH, FW, M;
        int stride;
        const char *padding;
    };
    const Config configs[] = {{2, 5, 8, 1, 4, 4, 2, 1, "SAME"}, {4, 5, 5, 1, 2, 2, 2, 2, "VALID"},
                              {2, 4, 4, 2, 3, 1, 2, 1, "SAME"}, {1, 15, 15, 2, 1, 3, 1, 1, "SAME"},
                              {2, 2, 3, 2, 2, 1, 1, 1, "SAME"}};
    // float32 at TF's tolerance 8e-4 and float64 at 1e-12 x scale.
    for (DataType t : {DataType::kFloat, DataType::kDouble})
        for (const Config &c : configs) {
            ConvConfig cc{c.N, c.H, c.W, c.C, c.FH, c.FW, c.M, c.stride, c.stride, 1, 1, c.padding, {}};
            auto attrs = conv_attrs(cc, "NHWC");
            Tensor x = ramp(t, {c.N, c.H, c.W, c.C}), w = ramp(t, {c.FH, c.FW, c.C, c.M});
            auto forward_x = [&](const Tensor &xi) {
                return Call("DepthwiseConv2dNative", attrs).input("input", xi).input("filter", w).run()[0];
            };
            auto forward_w = [&](const Tensor &wi) {
                return Call("DepthwiseConv2dNative", attrs).input("input", x).input("filter", wi).run()[0];
            };
            const std::vector<int64_t> y_shape = forward_x(x).shape();
            const double delta = t == DataType::kFloat ? 1e-3 : 1e-6;
            const double input_error = gradient_error(x, y_shape, delta, forward_x, [&](const Tensor &v) {
                return Call("DepthwiseConv2dNativeBackpropInput", attrs)
                    .input("input_sizes", int32_vector(x.shape()))
                    .input("filter", w)
                    .input("out_backprop", v)
                    .run()[0];
            });
            const double filter_error = gradient_error(w, y_shape, delta, forward_w, [&](const Tensor &v) {
                return Call("DepthwiseConv2dNativeBackpropFilter", attrs)
                    .input("input", x)
                    .input("filter_sizes", int32_vector(w.shape()))
                    .input("out_backprop", v)
                    .run()[0];
            });
            // Central differences are exact for these bilinear functions up to
            // rounding: f32 at TF's 8e-4, f64 far tighter than TF's 1e-12 on
            // the Jacobian allows with a 1e-6 step.
            const double tolerance = t == DataType::kFloat ? 8e-4 : 1e-7;
            INFO(DataTypeName(t) << " H" << c.H << " W" << c.W << " f" << c.FH << "x" << c.FW << " " << c.padding);
            CHECK(input_error <= tolerance);
            CHECK(filter_error <= tolerance);
        }
}

TEST_CASE("gradient check of fractional average pooling (spec 13.5)", "[properties]") {
    // float64 data rand*1000, delta 1e-2, error margin 1e-4, all four option
    // combinations on (1, 7, 13, 1) with ratio [1, sqrt2, sqrt3, 1].
    for (bool overlapping : {false, true})
        for (bool pseudo_random : {false, true}) {
            const DataType t = DataType::kDouble;
            Tensor x = make_tensor(t, {1, 7, 13, 1}, random_values(91, 31, t, 0.0, 1000.0));
            std::map<std::string, AttrValue> attrs = {{"pooling_ratio", std::vector<double>{1.0, std::sqrt(2.0), std::sqrt(3.0), 1.0}},
                                                      {"pseudo_random", pseudo_random},
                                                      {"overlapping", overlapping},
                                                      {"deterministic", true},
                                                      {"seed", int64_t{341261001}},
                                                      {"seed2", int64_t{17}}};
            auto pooled = Call("FractionalAvgPool", attrs).input("value", x).run();
            // The sequences depend only on the seeds and sizes: fixed under x's perturbation.
            auto forward = [&](const Tensor &xi) { return Call("FractionalAvgPool", attrs).input("value", xi).run()[0]; };
            const double error = gradient_error(x, pooled[0].shape(), 1e-2, forward, [&](const Tensor &v) {
                return Call("FractionalAvgPoolGrad", {{"overlapping", overlapping}})
                    .input("orig_input_tensor_shape", Tensor::FromVector(DataType::kInt64, {4}, x.shape()))
                    .input("out_backprop", v)
                    .input("row_pooling_sequence", pooled[1])
                    .input("col_pooling_sequence", pooled[2])
                    .run()[0];
            });
            INFO("overlapping " << overlapping << " pseudo_random " << pseudo_random);
            CHECK(error <= 1e-4);
        }
}

TEST_CASE("every op the library registers has a property test here", "[properties]") {
    // The ops of the adjoint identities and gradient checks above: a new op
    // fails here until it has its own.
    const std::set<std::string> covered = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                                           "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                           "DepthwiseConv2dNativeBackpropFilter", "FractionalAvgPool",
                                           "FractionalAvgPoolGrad"};
    for (const OpSpec &spec : RegisteredOps()) {
        INFO(spec.name);
        CHECK(covered.count(spec.name));
    }
}

TEST_CASE("tensors are 64-byte aligned, and the kernels give the same bits on unaligned inputs", "[properties]") {
    // Tensor aligns its storage as TensorFlow does; callers' own buffers may
    // not be aligned, and a kernel must not depend on it.
    for (int64_t n : {1, 15, 4096, 1 << 20}) {
        Tensor t(DataType::kFloat, {n});
        INFO(n << " elements");
        CHECK(reinterpret_cast<std::uintptr_t>(t.data()) % kTensorAlignment == 0);
    }
    // A float input copied to storage one element past an aligned address.
    struct Unaligned {
        std::vector<Tensor> storage;
        ConstTensorRef copy(const Tensor &t) {
            storage.emplace_back(t.dtype(), std::vector<int64_t>{t.num_elements() + 1});
            auto *dst = static_cast<std::byte *>(storage.back().data()) + DataTypeSize(t.dtype());
            std::memcpy(dst, t.data(), t.num_elements() * DataTypeSize(t.dtype()));
            return {t.dtype(), t.shape(), dst};
        }
    };
    const DataType t = DataType::kFloat;
    const std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}};
    const Tensor x = random_tensor(t, {2, 14, 14, 96}, 41), dy = random_tensor(t, {2, 14, 14, 96}, 42);
    const Tensor dense_filter = random_tensor(t, {3, 3, 96, 96}, 43);
    const Tensor depthwise_filter = random_tensor(t, {3, 3, 96, 1}, 44);
    const Tensor input_sizes = int32_vector(x.shape());
    for (const char *op : {"Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
                           "DepthwiseConv2dNativeBackpropFilter"}) {
        const bool dense = std::string(op).rfind("Conv2D", 0) == 0;
        const bool input_gradient = std::string(op).find("Input") != std::string::npos;
        const Tensor &filter = dense ? dense_filter : depthwise_filter;
        const Tensor filter_sizes = int32_vector(filter.shape());
        auto call_with = [&](ConstTensorRef data, ConstTensorRef grad) {
            OpCall call{op, {{"out_backprop", grad}}, attrs};
            if (input_gradient) {
                call.inputs["input_sizes"] = input_sizes.cref();
                call.inputs["filter"] = data;
            } else {
                call.inputs["input"] = data;
                call.inputs["filter_sizes"] = filter_sizes.cref();
            }
            std::vector<Tensor> out;
            Status st = RunOp(call, &out);
            INFO(op << ": " << st.ToString());
            REQUIRE(st.ok());
            return out[0];
        };
        const Tensor &data = input_gradient ? filter : x;
        Unaligned unaligned;
        const Tensor want = call_with(data.cref(), dy.cref());
        const Tensor got = call_with(unaligned.copy(data), unaligned.copy(dy));
        INFO(op);
        REQUIRE(got.shape() == want.shape());
        CHECK(std::memcmp(got.data(), want.data(), want.num_elements() * DataTypeSize(t)) == 0);
    }
}
