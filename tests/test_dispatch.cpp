// Dispatch: exact tuned shape > transferred record of another class for the
// shape > nearest tuned shape with the same structure > structure default >
// generic, forced variants, and the GRADTUNE_VERBOSE line that reports it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel_split.h"
#include "cpu_features.h"
#include "dilation_phases.h"
#include "group_blocks.h"
#include "dispatch.h"
#include "float32_detour.h"
#include "halide_call.h"
#include "journal.h"
#include "nhwc_detour.h"
#include "taps_pointwise.h"
#include "reference/conv2d_backprop_filter.h"
#include "test_util.h"

using namespace gradtune;
using namespace gradtune::internal;

namespace {

void fake_kernel() {}

// A synthetic table: a generic kernel and two tuned kernels of one structure
// (k3 s1 M1), tuned for two shapes each on this machine's class; a kernel of
// another class's record for the k3 stride-2 structure; and a structure
// default for k5.
struct Table {
    std::vector<Kernel> kernels;
    std::vector<TunedShape> tuned;
    Table() {
        auto structure = [](int k, int s) {
            return std::vector<std::pair<const char *, int>>{{"depth_multiplier", k ? 1 : 0},
                                                             {"filter_height", k},
                                                             {"filter_width", k},
                                                             {"stride", s}};
        };
        kernels = {{"Op", "op_generic", Device::cpu, "float32", "NHWC", structure(0, 0), "", false, &fake_kernel},
                   {"Op", "op_k3_a", Device::cpu, "float32", "NHWC", structure(3, 1), "", false, &fake_kernel},
                   {"Op", "op_k3_b", Device::cpu, "float32", "NHWC", structure(3, 1), "", false, &fake_kernel},
                   {"Op", "op_generic_nchw", Device::cpu, "float32", "NCHW", structure(0, 0), "", false, &fake_kernel},
                   {"Op", "op_k3s2_other", Device::cpu, "float32", "NHWC", structure(3, 2), "", false, &fake_kernel},
                   {"Op", "op_k3s2_mine", Device::cpu, "float32", "NHWC", structure(3, 2), "", false, &fake_kernel},
                   {"Op", "op_k5_default", Device::cpu, "float32", "NHWC", structure(5, 1), "", true, &fake_kernel}};
        const auto k3 = structure(3, 1), k3s2 = structure(3, 2);
        const char *own = target_class(), *other = "x86-64-linux-avx512_other";
        tuned = {{1, own, k3, "SAME", {{"C", 32}, {"H", 112}, {"N", 1}, {"W", 112}}, 1, 2},
                 {1, own, k3, "SAME", {{"C", 144}, {"H", 56}, {"N", 1}, {"W", 56}}, 1, 2},
                 {2, own, k3, "SAME", {{"C", 32}, {"H", 112}, {"N", 32}, {"W", 112}}, 1, 2},
                 {2, own, k3, "SAME", {{"C", 960}, {"H", 7}, {"N", 32}, {"W", 7}}, 1, 2},
                 // A measured shape where the generic variant beat every tuned setting.
                 {0, own, k3, "SAME", {{"C", 576}, {"H", 14}, {"N", 32}, {"W", 14}}, 3, 2},
                 // Stride 2: another class's records for two shapes, ours for one.
                 {4, other, k3s2, "SAME", {{"C", 96}, {"H", 112}, {"N", 1}, {"W", 112}}, 1, 2},
                 {4, other, k3s2, "SAME", {{"C", 96}, {"H", 112}, {"N", 32}, {"W", 112}}, 1, 2},
                 {5, own, k3s2, "SAME", {{"C", 96}, {"H", 112}, {"N", 32}, {"W", 112}}, 1, 2}};
    }
};

CallInfo call(int k, int s, int64_t n, int64_t h, int64_t c, const char *padding = "SAME",
              const char *layout = "NHWC") {
    CallInfo info;
    info.op = "Op";
    info.dtype = "float32";
    info.data_format = layout;
    info.structure = {{"depth_multiplier", 1}, {"filter_height", k}, {"filter_width", k}, {"stride", s}};
    info.padding = padding;
    info.shape = {{"C", c}, {"H", h}, {"N", n}, {"W", h}};
    return info;
}

// Captures what `fn` writes to stderr.
template <typename F>
std::string capture_stderr(F fn) {
    std::fflush(stderr);
    char path[] = "/tmp/gradtune_stderr_XXXXXX";
    int fd = mkstemp(path);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::remove(path);
    return s.str();
}

}  // namespace

