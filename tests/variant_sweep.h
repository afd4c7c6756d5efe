// The sweep every convolution op's variant test shares: each runnable CPU
// variant of the op, each case that fits it, run through the op's public API
// and compared with the plain-loop reference under one tolerance(). An op's
// test file keeps its case tables, its run_case() and what its structure
// parameters are for a case (fits_structure).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_util.h"

namespace gradtune::testing {

// One case's outcome: TF's geometry may reject it (valid false: nothing ran);
// else the status and the normwise error against the reference.
struct Outcome {
    bool valid = false;
    Status status;
    double error = 0;
    std::vector<int64_t> output_shape;  // the forward ops': the output's NHWC shape
};

// Whether variant `v` serves a call whose structure parameters are `call`
// (name -> value): each parameter the variant fixes (non-zero) must match.
inline bool fits_structure(const VariantInfo &v, const std::map<std::string, int64_t> &call) {
    for (const auto &[name, value] : v.structure)
        if (value != 0 && call.at(name) != value) return false;
    return true;
}

// Whether a variant's knobs hold `knob_value` ("algorithm=1").
inline bool has_knob(const VariantInfo &v, const std::string &knob_value) {
    return (" " + v.knobs + " ").find(" " + knob_value + " ") != std::string::npos;
}

// A named kind of variant whose cases a test counts ("Winograd": has_knob(v, "algorithm=2")).
using VariantKind = std::pair<std::string, std::function<bool(const VariantInfo &)>>;

struct SweepCounts {
    int checked = 0;                         // cases run and checked
    int variants = 0;                        // variants visited
    std::map<std::string, int> cases_of;     // cases checked by variants of each kind
    std::map<std::string, int> variants_of;  // variants of each kind

    // At least `generic` variants (the op's generic ones) visited and more
    // than `cases` cases checked.
    void check_at_least(int generic, int cases) const {
        INFO("cases checked: " << checked);
        CHECK(variants >= generic);
        CHECK(checked > cases);
    }
};

// Every runnable CPU variant of `op`: a generic variant runs generic_cases(),
// the others specialised_cases(v); each case that fits_case(v, k) is run by
// run_case(k, dtype, layout, variant, seed) (a fresh seed each) and must
// succeed within the dtype's tolerance.
template <typename Case>
SweepCounts check_every_variant(const std::string &op, const std::function<std::vector<Case>()> &generic_cases,
                                const std::function<std::vector<Case>(const VariantInfo &)> &specialised_cases,
                                const std::function<bool(const VariantInfo &, const Case &)> &fits_case,
                                const std::function<Outcome(const Case &, DataType, const std::string &,
                                                            const std::string &, uint32_t)> &run_case,
                                const std::vector<VariantKind> &kinds = {}) {
    SweepCounts counts;
    const std::vector<VariantInfo> variants = runnable_cpu_variants(op);
    REQUIRE(!variants.empty());
    for (const VariantInfo &v : variants) {
        counts.variants++;
        std::vector<std::string> kinds_of_v;
        for (const auto &[name, is_kind] : kinds) {
            if (!is_kind(v)) continue;
            kinds_of_v.push_back(name);
            counts.variants_of[name]++;
        }
        const DataType dtype = dtype_of(v.dtype);
        uint32_t seed = 1;
        for (const Case &k : v.generic ? generic_cases() : specialised_cases(v)) {
            if (!fits_case(v, k)) continue;
            const Outcome o = run_case(k, dtype, v.data_format, v.name, seed += 2);
            if (!o.valid) continue;
            INFO(v.name << " " << k.describe() << " " << o.status.ToString());
            REQUIRE(o.status.ok());
            CHECK(o.error <= tolerance(dtype));  // int32: exactly 0
            counts.checked++;
            for (const std::string &name : kinds_of_v) counts.cases_of[name]++;
        }
    }
    return counts;
}

// TF's test configs through dispatch (no forced variant), float32 and
// float64, NHWC and NCHW: each must be valid, succeed and be within the
// dtype's tolerance. run_case as for check_every_variant.
template <typename Case, typename RunCase>
void check_dispatch_cases(const std::vector<Case> &cases, const RunCase &run_case) {
    for (DataType dtype : {DataType::kFloat, DataType::kDouble})
        for (const char *layout : {"NHWC", "NCHW"})
            for (const Case &k : cases) {
                const Outcome o = run_case(k, dtype, layout, "", 7);
                INFO(k.describe() << " " << layout << " " << DataTypeName(dtype));
                REQUIRE(o.valid);
                REQUIRE(o.status.ok());
                CHECK(o.error <= tolerance(dtype));
            }
}

// Eight threads run case `k` at once through dispatch (float32 and float64,
// NHWC and NCHW, a seed each): every call must succeed within its dtype's
// tolerance. run_case as for check_every_variant.
template <typename Case, typename RunCase>
void check_concurrent_calls(const Case &k, const RunCase &run_case) {
    auto dtype_of_thread = [](int t) { return t % 2 ? DataType::kFloat : DataType::kDouble; };
    std::vector<std::thread> threads;
    std::vector<double> errors(8, -1);
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([&, t] {
            const Outcome o = run_case(k, dtype_of_thread(t), t % 4 < 2 ? "NHWC" : "NCHW", "", 100 + t);
            errors[t] = o.status.ok() ? o.error : 1.0;
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < 8; t++) CHECK(errors[t] <= tolerance(dtype_of_thread(t)));
}

}  // namespace gradtune::testing
