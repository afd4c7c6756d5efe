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

bool OpTraits::takes(const std::string &input) const {
    return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
}

OpTraits op_traits(const std::string &op) {
    const OpSchema *schema = find_op(op);
    const OpSpec *spec = FindOpSpec(op);
    if (!schema || !spec) {
        std::string built;
        for (const OpSchema &o : all_ops()) built += (built.empty() ? "" : ", ") + o.name;
        throw std::runtime_error("unknown op '" + op + "' (this build's ops: " + built + ")");
    }
    return {.pooling = schema->declares("overlapping"),
            .depthwise = schema->declares("depth_multiplier"),
            .inputs = spec->inputs};
}

namespace {

// One journalled signature, summed over processes.
struct Signature {
    json line;  // its last line (the signature fields)
    long long calls = 0;
    double total_ms = 0;
};

// A size of the signature: 1 .. 2^24 (a journal written by the runtime has
// nothing larger along one dimension that a tuner could time; 0 would be no
// call at all).
int64_t get(const json &map, const char *name) {
    if (!map.is_object() || !map.contains(name) || !map.at(name).is_number_integer())
        throw std::runtime_error(std::string("no integer '") + name + "'");
    const int64_t value = map.at(name).get<int64_t>();
    if (value < 1 || value > (int64_t{1} << 24))
        throw std::runtime_error(std::string("'") + name + "' = " + std::to_string(value) + " is out of range");
    return value;
}

int64_t get_or(const json &map, const char *name, int64_t otherwise) {
    return map.is_object() && map.contains(name) ? get(map, name) : otherwise;
}

// Output extent of a convolution along one dimension (TF's SAME, VALID, and
// EXPLICIT with `before` and `after` pads; 0 for the others).
int64_t conv_output(int64_t input, int64_t filter, int64_t stride, int64_t dilation, const std::string &padding,
                    int64_t before, int64_t after) {
    const int64_t effective = (filter - 1) * dilation + 1;
    if (padding == "SAME") return (input + stride - 1) / stride;
    return std::max<int64_t>(0, (input + before + after - effective + stride) / stride);
}

// [N, H, W, C] in the call's data format.
std::vector<int64_t> activation(const std::string &format, int64_t n, int64_t h, int64_t w, int64_t c) {
    return format == "NCHW" ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
}

std::vector<int64_t> spatial_attr(const std::string &format, int64_t rows, int64_t cols) {
    return format == "NCHW" ? std::vector<int64_t>{1, 1, rows, cols} : std::vector<int64_t>{1, rows, cols, 1};
}

double product(const std::vector<int64_t> &shape) {
    double n = 1;
    for (int64_t d : shape) n *= static_cast<double>(d);
    return n;
}

// A journalled signature read back as a call: its op, dtype, layout, padding, structure,
// shape and the element size; helpers for the call's inputs.
struct Call {
    std::string op, dtype, format, padding;
    OpTraits traits;
    json structure, shape;
    int64_t n = 0, h = 0, w = 0, c = 0;
    double element = 0;