TEST_CASE("dispatch prefers exact, then transferred, nearest, the structure default, generic", "[dispatch]") {
    Table t;
    Selection s;
    REQUIRE(select_kernel(call(3, 1, 32, 112, 32), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3_b");
    CHECK(s.tier == Tier::exact);
    REQUIRE(select_kernel(call(3, 1, 1, 56, 144), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3_a");
    CHECK(s.tier == Tier::exact);
    // Nearest: N=32 7x7x900 is closest to the N=32 7x7x960 record.
    REQUIRE(select_kernel(call(3, 1, 32, 7, 900), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3_b");
    CHECK(s.tier == Tier::nearest);
    CHECK(s.why.find("SAME C=960 H=7 N=32 W=7") != std::string::npos);
    // Nearest: N=2 56x56x128 is closest to the N=1 56x56x144 record.
    REQUIRE(select_kernel(call(3, 1, 2, 56, 128), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3_a");
    CHECK(s.tier == Tier::nearest);
    // Where the generic variant measured fastest, it serves the shape, and
    // the shapes nearest to it.
    REQUIRE(select_kernel(call(3, 1, 32, 14, 576), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::exact);
    CHECK(s.why == "the generic variant measured fastest for this shape");
    REQUIRE(select_kernel(call(3, 1, 32, 14, 512), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::nearest);
    // Own class beats another class on the same shape; another class's record
    // for the very shape beats our nearest one, and names its class.
    REQUIRE(select_kernel(call(3, 2, 32, 112, 96), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3s2_mine");
    CHECK(s.tier == Tier::exact);
    REQUIRE(select_kernel(call(3, 2, 1, 112, 96), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3s2_other");
    CHECK(s.tier == Tier::transferred);
    CHECK(s.why.find("x86-64-linux-avx512_other") != std::string::npos);
    // At equal distance the nearest record of our own class wins.
    REQUIRE(select_kernel(call(3, 2, 16, 112, 96), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.tier == Tier::nearest);
    CHECK(s.name == "op_k3s2_mine");
    // A structure with no record but a structure default (k5 s1): the default.
    REQUIRE(select_kernel(call(5, 1, 1, 112, 32), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k5_default");
    CHECK(s.tier == Tier::structure_default);
    // Another structure (k7) or layout: generic.
    REQUIRE(select_kernel(call(7, 1, 1, 112, 32), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::generic);
    REQUIRE(select_kernel(call(3, 1, 32, 112, 32, "SAME", "NCHW"), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_generic_nchw");
    // Another padding mode of a tuned shape: still the tuned kernel, as nearest.
    REQUIRE(select_kernel(call(3, 1, 32, 112, 32, "VALID"), {}, t.kernels, t.tuned, &s).ok());
    CHECK(s.name == "op_k3_b");
    CHECK(s.tier == Tier::nearest);
    // No kernel for the dtype: Unimplemented.
    CallInfo f64 = call(3, 1, 1, 8, 8);
    f64.dtype = "float64";
    CHECK(select_kernel(f64, {}, t.kernels, t.tuned, &s).code() == StatusCode::kUnimplemented);
}

TEST_CASE("of two structure defaults that fit, the one that fixes more of the structure serves", "[dispatch]") {
    // A default for any filter at stride 2 (the generic variant's cliff) and
    // one for 5x5 stride 2, in the order distill writes them (by structure
    // key: filter 0 first).
    auto structure = [](int k, int s) {  // (0, 0): the generic variant's
        return std::vector<std::pair<const char *, int>>{
            {"depth_multiplier", s ? 1 : 0}, {"filter_height", k}, {"filter_width", k}, {"stride", s}};
    };
    const std::vector<Kernel> kernels = {
        {"Op", "op_generic", Device::cpu, "float32", "NHWC", structure(0, 0), "", false, &fake_kernel},
        {"Op", "op_s2_default", Device::cpu, "float32", "NHWC", structure(0, 2), "", true, &fake_kernel},
        {"Op", "op_k5s2_default", Device::cpu, "float32", "NHWC", structure(5, 2), "", true, &fake_kernel}};
    Selection s;
    REQUIRE(select_kernel(call(5, 2, 1, 56, 32), {}, kernels, {}, &s).ok());
    CHECK(s.name == "op_k5s2_default");
    CHECK(s.tier == Tier::structure_default);
    REQUIRE(select_kernel(call(4, 2, 1, 56, 32), {}, kernels, {}, &s).ok());
    CHECK(s.name == "op_s2_default");
    CHECK(s.tier == Tier::structure_default);
    REQUIRE(select_kernel(call(4, 1, 1, 56, 32), {}, kernels, {}, &s).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::generic);
}

TEST_CASE("the nearest record is the nearest in channels first, and a generic-wins one never displaces a default",
          "[dispatch]") {
    auto structure = [](int k) {
        return std::vector<std::pair<const char *, int>>{
            {"depth_multiplier", k ? 1 : 0}, {"filter_height", k}, {"filter_width", k}, {"stride", k ? 1 : 0}};
    };
    const std::vector<Kernel> kernels = {
        {"Op", "op_generic", Device::cpu, "float32", "NHWC", structure(0), "", false, &fake_kernel},
        {"Op", "op_for_256_channels", Device::cpu, "float32", "NHWC", structure(3), "", false, &fake_kernel},
        {"Op", "op_for_40_channels", Device::cpu, "float32", "NHWC", structure(3), "", false, &fake_kernel},
        {"Op", "op_k3_default", Device::cpu, "float32", "NHWC", structure(3), "", true, &fake_kernel}};
    const char *own = target_class();
    const std::vector<TunedShape> tuned = {
        {1, own, structure(3), "SAME", {{"C", 256}, {"H", 8}, {"N", 1}, {"W", 8}}, 1, 2},
        {2, own, structure(3), "SAME", {{"C", 40}, {"H", 64}, {"N", 8}, {"W", 64}}, 1, 2},
        // The generic variant measured fastest on this shape.
        {0, own, structure(3), "SAME", {{"C", 48}, {"H", 16}, {"N", 1}, {"W", 16}}, 3, 2}};
    Selection s;
    // 40 channels at 8x8: as many pixels as the 256-channel record (equal
    // weights would pick it), but the channels of the other one.
    REQUIRE(select_kernel(call(3, 1, 1, 8, 40), {}, kernels, tuned, &s).ok());
    CHECK(s.name == "op_for_40_channels");
    CHECK(s.tier == Tier::nearest);
    REQUIRE(select_kernel(call(3, 1, 1, 8, 300), {}, kernels, tuned, &s).ok());
    CHECK(s.name == "op_for_256_channels");
    // Nearest to the generic-wins shape, yet the structure default serves;
    // the very shape is still the generic variant's.
    REQUIRE(select_kernel(call(3, 1, 1, 16, 50), {}, kernels, {tuned[2]}, &s).ok());
    CHECK(s.name == "op_k3_default");
    CHECK(s.tier == Tier::structure_default);
    REQUIRE(select_kernel(call(3, 1, 1, 16, 48), {}, kernels, {tuned[2]}, &s).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::exact);
}

TEST_CASE("on a CPU without the build machine's features tuned records give way to the default and generic", "[dispatch]") {
    // Tuned records are compiled only for the build machine's target; a CPU
    // that cannot run it is served as if it had no records.
    Table t;
    for (Kernel &k : t.kernels)
        k.tuned_targets_only = !k.structure_default && std::string(k.name).find("generic") == std::string::npos;
    Selection s;
    REQUIRE(select_kernel(call(3, 1, 32, 112, 32), {}, t.kernels, t.tuned, &s, /*tuned_usable=*/true).ok());
    CHECK(s.name == "op_k3_b");
    // The shape measured with the generic variant fastest is the only record
    // left of this structure: exact for its shape, nearest for the others.
    REQUIRE(select_kernel(call(3, 1, 32, 112, 32), {}, t.kernels, t.tuned, &s, /*tuned_usable=*/false).ok());
    CHECK(s.name == "op_generic");
    CHECK(s.tier == Tier::nearest);
    REQUIRE(select_kernel(call(3, 1, 32, 14, 576), {}, t.kernels, t.tuned, &s, false).ok());
    CHECK(s.tier == Tier::exact);
    REQUIRE(select_kernel(call(3, 2, 1, 112, 96), {}, t.kernels, t.tuned, &s, false).ok());
    CHECK(s.tier == Tier::generic);
    REQUIRE(select_kernel(call(5, 1, 1, 112, 32), {}, t.kernels, t.tuned, &s, false).ok());
    CHECK(s.name == "op_k5_default");
    // Forcing one by name is refused with the reason, not run.
    RunOptions forced;
    forced.variant = "op_k3_a";
    Status st = select_kernel(call(3, 1, 1, 9, 9), forced, t.kernels, t.tuned, &s, false);
    CHECK(st.code() == StatusCode::kUnimplemented);
    CHECK(st.message().find("compiled only for the build machine's CPU") != std::string::npos);
}

TEST_CASE("a thread's recent selections are reused only for calls of the same kind", "[dispatch]") {
    // The build's own tables: every measured shape, and each with its rows
    // and columns one larger (served by the nearest record), more calls than
    // a thread keeps, asked in three orders. Each cached answer must be the
    // one the table gives when asked afresh.
    std::vector<CallInfo> calls;
    for (const TunedShape &t : tuned_shapes()) {
        const Kernel &k = kernels()[t.kernel];
        if (k.device != Device::cpu) continue;
        CallInfo call;
        call.op = k.op;
        call.dtype = k.dtype;
        call.data_format = k.data_format;
        for (const auto &[name, value] : t.structure) call.structure[name] = value;
        call.padding = t.padding;
        for (const auto &[name, value] : t.shape) call.shape[name] = value;
        calls.push_back(call);
        call.shape["H"]++;
        call.shape["W"]++;
        calls.push_back(call);
    }
    REQUIRE(calls.size() > 16);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < calls.size(); i++) {
            const CallInfo &call = calls[(i * (2 * round + 1)) % calls.size()];
            Selection cached, fresh;
            REQUIRE(select_kernel(call, {}, &cached).ok());
            REQUIRE(select_kernel(call, {}, kernels(), tuned_shapes(), &fresh, tuned_cpu_variants_usable()).ok());
            INFO(call.op << " " << shape_key(call.padding, call.shape));
            CHECK(cached.name == fresh.name);
            CHECK(cached.tier == fresh.tier);
            CHECK(cached.why == fresh.why);
        }
    }
}

TEST_CASE("a forced variant must fit the call", "[dispatch]") {
    Table t;
    Selection s;
    RunOptions forced;
    forced.variant = "op_k3_a";
    REQUIRE(select_kernel(call(3, 1, 1, 9, 9), forced, t.kernels, t.tuned, &s).ok());
    CHECK(s.tier == Tier::forced);
    Status st = select_kernel(call(5, 1, 1, 9, 9), forced, t.kernels, t.tuned, &s);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(st.message().find("does not fit") != std::string::npos);
    forced.variant = "nope";
    CHECK(select_kernel(call(3, 1, 1, 9, 9), forced, t.kernels, t.tuned, &s).message() ==
          "no variant named nope in this build");
}

TEST_CASE("GRADTUNE_VERBOSE prints one line per call with the variant and why", "[dispatch]") {
    Table t;
    for (auto [c, tier] : {std::pair{call(3, 1, 32, 112, 32), "exact"}, std::pair{call(3, 1, 2, 56, 128), "nearest"},
                           std::pair{call(3, 2, 1, 112, 96), "transferred"}, std::pair{call(5, 1, 1, 9, 9), "default"},
                           std::pair{call(7, 1, 1, 9, 9), "generic"}}) {
        Selection s;
        REQUIRE(select_kernel(c, {}, t.kernels, t.tuned, &s).ok());
        std::string line = capture_stderr([&] { report_call(c, Device::cpu, s, 0.5); });
        INFO(line);
        CHECK(line.rfind("gradtune_verbose,cpu,Op,float32,NHWC,", 0) == 0);
        CHECK(line.find("," + s.name + "," + std::string(tier) + ",") != std::string::npos);
        CHECK(std::count(line.begin(), line.end(), '\n') == 1);
    }
}

TEST_CASE("the verbose report of real calls names the variant dispatch chose", "[dispatch]") {
    // Through the public API, with this build's own table: every tuned shape
    // is served exactly, a shape off by a little by the nearest, and another
    // structure by the generic variant.
    using namespace gradtune::testing;
    setenv("GRADTUNE_VERBOSE", "1", 1);
    // Without probes (dispatch.h): a nearest record would otherwise serve
    // only where it measured faster (the next test).
    RunOptions static_choice;
    static_choice.probe_dispatch = false;
    auto run = [&](int64_t n, int64_t h, int64_t w, int64_t c, int k, int s) {
        const int64_t oh = (h + s - 1) / s, ow = (w + s - 1) / s;
        Tensor filter(DataType::kFloat, {k, k, c, 1}), dy(DataType::kFloat, {n, oh, ow, c}), dx;
        return capture_stderr([&] {
            Status st = DepthwiseConv2dNativeBackpropInput::Compute(int32_vector({n, h, w, c}), filter, dy, {1, s, s, 1},
                                                                    "SAME", &dx, {}, static_choice);
            REQUIRE(st.ok());
        });
    };
    std::string line = run(1, 9, 7, 5, 2, 1);
    CHECK(line.find(",generic,") != std::string::npos);
    CHECK(line.find("DepthwiseConv2dNativeBackpropInput_cpu_float32_NHWC_generic") != std::string::npos);
    int tuned = 0;
    for (const VariantInfo &v : Variants("DepthwiseConv2dNativeBackpropInput")) {
        if (v.device != Device::cpu || !v.runs_here || v.dtype != "float32" || v.data_format != "NHWC") continue;
        for (const TunedShapeInfo &ts : v.tuned_for) {
            if (ts.padding != "SAME" || v.structure.at("depth_multiplier") != 1 ||
                v.structure.at("dilation_height") != 1 || v.structure.at("dilation_width") != 1)
                continue;
            const auto &sh = ts.shape;
            const int k = v.structure.at("filter_height"), s = v.structure.at("stride");
            if (k != v.structure.at("filter_width")) continue;
            std::string exact = run(sh.at("N"), sh.at("H"), sh.at("W"), sh.at("C"), k, s);
            INFO(exact);
            // The build takes another class's record only for shapes without
            // one of ours: it then serves its shape as "transferred".
            const std::string tier = ts.source_class == TargetClass() ? "exact" : "transferred";
            CHECK(exact.find("," + v.name + "," + tier + ",") != std::string::npos);
            std::string near = run(sh.at("N") + 1, sh.at("H"), sh.at("W"), sh.at("C"), k, s);
            CHECK(near.find(",nearest,") != std::string::npos);
            tuned++;
        }
    }
    unsetenv("GRADTUNE_VERBOSE");
    if (tuned == 0) WARN("this build has no tuned records for this machine class: exact/nearest checked on the synthetic table only");
}

TEST_CASE("on a CPU that runs the AVX2 baseline, a structure default serves only after it measured faster than the "
          "generic variant",
          "[dispatch][avx2]") {
    // The structure defaults' knobs were chosen on AVX-512 machines. Where
    // the kernels run their AVX2 baseline (GRADTUNE_MAX_CPU_ISA=avx2: ctest's
    // avx2. run of this test), a call a default serves is probed against the
    // generic variant on its first call; elsewhere the default serves as is.
    using namespace gradtune::testing;
    // The first of a few structures with a default whose call no record
    // serves here (records of other shapes serve as nearest).
    const int64_t n = 1, h = 7, w = 5, c = 24;
    std::list<Tensor> tensors;  // OpCall holds references
    std::optional<OpCall> chosen;
    DispatchInfo before, after;
    for (const auto &[dtype, stride, dilation] : std::vector<std::tuple<DataType, int64_t, int64_t>>{
             {DataType::kFloat, 1, 2}, {DataType::kBFloat16, 2, 1}, {DataType::kFloat, 2, 1}, {DataType::kFloat, 1, 1}}) {
        const int64_t oh = (h + stride - 1) / stride, ow = (w + stride - 1) / stride;
        const Tensor &filter = tensors.emplace_back(make_tensor(dtype, {3, 3, c, 1}, random_values(9 * c, 1, dtype)));
        const Tensor &dy = tensors.emplace_back(make_tensor(dtype, {n, oh, ow, c}, random_values(n * oh * ow * c, 2, dtype)));
        const Tensor &sizes = tensors.emplace_back(Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{n, h, w, c}));
        const OpCall call{"DepthwiseConv2dNativeBackpropInput",
                          {{"input_sizes", sizes}, {"filter", filter}, {"out_backprop", dy}},
                          {{"strides", std::vector<int64_t>{1, stride, stride, 1}},
                           {"dilations", std::vector<int64_t>{1, dilation, dilation, 1}},
                           {"padding", std::string("SAME")}}};
        REQUIRE(ExplainDispatch(call, {}, &before).ok());
        if (before.tier == "default") {
            chosen = call;
            break;
        }
    }
    if (!chosen) {
        WARN("every candidate 3x3 depthwise input gradient of 7x5x24 has a record here: not checked");
        return;
    }
    const OpCall &call = *chosen;
    std::vector<Tensor> out;
    REQUIRE(RunOp(call, &out).ok());
    REQUIRE(ExplainDispatch(call, {}, &after).ok());
    INFO(after.why);
    if (cpu_runs_avx2_baseline()) {
        CHECK(after.why.find("probed on the signature's first call (default ") != std::string::npos);
        CHECK((after.tier == "default" || after.tier == "generic"));
    } else {
        CHECK(after.why == before.why);
    }
}

TEST_CASE("a record tuned for another shape serves a call only after it measured faster than what it displaces",
          "[dispatch]") {
    // This build's own records: a tuned depthwise input-gradient shape with
    // one image more is served by that record as nearest, in place of the
    // structure default. The first call times both (quietly) and serves the
    // faster; later calls of the signature keep it; a caller that asks for
    // the static choice gets the record.
    using namespace gradtune::testing;
    std::optional<VariantInfo> tuned;
    std::optional<TunedShapeInfo> shape;
    for (const VariantInfo &v : Variants("DepthwiseConv2dNativeBackpropInput")) {
        if (v.device != Device::cpu || !v.runs_here || v.dtype != "float32" || v.data_format != "NHWC") continue;
        if (v.structure.at("depth_multiplier") != 1 || v.structure.at("dilation_height") != 1 ||
            v.structure.at("filter_height") != 3 || v.structure.at("filter_width") != 3 || v.structure.at("stride") != 1)
            continue;
        for (const TunedShapeInfo &ts : v.tuned_for)
            if (ts.padding == "SAME" && !shape) tuned = v, shape = ts;
    }
    if (!shape) {
        WARN("this build has no tuned 3x3 depthwise input-gradient record for this machine: probes not checked");
        return;
    }
    const auto &sh = shape->shape;
    const int64_t n = sh.at("N") + 3, h = sh.at("H"), w = sh.at("W"), c = sh.at("C");
    const Tensor filter = make_tensor(DataType::kFloat, {3, 3, c, 1}, random_values(9 * c, 1, DataType::kFloat));
    const Tensor dy = make_tensor(DataType::kFloat, {n, h, w, c}, random_values(n * h * w * c, 2, DataType::kFloat));
    Tensor dx;
    auto run = [&](const RunOptions &options) {
        setenv("GRADTUNE_VERBOSE", "1", 1);
        std::string out = capture_stderr([&] {
            REQUIRE(DepthwiseConv2dNativeBackpropInput::Compute(int32_vector({n, h, w, c}), filter, dy, {1, 1, 1, 1},
                                                                "SAME", &dx, {}, options)
                        .ok());
        });
        unsetenv("GRADTUNE_VERBOSE");
        return out;
    };
    RunOptions static_choice;
    static_choice.probe_dispatch = false;
    const std::string before = run(static_choice);
    INFO(before);
    CHECK(before.find("," + tuned->name + ",nearest,") != std::string::npos);
    const std::vector<double> static_dx = to_doubles(dx);

    const std::string first = run({});
    INFO(first);
    // One line: the probe's four runs are neither reported nor journalled.
    REQUIRE(std::count(first.begin(), first.end(), '\n') == 1);
    double record_ms = 0, displaced_ms = 0;
    char displaced_tier[16] = {};
    const size_t at = first.find("probed on the signature's first call (nearest ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(first.c_str() + at, "probed on the signature's first call (nearest %lf ms, %15s %lf ms)",
                        &record_ms, displaced_tier, &displaced_ms) == 3);
    CHECK((std::string(displaced_tier) == "default" || std::string(displaced_tier) == "generic"));
    // The faster serves, under its own tier.
    if (record_ms <= displaced_ms) {
        CHECK(first.find("," + tuned->name + ",nearest,") != std::string::npos);
    } else {
        CHECK(first.find("," + std::string(displaced_tier) + ",probed") != std::string::npos);
    }
    // Either variant computes TF's gradient.
    CHECK(normwise_error(to_doubles(dx), static_dx) < tolerance(DataType::kFloat));

    // The decision stands: the same variant and why, no new probe.
    const std::string second = run({});
    CHECK(second.substr(0, second.rfind(',')) == first.substr(0, first.rfind(',')));
    // The static choice is still the record.
    CHECK(run(static_choice).find("," + tuned->name + ",nearest,") != std::string::npos);
}

TEST_CASE("GRADTUNE_MAX_CPU_ISA=avx2 keeps the multi-target kernels off AVX-512", "[.avx2]") {
    // Run by the avx2.* ctest entries (with the variant and fixture tests)
    // where the build has an AVX2 target: the environment is set there.
    using namespace gradtune::testing;
    const char *isa = std::getenv("GRADTUNE_MAX_CPU_ISA");
    REQUIRE(isa != nullptr);
    REQUIRE(std::string(isa) == "avx2");
    Tensor filter(DataType::kFloat, {3, 3, 8, 1}), dy(DataType::kFloat, {1, 8, 8, 8}), dx;
    REQUIRE(DepthwiseConv2dNativeBackpropInput::Compute(int32_vector({1, 8, 8, 8}), filter, dy, {1, 1, 1, 1}, "SAME",
                                                        &dx)
                .ok());
    // Halide's wrapper asked for the AVX-512 targets first and was refused.
    CHECK(cpu_targets_refused() > 0);
    // Tuned records are compiled for the AVX-512 targets alone (where the
    // build machine has AVX-512): none may run, and none is listed as runnable.
    int tuned_only = 0, not_here = 0;
    for (const Kernel &k : kernels()) tuned_only += k.tuned_targets_only;
    for (const VariantInfo &v : Variants()) {
        if (v.generic || v.structure_default) CHECK(v.runs_here);
        not_here += !v.runs_here;
    }
    CHECK(not_here == tuned_only);
    if (tuned_only > 0) CHECK_FALSE(tuned_cpu_variants_usable());
}

TEST_CASE("the shape journal: whole lines, running totals per signature, threads, an unwritable path", "[journal]") {
    const std::string path = "/tmp/gradtune-journal-test-" + std::to_string(getpid()) + ".jsonl";
    std::remove(path.c_str());
    CallInfo a{"Conv2DBackpropInput", "float32", "NHWC", {{"filter_height", 3}, {"stride_height", 2}}, "SAME",
               {{"N", 1}, {"H", 8}}};
    CallInfo b = a;
    b.shape["N"] = 2;
    const Selection nearest{nullptr, "v", Tier::nearest, "why"};
    {
        // A line left cut short by a crashed process: ours start on a new line.
        std::ofstream(path) << "{\"journal\": 1, \"process\": \"cut";
        Journal journal(path);
        REQUIRE(journal.enabled());
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; t++)
            threads.emplace_back([&, t] {
                for (int i = 0; i < 500; i++) journal.count(t % 2 ? a : b, Device::cpu, nearest, 0.5);
            });
        for (std::thread &t : threads) t.join();
    }  // flushed here
    std::ifstream in(path);
    std::string line;
    std::vector<nlohmann::json> lines;
    int unreadable = 0;
    while (std::getline(in, line)) {
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) {
            unreadable++;
        } else {
            lines.push_back(j);
        }
    }
    CHECK(unreadable == 1);
    REQUIRE(lines.size() == 2);  // one per signature: the flush interval (5 s) did not pass
    for (const nlohmann::json &j : lines) {
        CHECK(j.at("calls") == 1000);
        CHECK(j.at("total_ms").get<double>() == Approx(500.0));
        CHECK(j.at("tier") == "nearest");
        CHECK(j.at("device") == "cpu");
        CHECK(j.at("structure").at("stride_height") == 2);
    }
    CHECK(lines[0].at("process") == lines[1].at("process"));
    CHECK(lines[0].at("shape") != lines[1].at("shape"));
    std::remove(path.c_str());

    // A path that cannot be written: the flush reports it on stderr and
    // turns the journal off, without an exception or a crash.
    {
        Journal bad("/nonexistent-directory/journal.jsonl");
        bad.count(a, Device::cpu, nearest, 1.0);
    }
    CHECK_FALSE(std::ifstream("/nonexistent-directory/journal.jsonl").good());
}

TEST_CASE("every op names the dtype of each input: T, or TF's fixed int32/int64 for shape inputs", "[registry]") {
    // `gradtune run T=...` converts only the T inputs (a missing list turned
    // the int32 input_sizes of Conv2DBackpropInput into bfloat16).
    const std::map<std::string, std::vector<std::string>> tf = {
        {"Conv2D", {"T", "T"}},
        {"Conv2DBackpropInput", {"int32", "T", "T"}},
        {"Conv2DBackpropFilter", {"T", "int32", "T"}},
        {"DepthwiseConv2dNative", {"T", "T"}},
        {"DepthwiseConv2dNativeBackpropInput", {"int32", "T", "T"}},
        {"DepthwiseConv2dNativeBackpropFilter", {"T", "int32", "T"}},
        {"FractionalAvgPool", {"T"}},
        {"FractionalAvgPoolGrad", {"int64", "T", "int64", "int64"}}};
    for (const gradtune::OpSpec &spec : gradtune::RegisteredOps()) {
        INFO(spec.name);
        REQUIRE(tf.count(spec.name));
        CHECK(spec.input_types == tf.at(spec.name));
        CHECK(spec.input_types.size() == spec.inputs.size());
    }
}

TEST_CASE("RunOpInto writes into the caller's memory of the shapes DescribeCall reports", "[dispatch]") {
    // FractionalAvgPoolGrad of the README: a 4x4 image in 2x2 cells.
    const Tensor shape = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, 4, 4, 1});
    const Tensor dy = Tensor::FromVector(DataType::kFloat, {1, 2, 2, 1}, std::vector<float>{4, 8, 12, 16});
    const Tensor cells = Tensor::FromVector(DataType::kInt64, {3}, std::vector<int64_t>{0, 2, 4});
    OpCall call{"FractionalAvgPoolGrad",
                {{"orig_input_tensor_shape", shape}, {"out_backprop", dy},
                 {"row_pooling_sequence", cells}, {"col_pooling_sequence", cells}},
                {}};
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    REQUIRE(info.output_dtypes == std::vector<DataType>{DataType::kFloat});
    REQUIRE(info.output_shapes == std::vector<std::vector<int64_t>>{{1, 4, 4, 1}});
    std::vector<float> memory(16, -1.0f);
    const TensorRef view{DataType::kFloat, {1, 4, 4, 1}, memory.data()};
    REQUIRE(RunOpInto(call, {view}).ok());
    CHECK(memory == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    // A wrong number of outputs, or of the wrong shape, is refused and nothing is written.
    std::fill(memory.begin(), memory.end(), -1.0f);
    Status st = RunOpInto(call, {});
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(st.message() == "FractionalAvgPoolGrad has 1 output(s), 0 given");
    const TensorRef wrong{DataType::kFloat, {1, 4, 2, 2}, memory.data()};
    CHECK(RunOpInto(call, {wrong}).code() == StatusCode::kInvalidArgument);
    CHECK(memory == std::vector<float>(16, -1.0f));
    // A call TF refuses: DescribeCall says so, with RunOp's error.
    call.inputs["orig_input_tensor_shape"] = cells;
    std::vector<Tensor> outputs;
    const Status run = RunOp(call, &outputs);
    const Status described = DescribeCall(call, &info);
    CHECK_FALSE(described.ok());
    CHECK(described.ToString() == run.ToString());
}

TEST_CASE("a pointwise dense gradient is described in its pointwise view", "[dispatch]") {
    // (N, H, W) of a 1x1 stride-1 call without padding -> the view's
    // (N, H, W): NHWC, every position of the batch in rows of up to 64
    // columns (at least two rows); NCHW, each image's positions so; the
    // call's own shape where the view's rows would be no longer.
    struct Row {
        const char *layout;
        std::array<int64_t, 3> call, view;
    };
    const Row rows[] = {{"NHWC", {8, 4, 4}, {1, 2, 64}},  {"NHWC", {1, 56, 56}, {1, 49, 64}},
                        {"NHWC", {3, 5, 5}, {1, 3, 25}},  {"NHWC", {1, 7, 7}, {1, 7, 7}},
                        {"NHWC", {1, 97, 1}, {1, 97, 1}}, {"NHWC", {8, 7, 7}, {1, 7, 56}},
                        {"NCHW", {2, 6, 6}, {2, 2, 18}},  {"NCHW", {8, 4, 4}, {8, 2, 8}}};
    for (const Row &r : rows)
        for (const char *op : {"Conv2DBackpropInput", "Conv2DBackpropFilter"})
            for (const char *padding : {"SAME", "VALID", "EXPLICIT"}) {
                const bool nchw = std::string(r.layout) == "NCHW";
                const auto [n, h, w] = r.call;
                const std::vector<int64_t> x_shape = nchw ? std::vector<int64_t>{n, 6, h, w}
                                                          : std::vector<int64_t>{n, h, w, 6};
                const std::vector<int64_t> dy_shape = nchw ? std::vector<int64_t>{n, 4, h, w}
                                                           : std::vector<int64_t>{n, h, w, 4};
                const Tensor x(DataType::kFloat, x_shape), f(DataType::kFloat, {1, 1, 6, 4}),
                    dy(DataType::kFloat, dy_shape);
                const std::vector<int64_t> x_sizes(x_shape), f_sizes{1, 1, 6, 4};
                const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4},
                                                        std::vector<int32_t>(x_sizes.begin(), x_sizes.end()));
                const Tensor filter_sizes = Tensor::FromVector(DataType::kInt32, {4},
                                                               std::vector<int32_t>(f_sizes.begin(), f_sizes.end()));
                OpCall call{op, {}, {}};
                if (std::string(op) == "Conv2DBackpropInput") {
                    call.inputs = {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}};
                } else {
                    call.inputs = {{"input", x}, {"filter_sizes", filter_sizes}, {"out_backprop", dy}};
                }
                call.attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                              {"padding", std::string(padding)},
                              {"data_format", std::string(r.layout)},
                              {"dilations", nchw ? std::vector<int64_t>{1, 1, 2, 2} : std::vector<int64_t>{1, 2, 2, 1}}};
                if (std::string(padding) == "EXPLICIT") call.attrs["explicit_paddings"] = std::vector<int64_t>(8, 0);
                CallInfo info;
                INFO(op << " " << r.layout << " " << padding << " N" << n << " H" << h << " W" << w);
                REQUIRE(DescribeCall(call, &info).ok());
                const bool viewed = r.view != r.call;
                CHECK(info.shape.at("N") == r.view[0]);
                CHECK(info.shape.at("H") == r.view[1]);
                CHECK(info.shape.at("W") == r.view[2]);
                CHECK(info.padding == (viewed ? "VALID" : padding));
                CHECK(info.structure.at("dilation_height") == (viewed ? 1 : 2));
                // The output keeps the call's own shape.
                CHECK(info.output_shapes[0] == (std::string(op) == "Conv2DBackpropInput" ? x_shape : f_sizes));
            }
    // Not pointwise: a stride, or explicit padding, keeps the call's shape.
    const Tensor f(DataType::kFloat, {1, 1, 6, 4}), dy(DataType::kFloat, {8, 2, 2, 4}),
        dy_padded(DataType::kFloat, {8, 5, 4, 4});
    const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{8, 4, 4, 6});
    OpCall strided{"Conv2DBackpropInput",
                   {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}},
                   {{"strides", std::vector<int64_t>{1, 2, 2, 1}}, {"padding", std::string("VALID")}}};
    CallInfo info;
    REQUIRE(DescribeCall(strided, &info).ok());
    CHECK(info.shape.at("N") == 8);
    CHECK(info.shape.at("W") == 4);
    OpCall padded = strided;
    padded.inputs["out_backprop"] = dy_padded;
    padded.attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                    {"padding", std::string("EXPLICIT")},
                    {"explicit_paddings", std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0}}};
    REQUIRE(DescribeCall(padded, &info).ok());
    CHECK(info.shape.at("N") == 8);
    CHECK(info.padding == "EXPLICIT");
}

namespace {

// A sin-filled float32 tensor of `shape`, seeded by `phase`.
Tensor wave(const std::vector<int64_t> &shape, float phase) {
    std::vector<float> values(static_cast<size_t>(NumElements(shape)));
    for (size_t i = 0; i < values.size(); i++) values[i] = std::sin(0.37f * static_cast<float>(i) + phase);
    return Tensor::FromVector(DataType::kFloat, shape, values);
}

// ||a - b|| / ||b||, Euclidean norms.
double relative_difference(const Tensor &a, const Tensor &b) {
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < b.num_elements(); i++) {
        const double d = a.load(i) - b.load(i);
        diff += d * d;
        norm += b.load(i) * b.load(i);
    }
    return std::sqrt(diff) / std::sqrt(norm);
}

// `call` with GRADTUNE_TAPS_POINTWISE forced each way, into `detoured` and
// `direct`; ExplainDispatch, forced to the detour, names it with `says`.
void run_taps_pointwise_both_ways(const OpCall &call, const std::string &says, std::vector<Tensor> *detoured,
                                  std::vector<Tensor> *direct) {
    setenv("GRADTUNE_TAPS_POINTWISE", "detour", 1);
    DispatchInfo explained;
    REQUIRE(ExplainDispatch(call, {}, &explained).ok());
    CHECK(explained.why.find(says) != std::string::npos);
    REQUIRE(RunOp(call, detoured).ok());
    setenv("GRADTUNE_TAPS_POINTWISE", "direct", 1);
    REQUIRE(RunOp(call, direct).ok());
    unsetenv("GRADTUNE_TAPS_POINTWISE");
}

// A detour's first-call probe: before the signature's first call
// ExplainDispatch says it is yet to measure (`before_says`), after it what it
// measured (`after_says`), and later calls keep that choice. Returns the
// static choice (no probes), for the caller's checks.
DispatchInfo check_detour_probe(const OpCall &call, const std::string &before_says, const std::string &after_says) {
    DispatchInfo before, after, again, fixed;
    REQUIRE(ExplainDispatch(call, {}, &before).ok());
    CHECK(before.why.find(before_says) != std::string::npos);
    std::vector<Tensor> out;
    REQUIRE(RunOp(call, &out).ok());
    REQUIRE(ExplainDispatch(call, {}, &after).ok());
    INFO(after.why);
    CHECK(after.why.find(after_says) != std::string::npos);
    REQUIRE(RunOp(call, &out).ok());
    REQUIRE(ExplainDispatch(call, {}, &again).ok());
    CHECK(again.why == after.why);
    RunOptions static_choice;
    static_choice.probe_dispatch = false;
    REQUIRE(ExplainDispatch(call, static_choice, &fixed).ok());
    return fixed;
}

}  // namespace

TEST_CASE("an NCHW call only the generic variant has in NCHW runs on the NHWC kernels, transposed", "[dispatch]") {
    // A depthwise 3x3 gradient in NCHW: nothing is tuned in NCHW, the NHWC
    // twin has a structure default. Dispatched, the call is served through
    // NHWC (ExplainDispatch says so) and equals the generic NCHW variant's
    // result; forced, it runs the variant it names.
    const int64_t n = 2, c = 8, h = 11, w = 9;
    std::vector<float> x_values(n * c * h * w), f_values(3 * 3 * c), dy_values(n * c * h * w);
    for (size_t i = 0; i < x_values.size(); i++) x_values[i] = std::sin(0.37f * static_cast<float>(i));
    for (size_t i = 0; i < f_values.size(); i++) f_values[i] = std::cos(0.91f * static_cast<float>(i));
    for (size_t i = 0; i < dy_values.size(); i++) dy_values[i] = std::sin(1.3f * static_cast<float>(i) + 0.2f);
    const Tensor x = Tensor::FromVector(DataType::kFloat, {n, c, h, w}, x_values);
    const Tensor f = Tensor::FromVector(DataType::kFloat, {3, 3, c, 1}, f_values);
    const Tensor dy = Tensor::FromVector(DataType::kFloat, {n, c, h, w}, dy_values);
    const Tensor x_sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{2, 8, 11, 9});
    const Tensor f_sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{3, 3, 8, 1});
    const std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                                                    {"padding", std::string("SAME")},
                                                    {"data_format", std::string("NCHW")}};
    for (const OpCall &call :
         {OpCall{"DepthwiseConv2dNativeBackpropInput", {{"input_sizes", x_sizes}, {"filter", f}, {"out_backprop", dy}}, attrs},
          OpCall{"DepthwiseConv2dNativeBackpropFilter", {{"input", x}, {"filter_sizes", f_sizes}, {"out_backprop", dy}}, attrs},
          OpCall{"DepthwiseConv2dNative", {{"input", x}, {"filter", f}}, attrs}}) {
        INFO(call.op);
        CallInfo info;
        REQUIRE(DescribeCall(call, &info).ok());
        REQUIRE(detour_to_nhwc(info, {}));
        DispatchInfo explained;
        REQUIRE(ExplainDispatch(call, {}, &explained).ok());
        CHECK(explained.why.rfind("an NCHW call on the NHWC kernels", 0) == 0);
        CHECK(explained.variant.find("_NHWC_") != std::string::npos);
        std::vector<Tensor> detoured, generic;
        REQUIRE(RunOp(call, &detoured).ok());
        RunOptions forced;
        forced.variant = call.op + "_cpu_float32_NCHW_generic";
        CHECK_FALSE(detour_to_nhwc(info, forced));
        REQUIRE(RunOp(call, &generic, forced).ok());
        REQUIRE(detoured[0].shape() == generic[0].shape());
        CHECK(relative_difference(detoured[0], generic[0]) <= 1e-5);
    }
}


TEST_CASE("a dilated dense gradient only the generic variant has runs as its undilated phases", "[dispatch]") {
    // 3x3 filters at stride 1 with dilations the structure defaults lack: the
    // call runs as one undilated call of its phases' images (ExplainDispatch
    // says so), and equals the generic variant's result. Odd sizes give
    // phases of different sizes, SAME/EXPLICIT pads shift them against each
    // other; an NCHW call takes both detours; phases under 8 x 8 and forced
    // variants do not detour.
    struct Case {
        int64_t h, w, dh, dw;
        std::string padding;
        std::vector<int64_t> pads;  // EXPLICIT: top, bottom, left, right
        std::string format;
    };
    const int64_t n = 2, c = 16, o = 24;
    for (const Case &k : {Case{16, 16, 2, 2, "SAME", {}, "NHWC"}, Case{17, 19, 2, 2, "SAME", {}, "NHWC"},
                          Case{25, 18, 3, 2, "SAME", {}, "NHWC"}, Case{18, 17, 2, 1, "VALID", {}, "NHWC"},
                          Case{17, 21, 2, 2, "EXPLICIT", {1, 3, 0, 2}, "NHWC"}, Case{26, 16, 3, 2, "EXPLICIT", {4, 0, 2, 5}, "NHWC"},
                          Case{16, 17, 2, 2, "SAME", {}, "NCHW"}}) {
        const bool nchw = k.format == "NCHW";
        auto activation = [&](int64_t h, int64_t w, int64_t channels) {
            return nchw ? std::vector<int64_t>{n, channels, h, w} : std::vector<int64_t>{n, h, w, channels};
        };
        auto spatial = [&](int64_t h, int64_t w) {
            return nchw ? std::vector<int64_t>{1, 1, h, w} : std::vector<int64_t>{1, h, w, 1};
        };
        const int64_t pt = k.pads.empty() ? 0 : k.pads[0], pb = k.pads.empty() ? 0 : k.pads[1];
        const int64_t pl = k.pads.empty() ? 0 : k.pads[2], pr = k.pads.empty() ? 0 : k.pads[3];
        const int64_t oh = k.padding == "SAME" ? k.h : k.h + pt + pb - 2 * k.dh;
        const int64_t ow = k.padding == "SAME" ? k.w : k.w + pl + pr - 2 * k.dw;
        std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                                                  {"dilations", spatial(k.dh, k.dw)},
                                                  {"padding", k.padding},
                                                  {"data_format", k.format}};
        if (!k.pads.empty())
            attrs["explicit_paddings"] = nchw ? std::vector<int64_t>{0, 0, 0, 0, pt, pb, pl, pr}
                                              : std::vector<int64_t>{0, 0, pt, pb, pl, pr, 0, 0};
        const std::vector<int64_t> x_shape = activation(k.h, k.w, c);
        const Tensor x_sizes = Tensor::FromVector(DataType::kInt32, {4}, x_shape);
        const Tensor f_sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{3, 3, c, o});
        const Tensor x = wave(x_shape, 0.1f), f = wave({3, 3, c, o}, 0.7f), dy = wave(activation(oh, ow, o), 1.9f);
        for (const OpCall &call :
             {OpCall{"Conv2DBackpropInput", {{"input_sizes", x_sizes}, {"filter", f}, {"out_backprop", dy}}, attrs},
              OpCall{"Conv2DBackpropFilter", {{"input", x}, {"filter_sizes", f_sizes}, {"out_backprop", dy}}, attrs}}) {
            INFO(call.op << " " << k.h << "x" << k.w << " dilation " << k.dh << "x" << k.dw << " " << k.padding << " "
                         << k.format);
            CallInfo info;
            const Status described = DescribeCall(call, &info);
            INFO(described.ToString());
            REQUIRE(described.ok());
            REQUIRE((nchw ? detour_to_nhwc(info, {}) : detour_to_phases(info, {})));
            DispatchInfo explained;
            REQUIRE(ExplainDispatch(call, {}, &explained).ok());
            CHECK(explained.why.find("undilated phases") != std::string::npos);
            CHECK(explained.tier != "generic");
            std::vector<Tensor> phased, generic;
            REQUIRE(RunOp(call, &phased).ok());
            RunOptions forced;
            forced.variant = call.op + "_cpu_float32_" + k.format + "_generic";
            CHECK_FALSE(detour_to_phases(info, forced));
            REQUIRE(RunOp(call, &generic, forced).ok());
            REQUIRE(phased[0].shape() == generic[0].shape());
            CHECK(relative_difference(phased[0], generic[0]) <= 1e-4);  // float32 sums in another order
        }
    }
    SECTION("phases under 8 x 8 positions stay on the generic variant") {
        CallInfo info;
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{1, 15, 17, 8});
        const Tensor f = wave({3, 3, 8, 8}, 0.7f), dy = wave({1, 15, 17, 8}, 1.9f);
        const OpCall call{"Conv2DBackpropInput",
                          {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}},
                          {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                           {"dilations", std::vector<int64_t>{1, 3, 3, 1}},
                           {"padding", std::string("SAME")}}};
        REQUIRE(DescribeCall(call, &info).ok());
        CHECK_FALSE(dilation_phases(info).usable);
        CHECK_FALSE(detour_to_phases(info, {}));
    }
}
TEST_CASE("a strided or small-grid input gradient runs as its stride-1 pointwise call, the filter's taps as "
          "channels, summed into place, where that measured faster",
          "[dispatch]") {
    // Both ways give the generic variant's result (a 1x1 filter's with exact
    // zeros at the positions no out_backprop position reaches); 1x1, 2x2,
    // 3x3 and 5x5 filters, odd sizes, unequal strides, SAME, VALID and
    // EXPLICIT pads before and after, a grid smaller than the filter;
    // ExplainDispatch names the way; a grouped, dilated or NCHW call, a
    // forced variant, 16-bit dtypes with overlapping taps and products past
    // the scratch limit do not detour; the first call of a signature
    // measures both ways and keeps one.
    struct Case {
        int64_t h, w, sh, sw;
        std::string padding;
        std::vector<int64_t> pads;  // EXPLICIT: top, bottom, left, right
        int64_t fh = 1, fw = 1;
    };
    const int64_t n = 2, c = 24, o = 40;
    auto call_of = [&](const Case &k, const Tensor &f, const Tensor &dy, const Tensor &sizes) {
        std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, k.sh, k.sw, 1}},
                                                  {"padding", k.padding}};
        if (!k.pads.empty())
            attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, k.pads[0], k.pads[1], k.pads[2], k.pads[3], 0, 0};
        return OpCall{"Conv2DBackpropInput", {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}}, attrs};
    };
    // out_backprop's extent in one dimension, as TF computes it.
    auto out_size = [](const std::string &padding, int64_t size, int64_t taps, int64_t stride, int64_t before,
                       int64_t after) {
        if (padding == "SAME") return (size + stride - 1) / stride;
        return (size + before + after - taps) / stride + 1;
    };
    for (const Case &k : {Case{8, 8, 2, 2, "VALID", {}}, Case{9, 7, 2, 2, "SAME", {}}, Case{10, 9, 3, 2, "VALID", {}},
                          Case{7, 8, 2, 3, "EXPLICIT", {0, 1, 0, 1}}, Case{8, 8, 2, 2, "EXPLICIT", {1, 0, 2, 1}},
                          Case{8, 8, 2, 2, "VALID", {}, 2, 2}, Case{7, 7, 2, 2, "SAME", {}, 3, 3},
                          Case{9, 8, 2, 2, "VALID", {}, 3, 3}, Case{9, 10, 2, 3, "EXPLICIT", {1, 1, 2, 0}, 3, 3},
                          Case{4, 4, 2, 2, "SAME", {}, 5, 5}, Case{11, 6, 3, 2, "SAME", {}, 5, 3},
                          Case{4, 4, 1, 1, "SAME", {}, 3, 3}, Case{2, 3, 1, 1, "SAME", {}, 3, 3},
                          Case{8, 7, 1, 1, "EXPLICIT", {2, 0, 1, 1}, 5, 3}}) {
        const int64_t pt = k.pads.empty() ? 0 : k.pads[0], pb = k.pads.empty() ? 0 : k.pads[1];
        const int64_t pl = k.pads.empty() ? 0 : k.pads[2], pr = k.pads.empty() ? 0 : k.pads[3];
        const int64_t oh = out_size(k.padding, k.h, k.fh, k.sh, pt, pb), ow = out_size(k.padding, k.w, k.fw, k.sw, pl, pr);
        INFO(k.h << "x" << k.w << " filter " << k.fh << "x" << k.fw << " stride " << k.sh << "x" << k.sw << " "
                 << k.padding);
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{n, k.h, k.w, c});
        const Tensor f = wave({k.fh, k.fw, c, o}, 0.7f), dy = wave({n, oh, ow, o}, 1.9f);
        const OpCall call = call_of(k, f, dy, sizes);
        CallInfo info;
        REQUIRE(DescribeCall(call, &info).ok());
        int64_t rows = 0, cols = 0;
        REQUIRE(taps_pointwise_fits(info, {}, &rows, &cols));
        CHECK(rows == oh);
        CHECK(cols == ow);
        RunOptions forced;
        forced.variant = "Conv2DBackpropInput_cpu_float32_NHWC_generic";
        CHECK_FALSE(taps_pointwise_fits(info, forced, &rows, &cols));
        std::vector<Tensor> generic, detoured, direct;
        REQUIRE(RunOp(call, &generic, forced).ok());
        run_taps_pointwise_both_ways(call, "the filter's taps as channels, summed into place", &detoured, &direct);
        CHECK(relative_difference(detoured[0], generic[0]) <= 1e-5);
        CHECK(relative_difference(direct[0], generic[0]) <= 1e-5);
        if (k.fh == 1 && k.fw == 1 && pt == 0 && pl == 0) {
            const float *dx = detoured[0].as<float>();
            int64_t off_grid = 0;
            for (int64_t i = 0; i < detoured[0].num_elements(); i++) {
                const int64_t x = (i / c) % k.w, y = (i / (c * k.w)) % k.h;
                if (y % k.sh != 0 || x % k.sw != 0) off_grid += dx[i] != 0.0f;
            }
            CHECK(off_grid == 0);
        }
    }
    SECTION("a grouped, dilated or NCHW call, stride 1 beyond 64 positions or with a 1x1 filter, 16-bit dtypes "
            "with overlapping taps and products past the scratch limit do not detour") {
        const Tensor f = wave({3, 3, 8, 8}, 0.7f), dy = wave({1, 4, 4, 8}, 1.9f);
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{1, 8, 8, 8});
        CallInfo info;
        REQUIRE(DescribeCall(call_of(Case{8, 8, 2, 2, "SAME", {}, 3, 3}, f, dy, sizes), &info).ok());
        int64_t rows = 0, cols = 0;
        REQUIRE(taps_pointwise_fits(info, {}, &rows, &cols));
        for (const auto &[key, value] : std::map<std::string, int>{{"groups", 2}, {"dilation_height", 2}}) {
            CallInfo changed = info;
            changed.structure[key] = value;
            CHECK_FALSE(taps_pointwise_fits(changed, {}, &rows, &cols));
        }
        // Stride 1: a grid of up to 64 positions, a filter larger than 1x1.
        CallInfo unstrided = info;
        unstrided.structure["stride_height"] = unstrided.structure["stride_width"] = 1;
        CHECK(taps_pointwise_fits(unstrided, {}, &rows, &cols));
        CHECK(rows * cols == 64);
        unstrided.shape["W"] = 9;
        CHECK_FALSE(taps_pointwise_fits(unstrided, {}, &rows, &cols));
        unstrided.shape["W"] = 8;
        unstrided.structure["filter_height"] = unstrided.structure["filter_width"] = 1;
        CHECK_FALSE(taps_pointwise_fits(unstrided, {}, &rows, &cols));
        CallInfo nchw = info;
        nchw.data_format = "NCHW";
        CHECK_FALSE(taps_pointwise_fits(nchw, {}, &rows, &cols));
        // bfloat16: a 3x3 filter's taps overlap at stride 2; a 2x2 one's do not.
        CallInfo bf16 = info;
        bf16.dtype = "bfloat16";
        CHECK_FALSE(taps_pointwise_fits(bf16, {}, &rows, &cols));
        bf16.structure["filter_height"] = bf16.structure["filter_width"] = 2;
        CHECK(taps_pointwise_fits(bf16, {}, &rows, &cols));
        CallInfo large = info;
        large.shape["N"] = (kTapsPointwiseScratchBytes / 4) / (4 * 4 * 9 * 8) + 1;
        CHECK_FALSE(taps_pointwise_fits(large, {}, &rows, &cols));
        large.shape["N"] -= 1;
        CHECK(taps_pointwise_fits(large, {}, &rows, &cols));
    }
    SECTION("the first call of a signature measures both ways, and its choice stands") {
        const Case k{12, 12, 2, 2, "VALID", {}};
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{n, k.h, k.w, c});
        const Tensor f = wave({1, 1, c, o}, 0.3f), dy = wave({n, 6, 6, o}, 1.1f);
        const OpCall call = call_of(k, f, dy, sizes);
        const DispatchInfo fixed = check_detour_probe(call, "until the signature's first call has measured",
                                                      "probed on the signature's first call (as the pointwise call ");
        // The static choice (no probes) is the call's own kernels, as before.
        CHECK(fixed.why.find("summed into place") == std::string::npos);
        CHECK(fixed.why.find("own kernels") == std::string::npos);
    }
}

