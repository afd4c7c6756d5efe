#include "onednn_baseline.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <random>
#include <stdexcept>

namespace gradtune::tooling {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

std::vector<int64_t> shape_of(const nlohmann::json &input) {
    if (input.contains("values")) return input.at("values").get<std::vector<int64_t>>();
    return input.at("shape").get<std::vector<int64_t>>();
}

// TF's dtype name -> oneDNN's (oneDNN has no float64 convolution).
memory::data_type data_type_of(const std::string &dtype) {
    if (dtype == "float32") return memory::data_type::f32;
    if (dtype == "bfloat16") return memory::data_type::bf16;
    if (dtype == "float16") return memory::data_type::f16;
    throw std::invalid_argument("oneDNN has no " + dtype + " convolution");
}

// One spatial dimension of the call in oneDNN's terms. oneDNN counts a
// dilation's gaps (TF's dilation - 1).
struct Spatial {
    int64_t stride, gaps, pad_before, pad_after;
};

// Dimension `index` of TF's attrs (NHWC: 1 = H, 2 = W; NCHW: 2, 3), with
// TF's padding: SAME (the odd pad at the end, for the dilated filter),
// VALID, or the call's explicit_paddings.
Spatial spatial(const nlohmann::json &attrs, int index, int64_t size, int64_t filter, int64_t out) {
    const int64_t stride = attrs.at("strides").at(index).get<int64_t>();
    const int64_t dilation = attrs.contains("dilations") ? attrs.at("dilations").at(index).get<int64_t>() : 1;
    const std::string padding = attrs.at("padding").get<std::string>();
    int64_t before = 0, after = 0;
    if (padding == "SAME") {
        const int64_t need = std::max<int64_t>(0, (out - 1) * stride + (filter - 1) * dilation + 1 - size);
        before = need / 2;
        after = need - before;
    } else if (padding == "EXPLICIT") {
        before = attrs.at("explicit_paddings").at(2 * index).get<int64_t>();
        after = attrs.at("explicit_paddings").at(2 * index + 1).get<int64_t>();
    }
    return {stride, dilation - 1, before, after};
}

// Seeded values in [-1, 1] in `m`, whatever its data type and layout:
// written as plain float32, then reordered into it.
void fill(memory &m, const dnnl::engine &engine, dnnl::stream &stream) {
    const memory::dims dims = m.get_desc().dims();
    static const tag kPlain[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
    memory values(memory::desc(dims, memory::data_type::f32, kPlain[dims.size()]), engine);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1, 1);
    float *p = static_cast<float *>(values.get_data_handle());
    const size_t n = values.get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; i++) p[i] = dist(rng);
    dnnl::reorder(values, m).execute(stream, values, m);
    stream.wait();
}

// The call as a oneDNN convolution: its layout (NHWC or NCHW), strides,
// dilations, padding (SAME, VALID, EXPLICIT), groups (a dense filter of
// C/G input channels; depthwise: C groups of one channel, M outputs each)
// and dtype.
class Convolution : public OnednnBaseline {
public:
    Convolution(const SuiteEntry &e, bool tf_layouts) {
        const auto &inputs = e.call.at("inputs");
        const auto &attrs = e.call.at("attrs");
        const bool depthwise = e.op.rfind("Depthwise", 0) == 0;
        backward_weights_ = e.op.find("BackpropFilter") != std::string::npos;
        const bool nchw = attrs.value("data_format", "NHWC") == "NCHW";
        const int h = nchw ? 2 : 1, w = nchw ? 3 : 2, c = nchw ? 1 : 3;  // TF's dimension indices
        const std::vector<int64_t> in = shape_of(backward_weights_ ? inputs.at("input") : inputs.at("input_sizes"));
        const std::vector<int64_t> f = shape_of(backward_weights_ ? inputs.at("filter_sizes") : inputs.at("filter"));
        const std::vector<int64_t> out = shape_of(inputs.at("out_backprop"));
        const auto type = data_type_of(inputs.at("out_backprop").at("dtype").get<std::string>());
        const int64_t N = in[0], C = in[c], KH = f[0], KW = f[1], OC = out[c];
        const int64_t groups = depthwise ? C : C / f[2];
        const Spatial y = spatial(attrs, h, in[h], KH, out[h]);
        const Spatial x = spatial(attrs, w, in[w], KW, out[w]);
        // TF's filter [KH, KW, C/G, OC], OC = G x OC/G with the group
        // outermost, is oneDNN's hwigo (hwio where G = 1).
        memory::dims weight_dims = groups == 1 ? memory::dims{OC, C, KH, KW}
                                               : memory::dims{groups, OC / groups, C / groups, KH, KW};
        const tag tf_weights = groups == 1 ? tag::hwio : tag::hwigo;
        const tag activations = nchw ? tag::nchw : tag::nhwc;
        memory::desc src({N, C, in[h], in[w]}, type, activations), dst({N, OC, out[h], out[w]}, type, activations);
        memory::desc user_weights(weight_dims, type, tf_weights);
        memory::desc weights = tf_layouts ? user_weights : memory::desc(weight_dims, type, tag::any);
        memory::dims s{y.stride, x.stride}, d{y.gaps, x.gaps}, l{y.pad_before, x.pad_before},
            r{y.pad_after, x.pad_after};
        dnnl::convolution_forward::primitive_desc forward(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            src, weights, dst, s, d, l, r),
            engine_);
        src_ = memory(src, engine_);
        dst_ = memory(dst, engine_);
        fill(src_, engine_, stream_);
        fill(dst_, engine_, stream_);
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
            fill(user, engine_, stream_);
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
    try {
        return std::make_unique<Convolution>(entry, tf_layouts);
    } catch (const dnnl::error &e) {
        *why_not = std::string("oneDNN: ") + e.what();
    } catch (const std::invalid_argument &e) {
        *why_not = e.what();
    }
    return nullptr;
}

}  // namespace gradtune::tooling