    json tensor(const std::vector<int64_t> &dims) const { return {{"dtype", dtype}, {"shape", dims}}; }
    static json values(const char *type, const std::vector<int64_t> &v) { return {{"dtype", type}, {"values", v}}; }
};

// FractionalAvgPool and its gradient: the call, its work and a description.
void pooling_entry(const Call &g, SuiteEntry *e, json *inputs, json *attrs) {
    const int64_t oh = get(g.shape, "OH"), ow = get(g.shape, "OW");
    if (oh > g.h || ow > g.w) throw std::runtime_error("a pooled size larger than the input");
    if (g.h > (1 << 20) || g.w > (1 << 20)) throw std::runtime_error("more than 2^20 rows or columns to pool");
    const bool overlapping = get(g.structure, "overlapping") == 2;
    if (g.traits.takes("out_backprop")) {  // the gradient
        *inputs = {{"orig_input_tensor_shape", Call::values("int64", {g.n, g.h, g.w, g.c})},
                   {"out_backprop", g.tensor({g.n, oh, ow, g.c})},
                   {"row_pooling_sequence", Call::values("int64", pooling_sequence(g.h, oh))},
                   {"col_pooling_sequence", Call::values("int64", pooling_sequence(g.w, ow))}};
        *attrs = {{"overlapping", overlapping}};
    } else {
        // The ratio whose float32 quotient TF floors to the pooled size:
        // input / (pooled + 1/2), and 1 where nothing is pooled. The
        // sequences are pseudo-random, seeded: the same on every run.
        auto ratio = [](int64_t in, int64_t out) {
            return out == in ? 1.0 : static_cast<double>(in) / (static_cast<double>(out) + 0.5);
        };
        *inputs = {{"value", g.tensor({g.n, g.h, g.w, g.c})}};
        *attrs = {{"pooling_ratio", {1.0, ratio(g.h, oh), ratio(g.w, ow), 1.0}},
                  {"pseudo_random", true},
                  {"overlapping", overlapping},
                  {"deterministic", true},
                  {"seed", 7},
                  {"seed2", 11}};
    }
    e->memory_bound = true;
    e->flops = product({g.n, g.h, g.w, g.c}) + product({g.n, oh, ow, g.c});
    e->bytes = g.element * e->flops;
    e->description = std::to_string(g.h) + "x" + std::to_string(g.w) + "x" + std::to_string(g.c) + " -> " +
                     std::to_string(oh) + "x" + std::to_string(ow) + (overlapping ? " overlapping" : "");
}

// EXPLICIT: the pads {top, bottom, left, right} (a journal of gradtune
// before 2026-12 did not keep them); else zeros.
std::vector<int64_t> explicit_pads(const json &line, const std::string &padding) {
    std::vector<int64_t> pads(4, 0);
    if (padding == "EXPLICIT") {
        const json &p = line.contains("explicit_paddings") ? line.at("explicit_paddings") : json();
        if (!p.is_array() || p.size() != 4)
            throw std::runtime_error("EXPLICIT padding without its four pads (\"explicit_paddings\")");
        for (size_t i = 0; i < 4; i++) {
            if (!p[i].is_number_integer() || p[i].get<int64_t>() < 0 || p[i].get<int64_t>() > (int64_t{1} << 24))
                throw std::runtime_error("a pad out of range in \"explicit_paddings\"");
            pads[i] = p[i].get<int64_t>();
        }
    } else if (padding != "SAME" && padding != "VALID") {
        throw std::runtime_error("unknown padding " + padding);
    }
    return pads;
}

// The dense and depthwise convolutions and their gradients: the call, its
// work and a description.
void convolution_entry(const Call &g, const std::vector<int64_t> &pads, SuiteEntry *e, json *inputs,
                       json *attrs) {
    const json &s = g.structure;
    const bool depthwise = g.traits.depthwise;
    const int64_t fh = get(s, "filter_height"), fw = get(s, "filter_width");
    const int64_t sh = depthwise ? get(s, "stride") : get(s, "stride_height");
    const int64_t sw = depthwise ? sh : get(s, "stride_width");
    const int64_t dh = get(s, "dilation_height"), dw = get(s, "dilation_width");
    const int64_t groups = depthwise ? 1 : get_or(s, "groups", get_or(g.shape, "G", 1));
    const int64_t multiplier = depthwise ? get(s, "depth_multiplier") : 1;
    const int64_t out_channels = depthwise ? g.c * multiplier : get(g.shape, "O");
    if (g.c % groups != 0) throw std::runtime_error("groups do not divide the channels");
    const std::vector<int64_t> filter = {fh, fw, depthwise ? g.c : g.c / groups, depthwise ? multiplier : out_channels};
    const int64_t oh = conv_output(g.h, fh, sh, dh, g.padding, pads[0], pads[1]);
    const int64_t ow = conv_output(g.w, fw, sw, dw, g.padding, pads[2], pads[3]);
    const std::vector<int64_t> x = activation(g.format, g.n, g.h, g.w, g.c);
    const std::vector<int64_t> y = activation(g.format, g.n, oh, ow, out_channels);
    // Each input the op takes, by its TF name: a tensor, or a gradient's
    // shape input (input_sizes, filter_sizes).
    const std::map<std::string, json> by_name = {{"input", g.tensor(x)},
                                                 {"filter", g.tensor(filter)},
                                                 {"out_backprop", g.tensor(y)},
                                                 {"input_sizes", Call::values("int32", x)},
                                                 {"filter_sizes", Call::values("int32", filter)}};
    *inputs = json::object();
    for (const std::string &name : g.traits.inputs) {
        auto it = by_name.find(name);
        if (it == by_name.end())
            throw std::runtime_error("the journal cannot rebuild calls of " + g.op + " (input '" + name + "')");
        (*inputs)[name] = it->second;
    }
    *attrs = {{"strides", spatial_attr(g.format, sh, sw)},
              {"dilations", spatial_attr(g.format, dh, dw)},
              {"padding", g.padding},
              {"data_format", g.format}};
    if (g.padding == "EXPLICIT") {
        // TF's layout: a (before, after) pair per dimension of the data format.
        (*attrs)["explicit_paddings"] =
            g.format == "NCHW" ? std::vector<int64_t>{0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3]}
                               : std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0};
    }
    e->flops = 2.0 * static_cast<double>(fh * fw) * (depthwise ? 1.0 : static_cast<double>(g.c / groups)) * product(y);
    e->bytes = g.element * (product(x) + product(y) + product(filter));
    e->memory_bound = depthwise;
    const std::string sizes = std::to_string(g.h) + "x" + std::to_string(g.w) + "x" + std::to_string(g.c);
    std::string window =
        " k" + std::to_string(fh) + "x" + std::to_string(fw) + " s" + std::to_string(sh) + " " + g.padding;
    if (g.padding == "EXPLICIT")
        window += " " + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," + std::to_string(pads[2]) + "," +
                  std::to_string(pads[3]);
    e->description = depthwise || !g.traits.takes("out_backprop")
                         ? sizes + window
                         : "dx " + sizes + " <- dy " + std::to_string(oh) + "x" + std::to_string(ow) + "x" +
                               std::to_string(out_channels) + window;
}

}  // namespace