TEST_CASE("a strided or small-grid filter gradient runs as its stride-1 pointwise call, the input's taps gathered "
          "as channels, where that measured faster",
          "[dispatch]") {
    // Both ways give the generic variant's result: 1x1, 2x2, 3x3 and 5x5
    // filters, unequal strides, SAME, VALID and EXPLICIT pads, stride 1 on a
    // small grid, float32 and bfloat16 (its taps are copies, not sums).
    struct Case {
        int64_t h, w, sh, sw, fh, fw;
        std::string padding;
        DataType dtype = DataType::kFloat;
    };
    const int64_t n = 3, c = 20, o = 24;
    for (const Case &k : {Case{8, 8, 2, 2, 1, 1, "VALID"}, Case{9, 7, 2, 3, 3, 3, "SAME"},
                          Case{7, 7, 2, 2, 5, 5, "SAME"}, Case{10, 9, 2, 2, 2, 2, "VALID"},
                          Case{9, 8, 2, 2, 3, 3, "EXPLICIT"}, Case{4, 4, 1, 1, 3, 3, "SAME"},
                          Case{5, 3, 1, 1, 3, 3, "SAME", DataType::kBFloat16},
                          Case{8, 8, 2, 2, 3, 3, "SAME", DataType::kBFloat16}}) {
        const std::vector<int64_t> pads = {1, 2, 0, 1};  // EXPLICIT: top, bottom, left, right
        auto out_size = [&](int64_t size, int64_t taps, int64_t stride, int64_t before, int64_t after) {
            if (k.padding == "SAME") return (size + stride - 1) / stride;
            if (k.padding == "VALID") before = after = 0;
            return (size + before + after - taps) / stride + 1;
        };
        const int64_t oh = out_size(k.h, k.fh, k.sh, pads[0], pads[1]), ow = out_size(k.w, k.fw, k.sw, pads[2], pads[3]);
        INFO(k.h << "x" << k.w << " filter " << k.fh << "x" << k.fw << " stride " << k.sh << "x" << k.sw << " "
                 << k.padding << " " << DataTypeName(k.dtype));
        std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, k.sh, k.sw, 1}},
                                                  {"padding", k.padding}};
        if (k.padding == "EXPLICIT")
            attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0};
        auto as_dtype = [&](const Tensor &t) {
            Tensor cast(k.dtype, t.shape());
            for (int64_t i = 0; i < t.num_elements(); i++) cast.store(i, t.load(i));
            return cast;
        };
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{k.fh, k.fw, c, o});
        const Tensor x = as_dtype(wave({n, k.h, k.w, c}, 0.7f)), dy = as_dtype(wave({n, oh, ow, o}, 1.9f));
        const OpCall call{"Conv2DBackpropFilter", {{"input", x}, {"filter_sizes", sizes}, {"out_backprop", dy}}, attrs};
        CallInfo info;
        REQUIRE(DescribeCall(call, &info).ok());
        int64_t rows = 0, cols = 0;
        REQUIRE(taps_pointwise_fits(info, {}, &rows, &cols));
        CHECK(rows == oh);
        CHECK(cols == ow);
        RunOptions forced;
        forced.variant = std::string("Conv2DBackpropFilter_cpu_") + DataTypeName(k.dtype) + "_NHWC_generic";
        std::vector<Tensor> generic, detoured, direct;
        REQUIRE(RunOp(call, &generic, forced).ok());
        run_taps_pointwise_both_ways(call, "the input's taps gathered as channels", &detoured, &direct);
        const double tolerance = k.dtype == DataType::kFloat ? 1e-5 : 1e-2;
        CHECK(relative_difference(detoured[0], generic[0]) <= tolerance);
        CHECK(relative_difference(direct[0], generic[0]) <= tolerance);
    }
}

