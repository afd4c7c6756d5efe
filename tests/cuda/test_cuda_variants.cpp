// Runs every CUDA variant of this build on the TensorFlow fixture cases
// (tests/golden/*.json) that fit it, and compares with the CPU result: needs
// a GPU. Exits 77 (ctest: skipped) when no CUDA device is present.
//
//   gradtune_cuda_tests [--layers] [NAME-PART ...]
//   gradtune_cuda_tests --list-ops    (the ops that have CUDA variants)
// --layers also runs the default suite's layers at N=1 (random values): the
// fixtures are a few pixels and channels wide, so they never reach a second
// thread block along most axes, nor a block's tail. NAME-PARTs keep only the
// variants whose name contains one of them (one op per process under
// compute-sanitizer: its first error ends the CUDA context, and with it every
// later run of the process). GRADTUNE_GOLDEN_DIR in the environment replaces
// the fixture folder compiled in (a copy of the build run from another
// checkout).
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "call_json.h"
#include "gradtune/gradtune.h"
#include "measure.h"  // tooling::tolerance
#include "suite.h"

using namespace gradtune;
using nlohmann::json;

namespace {

struct Case {
    std::string op, name;
    json spec;  // call_json.h
};

double normwise(const Tensor &got, const Tensor &want) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < want.num_elements(); i++) {
        diff = std::max(diff, std::fabs(got.load(i) - want.load(i)));
        scale = std::max(scale, std::fabs(want.load(i)));
    }
    return scale > 0 ? diff / scale : diff;
}

// A variant is run when no name part was given, or its name contains one.
bool selected(const std::string &name, const std::vector<std::string> &parts) {
    if (parts.empty()) return true;
    for (const std::string &part : parts)
        if (name.find(part) != std::string::npos) return true;
    return false;
}

// TF's fixture cases with outputs (error cases: validation is device-independent).
std::vector<Case> fixture_cases() {
    const char *golden = std::getenv("GRADTUNE_GOLDEN_DIR");
    std::vector<Case> cases;
    for (const auto &entry : std::filesystem::directory_iterator(golden ? golden : GRADTUNE_GOLDEN_DIR)) {
        std::ifstream in(entry.path());
        const json file = json::parse(in);
        for (const json &c : file.at("cases")) {
            if (!c.at("expect").contains("outputs")) continue;
            cases.push_back(
                {file.at("op"),
                 c.value("name", "?"),
                 {{"op", file.at("op")}, {"inputs", c.at("inputs")}, {"attrs", c.value("attrs", json::object())}}});
        }
    }
    return cases;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> parts;
    bool layers = false;
    for (int i = 1; i < argc; i++) {
        if (std::string(argv[i]) == "--list-ops") {
            std::set<std::string> ops;
            for (const VariantInfo &v : Variants())
                if (v.device == Device::cuda && ops.insert(v.op).second) std::printf("%s\n", v.op.c_str());
            return 0;
        }
        if (std::string(argv[i]) == "--layers")
            layers = true;
        else
            parts.push_back(argv[i]);
    }
    int ran = 0, failed = 0, variants = 0;
    for (const VariantInfo &v : Variants()) variants += v.device == Device::cuda && selected(v.name, parts);
    if (variants == 0) {
        std::printf("no CUDA variant of this build matches the names given\n");
        return 1;
    }
    std::vector<Case> cases = fixture_cases();
    if (layers)
        for (const tooling::SuiteEntry &e : tooling::default_suite({}, {1})) cases.push_back({e.op, e.name(), e.call});
    for (const VariantInfo &v : Variants()) {
        if (v.device != Device::cuda || !selected(v.name, parts)) continue;
        int fitted = 0;
        for (const Case &c : cases) {
            if (c.op != v.op) continue;
            tooling::MaterialisedCall m;
            if (Status s = tooling::materialise(c.spec, 1, &m); !s.ok()) {
                std::printf("FAIL %s: the case cannot be built: %s\n", c.name.c_str(), s.ToString().c_str());
                failed++;
                continue;
            }
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
            double error = 0;
            for (size_t o = 0; ok && o < want.size(); o++) {
                ok = want[o].shape() == got[o].shape();
                if (ok) error = std::max(error, normwise(got[o], want[o]));
                ok = ok && error <= tooling::tolerance(want[o].dtype());
            }
            if (!ok) {
                failed++;
                std::printf("FAIL %s on %s: cpu %s, cuda %s, normwise error %g\n", v.name.c_str(), c.name.c_str(),
                            cpu_status.ToString().c_str(), gpu_status.ToString().c_str(), error);
            }
        }
        if (fitted == 0) std::printf("note: no case fits %s\n", v.name.c_str());
    }
    std::printf("%d CUDA variants, %d runs on the GPU (%s), %d failed\n", variants, ran,
                layers ? "fixtures and the default suite's layers at N=1" : "fixtures", failed);
    return failed == 0 && ran > 0 ? 0 : 1;
}
