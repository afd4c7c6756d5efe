#include "onednn_baseline.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <random>

namespace gradtune::tooling {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

std::vector<int64_t> shape_of(const nlohmann::json &input) {
    if (input.contains("values")) return input.at("values").get<std::vector<int64_t>>();
    return input.at("shape").get<std::vector<int64_t>>();
}

void fill(memory &m) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1, 1);
    float *p = static_cast<float *>(m.get_data_handle());
    const size_t n = m.get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; i++) p[i] = dist(rng);
}

class Convolution : public OnednnBaseline {
public:
    Convolution(const SuiteEntry &e, bool tf_layouts) {
        const auto &inputs = e.call.at("inputs");
        const bool depthwise = e.op.rfind("Depthwise", 0) == 0;
        backward_weights_ = e.op.find("BackpropFilter") != std::string::npos;
        const std::vector<int64_t> in = shape_of(backward_weights_ ? inputs.at("input") : inputs.at("input_sizes"));
        const std::vector<int64_t> f = shape_of(backward_weights_ ? inputs.at("filter_sizes") : inputs.at("filter"));
        const std::vector<int64_t> out = shape_of(inputs.at("out_backprop"));
        const auto strides = e.call.at("attrs").at("strides").get<std::vector<int64_t>>();
        const int64_t N = in[0], H = in[1], W = in[2], C = in[3], KH = f[0], KW = f[1];
        const int64_t OH = out[1], OW = out[2], OC = out[3];
        // SAME padding as TF computes it (odd padding at the end).
        auto pads = [](int64_t i, int64_t o, int64_t k, int64_t s) {
            const int64_t need = std::max<int64_t>(0, (o - 1) * s + k - i);
            return std::pair<int64_t, int64_t>{need / 2, need - need / 2};
        };
        auto [pt, pb] = pads(H, OH, KH, strides[1]);
        auto [pl, pr] = pads(W, OW, KW, strides[2]);
        memory::dims weight_dims = depthwise ? memory::dims{C, OC / C, 1, KH, KW} : memory::dims{OC, C, KH, KW};
        const tag tf_weights = depthwise ? tag::hwigo : tag::hwio;
        auto f32 = memory::data_type::f32;
        memory::desc src({N, C, H, W}, f32, tag::nhwc), dst({N, OC, OH, OW}, f32, tag::nhwc);
        memory::desc user_weights(weight_dims, f32, tf_weights);
        memory::desc weights = tf_layouts ? user_weights : memory::desc(weight_dims, f32, tag::any);
        memory::dims s{strides[1], strides[2]}, d{0, 0}, l{pt, pl}, r{pb, pr};
        dnnl::convolution_forward::primitive_desc forward(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            src, weights, dst, s, d, l, r),
            engine_);
        src_ = memory(src, engine_);
        dst_ = memory(dst, engine_);
        fill(src_);
        fill(dst_);
        if (backward_weights_) {
            dnnl::convolution_backward_weights::primitive_desc pd(
                dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src, weights, dst, s, d, l,
                                                         r),
                engine_, forward);
            weights_ = memory(pd.diff_weights_desc(), engine_);
            impl_ = pd.impl_info_str();
            primitive_ = dnnl::convolution_backward_weights(pd);
        } else {
            dnnl::convolution_backward_data::primitive_desc pd(
                dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, src, weights, dst, s, d, l, r),
                engine_, forward);
            // Weights given in TF's layout; reordered once (not timed) when
            // oneDNN prefers its own.
            memory user(user_weights, engine_);
            fill(user);
            weights_ = memory(pd.weights_desc(), engine_);
            dnnl::reorder(user, weights_).execute(stream_, user, weights_);
            stream_.wait();
            impl_ = pd.impl_info_str();
            primitive_ = dnnl::convolution_backward_data(pd);
        }
    }

    Status run() override {
        if (backward_weights_) {
            primitive_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_DIFF_WEIGHTS, weights_}});
        } else {
            primitive_.execute(stream_, {{DNNL_ARG_DIFF_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DIFF_DST, dst_}});
        }
        stream_.wait();
        return Status::OK();
    }
    std::string implementation() const override { return impl_; }

private:
    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream_{engine_};
    dnnl::primitive primitive_;
    memory src_, dst_, weights_;
    bool backward_weights_ = false;
    std::string impl_;
};

}  // namespace

std::unique_ptr<OnednnBaseline> OnednnBaseline::create(const SuiteEntry &entry, bool tf_layouts, std::string *why_not) {
    static const char *kOps[] = {"DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
                                 "Conv2DBackpropInput", "Conv2DBackpropFilter"};
    if (std::find(std::begin(kOps), std::end(kOps), entry.op) == std::end(kOps)) {
        *why_not = "oneDNN has no " + entry.op;
        return nullptr;
    }
    if (entry.call.at("attrs").value("padding", "") != "SAME") {
        *why_not = "only SAME padding is mapped";
        return nullptr;
    }
    try {
        return std::make_unique<Convolution>(entry, tf_layouts);
    } catch (const dnnl::error &e) {
        *why_not = std::string("oneDNN: ") + e.what();
        return nullptr;
    }
}

}  // namespace gradtune::tooling