TEST_CASE("16-bit float values widen to float32 exactly and round back to nearest even", "[dispatch]") {
    // Every bit pattern of both types, through the detour's parallel copies,
    // against tensor.h's scalar conversions; then float32 values halfway
    // between two 16-bit ones, NaN, infinities and ones that overflow.
    for (DataType dtype : {DataType::kBFloat16, DataType::kHalf}) {
        INFO(DataTypeName(dtype));
        Tensor all(dtype, {65536});
        for (int i = 0; i < 65536; i++) all.as<uint16_t>()[i] = static_cast<uint16_t>(i);
        const uint16_t *bits = all.as<uint16_t>();
        std::vector<float> widened(65536);
        widen_to_float32(all, widened.data(), nullptr);
        int64_t wrong = 0;
        for (size_t i = 0; i < widened.size(); i++) {
            const float want = dtype == DataType::kBFloat16 ? BFloat16BitsToFloat(bits[i]) : HalfBitsToFloat(bits[i]);
            wrong += std::isnan(want) ? !std::isnan(widened[i]) : std::memcmp(&want, &widened[i], 4) != 0;
        }
        CHECK(wrong == 0);
        std::vector<float> values = widened;
        for (float v : {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65520.0f,
                        -65519.0f, 3.4e38f, 1e-8f, -3e-5f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::quiet_NaN()})
            values.push_back(v);
        for (int i = 0; i < 1000; i++) values.push_back(std::sin(0.37f * static_cast<float>(i)) * std::exp2(i % 40 - 20));
        Tensor narrowed(dtype, {static_cast<int64_t>(values.size())});
        narrow_from_float32(values.data(), narrowed.ref(), nullptr);
        wrong = 0;
        for (size_t i = 0; i < values.size(); i++) {
            const uint16_t want = dtype == DataType::kBFloat16 ? FloatToBFloat16Bits(values[i]) : FloatToHalfBits(values[i]);
            wrong += narrowed.as<uint16_t>()[i] != want;
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("a 16-bit convolution gradient runs as its float32 call where that measured faster, or without probes "
          "where only the generic variant fits it",
          "[dispatch]") {
    // The detour's result is the float32 call's on the widened operands,
    // rounded once: bit for bit, dense and depthwise. A 5x5 stride-2 call
    // has no 16-bit variant but the generic one: without probes it detours.
    const int64_t n = 2, c = 8, o = 16;
    auto as_dtype = [](const Tensor &t, DataType dtype) {
        Tensor cast(dtype, t.shape());
        for (int64_t i = 0; i < t.num_elements(); i++) cast.store(i, t.load(i));
        return cast;
    };
    auto call_of = [](const std::string &op, const Tensor &operand, const Tensor &dy, const Tensor &sizes,
                      int64_t stride) {
        const std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{1, stride, stride, 1}},
                                                        {"padding", std::string("SAME")}};
        if (op.find("BackpropInput") != std::string::npos)
            return OpCall{op, {{"input_sizes", sizes}, {"filter", operand}, {"out_backprop", dy}}, attrs};
        return OpCall{op, {{"input", operand}, {"filter_sizes", sizes}, {"out_backprop", dy}}, attrs};
    };
    SECTION("each way gives the float32 call's sums; without probes the detour, with them the first call's choice") {
        for (DataType dtype : {DataType::kBFloat16, DataType::kHalf})
            for (const std::string op : {"Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
                                         "DepthwiseConv2dNativeBackpropFilter"}) {
                INFO(op << " " << DataTypeName(dtype));
                const bool input = op.find("BackpropInput") != std::string::npos;
                const int64_t out = op.find("Depthwise") == 0 ? c : o, multiplier = op.find("Depthwise") == 0 ? 1 : o;
                const Tensor operand16 =
                    as_dtype(input ? wave({5, 5, c, multiplier}, 0.3f) : wave({n, 9, 9, c}, 0.3f), dtype);
                const Tensor dy16 = as_dtype(wave({n, 5, 5, out}, 1.1f), dtype);
                const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4},
                                                        input ? std::vector<int64_t>{n, 9, 9, c}
                                                              : std::vector<int64_t>{5, 5, c, multiplier});
                const OpCall call = call_of(op, operand16, dy16, sizes, 2);
                CallInfo info;
                REQUIRE(DescribeCall(call, &info).ok());
                REQUIRE(float32_detour_fits(info, {}));
                Selection own;
                REQUIRE(select_kernel(info, {}, &own).ok());
                REQUIRE(own.tier == Tier::generic);
                RunOptions static_choice;
                static_choice.probe_dispatch = false;
                const DetourChoice unprobed = float32_detour_choice(info, static_choice);
                CHECK((unprobed.known && unprobed.detour));
                DispatchInfo explained;
                REQUIRE(ExplainDispatch(call, static_choice, &explained).ok());
                INFO(explained.why);
                CHECK(explained.why.find("call as its float32 call") != std::string::npos);
                CHECK(explained.variant.find("_float32_") != std::string::npos);
                std::vector<Tensor> detoured, widened;
                setenv("GRADTUNE_FLOAT32_DETOUR", "detour", 1);
                REQUIRE(RunOp(call, &detoured).ok());
                unsetenv("GRADTUNE_FLOAT32_DETOUR");
                const Tensor operand32 = as_dtype(operand16, DataType::kFloat), dy32 = as_dtype(dy16, DataType::kFloat);
                REQUIRE(RunOp(call_of(op, operand32, dy32, sizes, 2), &widened).ok());
                Tensor rounded(dtype, widened[0].shape());
                narrow_from_float32(widened[0].as<float>(), rounded.ref(), nullptr);
                REQUIRE(detoured[0].dtype() == dtype);
                CHECK(std::memcmp(detoured[0].data(), rounded.data(), static_cast<size_t>(rounded.num_elements()) * 2) == 0);
                // Forced the other way: the 16-bit generic variant, the same sums.
                setenv("GRADTUNE_FLOAT32_DETOUR", "direct", 1);
                std::vector<Tensor> direct;
                REQUIRE(ExplainDispatch(call, {}, &explained).ok());
                CHECK(explained.variant.find(std::string("_") + DataTypeName(dtype) + "_") != std::string::npos);
                REQUIRE(RunOp(call, &direct).ok());
                unsetenv("GRADTUNE_FLOAT32_DETOUR");
                CHECK(relative_difference(direct[0], detoured[0]) <= 1e-2);
                // With probes the first call measures both ways.
                REQUIRE(ExplainDispatch(call, {}, &explained).ok());
                CHECK(explained.why.find("until the signature's first call has measured them against its float32 call") !=
                      std::string::npos);
                REQUIRE(RunOp(call, &direct).ok());
                REQUIRE(ExplainDispatch(call, {}, &explained).ok());
                CHECK(explained.why.find("probed on the signature's first call (in float32 ") != std::string::npos);
            }
    }
    SECTION("float32 and float64 calls, other ops, forced variants and copies past the scratch limit do not "
            "detour") {
        const Tensor dy = as_dtype(wave({n, 5, 5, o}, 1.1f), DataType::kBFloat16);
        const Tensor f = as_dtype(wave({5, 5, c, o}, 0.3f), DataType::kBFloat16);
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{n, 9, 9, c});
        CallInfo info;
        REQUIRE(DescribeCall(call_of("Conv2DBackpropInput", f, dy, sizes, 2), &info).ok());
        REQUIRE(float32_detour_fits(info, {}));
        for (const char *other : {"float32", "float64"}) {
            CallInfo changed = info;
            changed.dtype = other;
            CHECK_FALSE(float32_detour_fits(changed, {}));
        }
        CallInfo forward = info;
        forward.op = "Conv2D";
        CHECK_FALSE(float32_detour_fits(forward, {}));
        RunOptions forced;
        forced.variant = "Conv2DBackpropInput_cpu_bfloat16_NHWC_generic";
        CHECK_FALSE(float32_detour_fits(info, forced));
        // N H W (C + O) + 5 5 C O floats, at the limit and one image past it.
        const int64_t per_image = 9 * 9 * (c + o), filter = 5 * 5 * c * o;
        CallInfo large = info;
        large.shape["N"] = (kFloat32DetourScratchBytes / 4 - filter) / per_image;
        CHECK(float32_detour_fits(large, {}));
        large.shape["N"] += 1;
        CHECK_FALSE(float32_detour_fits(large, {}));
    }
    SECTION("where a 16-bit variant fits, the first call of a signature measures both ways, and its choice "
            "stands") {
        // A 3x3 stride-1 bfloat16 input gradient: the structure default of
        // the bfloat16 dense suite (bench/suites/bf16_dense.txt) where this
        // machine's class has one.
        const Tensor f = as_dtype(wave({3, 3, c, o}, 0.3f), DataType::kBFloat16);
        const Tensor dy = as_dtype(wave({n, 7, 7, o}, 1.7f), DataType::kBFloat16);
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{n, 7, 7, c});
        const OpCall call = call_of("Conv2DBackpropInput", f, dy, sizes, 1);
        CallInfo info;
        REQUIRE(DescribeCall(call, &info).ok());
        Selection own;
        REQUIRE(select_kernel(info, {}, &own).ok());
        if (own.tier == Tier::generic) {
            WARN("no bfloat16 3x3 input-gradient variant but the generic one for this machine: probe not checked");
            return;
        }
        const DispatchInfo fixed =
            check_detour_probe(call, "until the signature's first call has measured them against its float32 call",
                               "probed on the signature's first call (in float32 ");
        // Without probes, the 16-bit kernels.
        CHECK(fixed.variant.find("_bfloat16_") != std::string::npos);
    }
}

