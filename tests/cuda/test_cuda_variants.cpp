// Runs every CUDA variant against the CPU reference path: needs a GPU.
// Exits 77 (reported by ctest as skipped) when none is present.
#include <cmath>
#include <cstdio>
#include <random>

#include "gradtune/gradtune.h"

using namespace gradtune;

namespace {

double normwise(const Tensor &got, const Tensor &want) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < want.num_elements(); i++) {
        diff = std::max(diff, std::fabs(got.load(i) - want.load(i)));
        scale = std::max(scale, std::fabs(want.load(i)));
    }
    return scale > 0 ? diff / scale : diff;
}

double tolerance(const std::string &dtype) {
    if (dtype == "float64") return 1e-12;
    if (dtype == "float32") return 1e-5;
    if (dtype == "float16") return 1e-3;
    return 1e-2;
}

}  // namespace

int main() {
    // The by-name layer makes this loop op-independent: each CUDA variant
    // runs its op on a small call and is compared with the CPU result.
    struct Probe {
        const char *op;
        std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // name, shape (int32 inputs: values)
        std::map<std::string, AttrValue> attrs;
    };
    const std::vector<Probe> probes = {
        {"DepthwiseConv2dNativeBackpropInput",
         {{"input_sizes", {2, 9, 11, 6}}, {"filter", {3, 3, 6, 2}}, {"out_backprop", {2, 5, 6, 12}}},
         {{"strides", std::vector<int64_t>{1, 2, 2, 1}}, {"padding", std::string("SAME")}}},
    };
    int ran = 0, failed = 0, gpu_missing = 0;
    for (const VariantInfo &v : Variants()) {
        if (v.device != Device::cuda) continue;
        for (const Probe &p : probes) {
            if (p.op != v.op) continue;
            const DataType dtype = *DataTypeFromString(v.dtype);
            std::vector<Tensor> storage;
            storage.reserve(p.inputs.size());
            OpCall call{p.op, {}, p.attrs};
            call.attrs["data_format"] = std::string("NHWC");
            if (v.data_format != "NHWC") continue;  // NCHW: same kernels, other strides
            std::mt19937 rng(5);
            std::uniform_real_distribution<double> dist(-1, 1);
            for (const auto &[name, shape] : p.inputs) {
                if (name == "input_sizes" || name == "filter_sizes") {
                    storage.push_back(Tensor::FromVector(DataType::kInt32, {4}, shape));
                } else {
                    storage.emplace_back(dtype, shape);
                    for (int64_t i = 0; i < storage.back().num_elements(); i++) storage.back().store(i, dist(rng));
                }
                call.inputs[name] = storage.back().cref();
            }
            std::vector<Tensor> want, got;
            RunOptions cpu, cuda;
            cuda.device = Device::cuda;
            cuda.variant = v.name;
            Status st = RunOp(call, &want, cpu);
            Status gst = RunOp(call, &got, cuda);
            if (gst.code() == StatusCode::kUnavailable) {
                gpu_missing++;
                continue;
            }
            ran++;
            if (!st.ok() || !gst.ok() || normwise(got[0], want[0]) > tolerance(v.dtype)) {
                failed++;
                std::printf("FAIL %s: %s / %s\n", v.name.c_str(), st.ToString().c_str(), gst.ToString().c_str());
            }
        }
    }
    if (ran == 0 && gpu_missing > 0) {
        std::printf("no CUDA GPU on this machine: %d CUDA variant checks skipped\n", gpu_missing);
        return 77;
    }
    std::printf("%d CUDA variant checks, %d failed\n", ran, failed);
    return failed == 0 && ran > 0 ? 0 : 1;
}
