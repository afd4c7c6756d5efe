// libFuzzer target: the JSON readers of the tuner and the build (records
// files, trials-log lines, suite files, call specs, shape journals) on
// arbitrary text. The
// readers refuse bad input with an exception derived from std::exception
// (records, trials, suites: the tools print it and exit 2) or a Status (call
// specs). A finding: a crash, a sanitizer report, any other exception, or an
// exception from materialise (which returns a Status).
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "call_json.h"
#include "input_file.h"
#include "journal_suite.h"
#include "records.h"
#include "suite.h"
#include "trials.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    // The first byte picks the reader.
    const int reader = data[0] % 5;
    const std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
    static InputFile file("input.json");
    const std::string path = reader < 2 || reader == 4 ? file.write(text.data(), text.size()) : "";
    try {
        switch (reader) {
        case 0: (void)gradtune::read_record_file(path); break;
        case 1: (void)gradtune::tooling::load_suite(path); break;
        case 2: (void)gradtune::tooling::trial_from_json(nlohmann::json::parse(text)); break;
        case 4: {
            // A journal's signatures, rebuilt as calls that must materialise.
            for (const gradtune::tooling::SuiteEntry &e : gradtune::tooling::journal_suite(path, "cpu", 0).entries) {
                double elements = 1;
                for (const auto &[name, tensor] : e.call.at("inputs").items())
                    if (tensor.contains("shape"))
                        for (const auto &d : tensor.at("shape")) elements *= std::max(0.0, d.get<double>());
                if (elements > double(1 << 20)) continue;
                gradtune::tooling::MaterialisedCall call;
                (void)gradtune::tooling::materialise(e.call, 1, &call);
            }
            break;
        }
        case 3: {
            nlohmann::json spec;
            try {
                spec = nlohmann::json::parse(text);
            } catch (const std::exception &) {
                return 0;  // not JSON: nothing to materialise
            }
            // materialise fills every element of every input: skip calls of
            // more than 2^20 elements (slow by nature, not a finding).
            if (spec.is_object() && spec.contains("inputs") && spec["inputs"].is_object()) {
                for (const auto &[name, tensor] : spec["inputs"].items()) {
                    if (!tensor.is_object() || !tensor.contains("shape") || !tensor["shape"].is_array()) continue;
                    double elements = 1;
                    for (const auto &d : tensor["shape"])
                        if (d.is_number()) elements *= std::max(0.0, d.get<double>());
                    if (elements > double(1 << 20)) return 0;
                }
            }
            gradtune::tooling::MaterialisedCall call;
            try {
                (void)gradtune::tooling::materialise(spec, 1, &call);
            } catch (...) {
                __builtin_trap();  // materialise reports through its Status
            }
            break;
        }
        }
    } catch (const std::exception &) {
        // A refusal.
    }
    return 0;
}