TEST_CASE("a grouped dense gradient only the generic variant has runs as ungrouped calls of its group blocks",
          "[dispatch]") {
    // Groups of 16 or more channels run one by one, smaller ones in blocks
    // that fill 16 lanes (block-diagonal filters; the input gradient's a
    // divisor of the groups where one of up to 8 groups is), the last block
    // holding what is left where the block does not divide the groups
    // (RegNet's 19 groups of 8); strides, paddings, a pointwise view, NCHW (both detours)
    // and 16-bit dtypes; each equals the generic variant's result. Groups of
    // one channel, and forced variants, stay on the generic variant.
    struct Case {
        int64_t groups, c, o, filter, stride;
        std::string padding;
        std::string format;
        DataType dtype;
        int64_t per_block;
        int64_t input_per_block = 0;  // the input gradient's, where it differs (a divisor of the groups)
    };
    const int64_t n = 2, h = 13, w = 11;
    for (const Case &k : {Case{2, 32, 48, 3, 1, "SAME", "NHWC", DataType::kFloat, 1},
                          Case{4, 32, 32, 3, 1, "SAME", "NHWC", DataType::kFloat, 2},
                          Case{8, 32, 64, 3, 2, "SAME", "NHWC", DataType::kFloat, 4},
                          Case{8, 64, 32, 5, 1, "VALID", "NHWC", DataType::kFloat, 4},
                          Case{4, 32, 32, 3, 2, "EXPLICIT", "NHWC", DataType::kFloat, 2},
                          Case{4, 32, 64, 1, 1, "VALID", "NHWC", DataType::kFloat, 2},
                          Case{4, 32, 32, 3, 1, "SAME", "NCHW", DataType::kFloat, 2},
                          Case{2, 32, 32, 3, 1, "SAME", "NHWC", DataType::kBFloat16, 1},
                          Case{4, 32, 32, 3, 1, "SAME", "NHWC", DataType::kDouble, 2},
                          Case{3, 24, 24, 3, 1, "SAME", "NHWC", DataType::kFloat, 2, 3},
                          Case{5, 40, 20, 3, 2, "SAME", "NHWC", DataType::kFloat, 4, 5},
                          Case{19, 152, 152, 3, 1, "SAME", "NHWC", DataType::kFloat, 2}}) {
        const bool nchw = k.format == "NCHW";
        auto activation = [&](int64_t rows, int64_t cols, int64_t channels) {
            return nchw ? std::vector<int64_t>{n, channels, rows, cols} : std::vector<int64_t>{n, rows, cols, channels};
        };
        const std::vector<int64_t> pads = {1, 2, 0, 1};  // EXPLICIT: top, bottom, left, right
        auto out_size = [&](int64_t size, int64_t before, int64_t after) {
            if (k.padding == "SAME") return (size + k.stride - 1) / k.stride;
            if (k.padding == "VALID") return (size - k.filter) / k.stride + 1;
            return (size + before + after - k.filter) / k.stride + 1;
        };
        std::map<std::string, AttrValue> attrs = {
            {"strides", nchw ? std::vector<int64_t>{1, 1, k.stride, k.stride} : std::vector<int64_t>{1, k.stride, k.stride, 1}},
            {"padding", k.padding},
            {"data_format", k.format}};
        if (k.padding == "EXPLICIT") attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0};
        const std::vector<int64_t> x_shape = activation(h, w, k.c), f_shape = {k.filter, k.filter, k.c / k.groups, k.o};
        auto of_dtype = [&](const Tensor &t) {
            Tensor cast(k.dtype, t.shape());
            for (int64_t i = 0; i < t.num_elements(); i++) cast.store(i, t.load(i));
            return cast;
        };
        const Tensor x = of_dtype(wave(x_shape, 0.1f)), f = of_dtype(wave(f_shape, 0.7f));
        const Tensor dy = of_dtype(wave(activation(out_size(h, pads[0], pads[1]), out_size(w, pads[2], pads[3]), k.o), 1.9f));
        const Tensor x_sizes = Tensor::FromVector(DataType::kInt32, {4}, x_shape);
        const Tensor f_sizes = Tensor::FromVector(DataType::kInt32, {4}, f_shape);
        for (const OpCall &call :
             {OpCall{"Conv2DBackpropInput", {{"input_sizes", x_sizes}, {"filter", f}, {"out_backprop", dy}}, attrs},
              OpCall{"Conv2DBackpropFilter", {{"input", x}, {"filter_sizes", f_sizes}, {"out_backprop", dy}}, attrs}}) {
            INFO(call.op << " G=" << k.groups << " C=" << k.c << " O=" << k.o << " " << k.filter << "x" << k.filter
                         << " stride " << k.stride << " " << k.padding << " " << k.format << " "
                         << DataTypeName(k.dtype));
            CallInfo info;
            const Status described = DescribeCall(call, &info);
            INFO(described.ToString());
            REQUIRE(described.ok());
            REQUIRE((nchw ? detour_to_nhwc(info, {}) : detour_to_group_blocks(info, {})));
            const int64_t per_block =
                call.op == "Conv2DBackpropInput" && k.input_per_block ? k.input_per_block : k.per_block;
            if (!nchw) CHECK(group_blocks(info).per_block == per_block);
            DispatchInfo explained;
            REQUIRE(ExplainDispatch(call, {}, &explained).ok());
            CHECK(explained.why.find("ungrouped calls of " + std::to_string(per_block) + " group") !=
                  std::string::npos);
            const int64_t left = k.groups % per_block;
            CHECK((explained.why.find("(the last of " + std::to_string(left) + ")") != std::string::npos) ==
                  (left != 0));
            std::vector<Tensor> blocked, generic;
            REQUIRE(RunOp(call, &blocked).ok());
            RunOptions forced;
            forced.variant = call.op + "_cpu_" + DataTypeName(k.dtype) + "_" + k.format + "_generic";
            CHECK_FALSE(detour_to_group_blocks(info, forced));
            REQUIRE(RunOp(call, &generic, forced).ok());
            REQUIRE(blocked[0].shape() == generic[0].shape());
            CHECK(relative_difference(blocked[0], generic[0]) <= (k.dtype == DataType::kBFloat16 ? 1e-2 : 1e-5));
        }
    }
    SECTION("a non-finite out_backprop value stays in its group, as in TensorFlow") {
        // 4 groups of 4 channels run as one block of 4 groups; an Inf in a
        // channel of group 1 would make NaN of the other groups' input
        // gradient through the block's zeros (0 x Inf): such a call stays on
        // the generic variant.
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{1, 8, 8, 16});
        const Tensor f = wave({3, 3, 4, 16}, 0.7f);
        Tensor dy = wave({1, 8, 8, 16}, 1.9f);
        dy.store((3 * 8 + 3) * 16 + 5, std::numeric_limits<double>::infinity());
        const OpCall call{"Conv2DBackpropInput",
                          {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}},
                          {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("SAME")}}};
        CallInfo info;
        REQUIRE(DescribeCall(call, &info).ok());
        REQUIRE(detour_to_group_blocks(info, {}));
        REQUIRE(group_blocks(info).per_block == 4);
        std::vector<Tensor> got;
        REQUIRE(RunOp(call, &got).ok());
        int64_t non_finite_outside = 0, non_finite_inside = 0;
        for (int64_t i = 0; i < got[0].num_elements(); i++) {
            if (std::isfinite(got[0].load(i))) continue;
            (i % 16 / 4 == 1 ? non_finite_inside : non_finite_outside)++;
        }
        CHECK(non_finite_outside == 0);
        CHECK(non_finite_inside > 0);
    }
    SECTION("groups of one channel stay on the generic variant") {
        CallInfo info;
        const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{1, 8, 8, 32});
        const Tensor f = wave({3, 3, 1, 32}, 0.7f), dy = wave({1, 8, 8, 32}, 1.9f);
        const OpCall call{"Conv2DBackpropInput",
                          {{"input_sizes", sizes}, {"filter", f}, {"out_backprop", dy}},
                          {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("SAME")}}};
        REQUIRE(DescribeCall(call, &info).ok());
        CHECK(group_blocks(info).per_block == 16);
        CHECK_FALSE(group_blocks(info).usable);
        CHECK_FALSE(detour_to_group_blocks(info, {}));
    }
}