SuiteEntry entry_from_signature(const json &line) {
    Call g;
    g.op = line.at("op").get<std::string>();
    g.dtype = line.at("T").get<std::string>();
    g.format = line.at("data_format").get<std::string>();
    g.padding = line.at("padding").get<std::string>();
    g.structure = line.at("structure");
    g.shape = line.at("shape");
    auto dtype_value = DataTypeFromString(g.dtype);
    if (!dtype_value) throw std::runtime_error("unknown dtype " + g.dtype);
    g.element = DataTypeSize(*dtype_value);
    g.n = get(g.shape, "N");
    g.h = get(g.shape, "H");
    g.w = get(g.shape, "W");
    g.c = get(g.shape, "C");

    g.traits = op_traits(g.op);

    SuiteEntry e;
    e.op = g.op;
    e.batch = g.n;
    json inputs, attrs;
    if (g.traits.pooling) {
        pooling_entry(g, &e, &inputs, &attrs);
    } else {
        convolution_entry(g, explicit_pads(line, g.padding), &e, &inputs, &attrs);
    }
    if (g.format != "NHWC") e.description += " " + g.format;
    if (g.dtype != "float32") e.description += " " + g.dtype;
    e.call = {{"op", g.op}, {"inputs", inputs}, {"attrs", attrs}};
    return e;
}

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
