// Runs every CUDA variant of this build on the TensorFlow fixture cases
// (tests/golden/*.json) that fit it, and compares with the CPU result: needs
// a GPU. Exits 77 (ctest: skipped) when no CUDA device is present.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "call_json.h"
#include "gradtune/gradtune.h"
#include "measure.h"  // tooling::tolerance

using namespace gradtune;
using nlohmann::json;

namespace {

double normwise(const Tensor &got, const Tensor &want) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < want.num_elements(); i++) {
        diff = std::max(diff, std::fabs(got.load(i) - want.load(i)));
        scale = std::max(scale, std::fabs(want.load(i)));
    }
    return scale > 0 ? diff / scale : diff;
}

}  // namespace

int main() {
    int ran = 0, failed = 0, variants = 0;
    for (const VariantInfo &v : Variants()) variants += v.device == Device::cuda;
    std::vector<json> files;
    for (const auto &entry : std::filesystem::directory_iterator(GRADTUNE_GOLDEN_DIR)) {
        std::ifstream in(entry.path());
        files.push_back(json::parse(in));
    }
    for (const VariantInfo &v : Variants()) {
        if (v.device != Device::cuda) continue;
        int fitted = 0;
        for (const json &file : files) {
            if (file.at("op") != v.op) continue;
            for (const json &c : file.at("cases")) {
                if (!c.at("expect").contains("outputs")) continue;  // error cases: validation is device-independent
                tooling::MaterialisedCall m;
                json spec = {{"op", v.op}, {"inputs", c.at("inputs")}, {"attrs", c.value("attrs", json::object())}};
                if (!tooling::materialise(spec, 1, &m).ok()) continue;
                RunOptions cuda;
                cuda.device = Device::cuda;
                cuda.variant = v.name;
                DispatchInfo dispatch;
                if (!ExplainDispatch(m.call, cuda, &dispatch).ok()) continue;  // the variant does not fit this case
                std::vector<Tensor> want, got;
                Status cpu_status = RunOp(m.call, &want, RunOptions());
                Status gpu_status = RunOp(m.call, &got, cuda);
                if (gpu_status.code() == StatusCode::kUnavailable) {
                    std::printf("no CUDA GPU on this machine (%s): %d CUDA variants not run\n",
                                gpu_status.message().c_str(), variants);
                    return 77;
                }
                fitted++;
                ran++;
                bool ok = cpu_status.ok() && gpu_status.ok() && want.size() == got.size();
                for (size_t o = 0; ok && o < want.size(); o++)
                    ok = want[o].shape() == got[o].shape() && normwise(got[o], want[o]) <= tooling::tolerance(want[o].dtype());
                if (!ok) {
                    failed++;
                    std::printf("FAIL %s on %s: cpu %s, cuda %s\n", v.name.c_str(), c.value("name", "?").c_str(),
                                cpu_status.ToString().c_str(), gpu_status.ToString().c_str());
                }
            }
        }
        if (fitted == 0) std::printf("note: no fixture case fits %s\n", v.name.c_str());
    }
    std::printf("%d CUDA variants, %d fixture runs on the GPU, %d failed\n", variants, ran, failed);
    return failed == 0 && ran > 0 ? 0 : 1;
}