TEST_CASE("a filter gradient whose output channels the kernel's tile does not divide runs on two channel slices",
          "[dispatch]") {
    // The generic variant's tile is 2 vectors of 16 lanes: its kernel runs a
    // call of 40 output channels on channels [0, 32) then [32, 40), views of
    // out_backprop and the filter gradient, and the result equals a plain
    // sum; channel counts the tile divides, fewer than a tile, NCHW and
    // grouped calls run whole.
    CHECK(output_channel_tile("algorithm=0 tile_ci=4 vector_width=16 vectors_per_tile=4") == 64);
    CHECK(output_channel_tile("rows_per_task=4 tile_width=1") == 0);
    const int64_t n = 2, h = 7, w = 6, c = 5;
    RunOptions generic;
    generic.variant = "Conv2DBackpropFilter_cpu_float32_NHWC_generic";
    std::list<Tensor> tensors;  // the calls' operands (an OpCall holds views)
    auto call_of = [&](int64_t o, int64_t groups, const std::string &format) {
        const bool nchw = format == "NCHW";
        const std::vector<int64_t> x_shape = nchw ? std::vector<int64_t>{n, c * groups, h, w}
                                                  : std::vector<int64_t>{n, h, w, c * groups};
        const std::vector<int64_t> dy_shape = nchw ? std::vector<int64_t>{n, o, h, w} : std::vector<int64_t>{n, h, w, o};
        const Tensor &x = tensors.emplace_back(wave(x_shape, 0.1f));
        const Tensor &dy = tensors.emplace_back(wave(dy_shape, 1.9f));
        const Tensor &sizes =
            tensors.emplace_back(Tensor::FromVector(DataType::kInt32, {4}, std::vector<int64_t>{3, 3, c, o}));
        return OpCall{"Conv2DBackpropFilter",
                      {{"input", x}, {"filter_sizes", sizes}, {"out_backprop", dy}},
                      {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                       {"padding", std::string("SAME")},
                       {"data_format", format}}};
    };
    const OpCall call = call_of(40, 1, "NHWC");
    CallInfo info;
    REQUIRE(DescribeCall(call, &info).ok());
    Selection selected;
    REQUIRE(select_kernel(info, generic, &selected).ok());
    CHECK(selected.output_channel_tile == 32);
    CHECK(split_output_channels(info, Device::cpu, selected.output_channel_tile) == 32);
    CHECK(split_output_channels(info, Device::cuda, selected.output_channel_tile) == 0);
    DispatchInfo explained;
    REQUIRE(ExplainDispatch(call, generic, &explained).ok());
    CHECK(explained.why.find("; run on output channels [0, 32) then [32, 40) (its register tile of 32 does not "
                             "divide 40)") != std::string::npos);
    std::vector<Tensor> got;
    REQUIRE(RunOp(call, &got, generic).ok());
    // Against the plain-loop reference (SAME 3x3 at stride 1: one row and
    // column of padding before).
    auto values = [](const ConstTensorRef &t) {
        const float *data = static_cast<const float *>(t.data);
        return std::vector<double>(data, data + NumElements(t.shape));
    };
    const ConstTensorRef &x = call.inputs.at("input"), &dy = call.inputs.at("out_backprop");
    const std::vector<int64_t> filter_shape = {3, 3, c, 40};
    const Tensor want = Tensor::FromVector(
        DataType::kFloat, filter_shape,
        reference::conv2d_backprop_filter(values(x), x.shape, filter_shape, values(dy), dy.shape,
                                          reference::Geometry2D{.pad_top = 1, .pad_left = 1}));
    REQUIRE(got[0].shape() == want.shape());
    CHECK(relative_difference(got[0], want) <= 1e-6);
    for (const auto &[o, groups, format] : {std::tuple{int64_t{64}, int64_t{1}, std::string("NHWC")},
                                            std::tuple{int64_t{24}, int64_t{1}, std::string("NHWC")},
                                            std::tuple{int64_t{40}, int64_t{1}, std::string("NCHW")},
                                            std::tuple{int64_t{40}, int64_t{2}, std::string("NHWC")}}) {
        INFO("O=" << o << " G=" << groups << " " << format);
        CallInfo whole;
        REQUIRE(DescribeCall(call_of(o, groups, format), &whole).ok());
        RunOptions own_layout;
        own_layout.variant = "Conv2DBackpropFilter_cpu_float32_" + format + "_generic";
        Selection selected;
        REQUIRE(select_kernel(whole, own_layout, &selected).ok());
        CHECK(selected.output_channel_tile == 32);
        CHECK(split_output_channels(whole, Device::cpu, selected.output_channel_tile) == 0);
    }
}
