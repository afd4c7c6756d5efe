#include "journal_suite.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>

#include "gradtune/op_call.h"
#include "gradtune/tensor.h"
#include "knob_space.h"
#include "records.h"  // write_file_atomically

namespace gradtune::tooling {

using nlohmann::json;

namespace {

// One journalled signature, summed over processes.
struct Signature {
    json line;  // its last line (the signature fields)
    long long calls = 0;
    double total_ms = 0;
};

}  // namespace

JournalSuite journal_suite(const std::string &path, const std::string &device, int top) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    JournalSuite result;
    // (process, signature) -> that process's last counts; signature -> sums.
    std::map<std::string, std::map<std::string, std::pair<long long, double>>> per_process;
    std::map<std::string, json> signatures;
    std::string text;
    int number = 0;
    while (std::getline(in, text)) {
        number++;
        if (text.empty()) continue;
        json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
        auto has = [&](const char *name, json::value_t type) {
            return line.contains(name) && (line.at(name).type() == type ||
                                           (type == json::value_t::number_float && line.at(name).is_number()) ||
                                           (type == json::value_t::number_integer && line.at(name).is_number_integer()));
        };
        if (!line.is_object() || !has("journal", json::value_t::number_integer) || line.at("journal") != 1 ||
            !has("process", json::value_t::string) || !has("device", json::value_t::string) ||
            !has("calls", json::value_t::number_integer) || !has("total_ms", json::value_t::number_float)) {
            result.notes.push_back(path + ":" + std::to_string(number) + ": not a journal line (cut short?), skipped");
            continue;
        }
        const json &calls = line.at("calls"), &total = line.at("total_ms");
        if (!(calls.is_number_unsigned() || calls.get<int64_t>() >= 0) || calls.get<double>() > 1e15 ||
            !(total.get<double>() >= 0 && total.get<double>() < 1e15)) {
            result.notes.push_back(path + ":" + std::to_string(number) + ": counts out of range, skipped");
            continue;
        }
        if (line.at("device") != device) continue;
        json key = line;
        for (const char *counter : {"journal", "process", "calls", "total_ms", "tier", "variant"}) key.erase(counter);
        const std::string signature = key.dump();
        per_process[signature][line.at("process").dump()] = {line.at("calls").get<long long>(),
                                                             line.at("total_ms").get<double>()};
        signatures[signature] = line;
    }
    std::vector<Signature> all;
    for (const auto &[signature, processes] : per_process) {
        Signature s;
        s.line = signatures.at(signature);
        for (const auto &[process, counts] : processes) {
            // Each line holds at most 1e15 calls, but there may be any number
            // of processes: the sum saturates rather than overflow.
            s.calls = counts.first > std::numeric_limits<long long>::max() - s.calls
                          ? std::numeric_limits<long long>::max()
                          : s.calls + counts.first;
            s.total_ms += counts.second;
        }
        all.push_back(s);
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const Signature &a, const Signature &b) { return a.total_ms > b.total_ms; });
    for (const Signature &s : all) {
        if (top > 0 && static_cast<int>(result.entries.size()) >= top) break;
        try {
            SuiteEntry e = entry_from_signature(s.line);
            e.id = "J" + std::to_string(result.entries.size() + 1);
            char counts[160];
            std::snprintf(counts, sizeof counts, " (journal: %lld calls, %.1f ms, served by %s)", s.calls, s.total_ms,
                          s.line.value("tier", "?").c_str());
            e.description += counts;
            result.entries.push_back(e);
        } catch (const std::exception &error) {
            result.notes.push_back(s.line.value("op", "?") + " " + s.line.value("shape", json::object()).dump() +
                                   ": left out: " + error.what());
        }
    }
    return result;
}

void write_suite(const std::vector<SuiteEntry> &suite, const std::string &path) {
    json rows = json::array();
    for (const SuiteEntry &e : suite) {
        rows.push_back({{"id", e.id},
                        {"batch", e.batch},
                        {"description", e.description},
                        {"call", e.call},
                        {"flops", e.flops},
                        {"bytes", e.bytes},
                        {"memory_bound", e.memory_bound}});
    }
    write_file_atomically(path, rows.dump(1) + "\n");
}

}  // namespace gradtune::tooling
