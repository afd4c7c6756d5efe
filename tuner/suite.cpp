#include "suite.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "gradtune/op_call.h"
#include "gradtune/tensor.h"
#include "json_integer.h"
#include "knob_space.h"

namespace gradtune::tooling {

using nlohmann::json;

std::vector<int64_t> pooling_sequence(int64_t n_in, int64_t n_out) {
    std::vector<int64_t> cum(static_cast<size_t>(n_out) + 1);
    for (int64_t i = 0; i <= n_out; i++) cum[static_cast<size_t>(i)] = i * n_in / n_out;
    return cum;
}

namespace {

// "3x1" -> {3, 1}; "3" -> {3, 3}.
std::pair<int64_t, int64_t> pair_of(const std::string &text) {
    auto number = [&](const std::string &part) {
        size_t used = 0;
        const long long v = std::stoll(part, &used);
        if (used != part.size()) throw std::invalid_argument(part);
        return static_cast<int64_t>(v);
    };
    const size_t x = text.find('x');
    if (x == std::string::npos) return {number(text), number(text)};
    return {number(text.substr(0, x)), number(text.substr(x + 1))};
}

// One line of the text form (see suite.h) as a call signature, and its
// batch sizes (N=1,32: two calls).
json signature_from_text(const std::string &line, std::vector<int64_t> *batches) {
    std::istringstream words(line);
    std::string op, word;
    words >> op;
    const OpTraits traits = op_traits(op);
    const bool depthwise = traits.depthwise, pooling = traits.pooling;
    std::string dtype = "float32", format = "NHWC", padding = pooling ? "VALID" : "SAME";
    std::map<std::string, std::pair<int64_t, int64_t>> v;  // name -> value (pairs for f, s, d)
    bool overlapping = false;
    while (words >> word) {
        if (word == "NHWC" || word == "NCHW") {
            format = word;
        } else if (word == "SAME" || word == "VALID") {
            padding = word;
        } else if (word == "overlapping") {
            overlapping = true;
        } else if (word.rfind("T=", 0) == 0) {
            dtype = word.substr(2);
        } else if (word.rfind("id=", 0) == 0) {
            continue;  // read by parse_text_suite
        } else if (word.rfind("N=", 0) == 0) {
            batches->clear();
            std::istringstream list(word.substr(2));
            for (std::string n; std::getline(list, n, ',');) {
                size_t used = 0;
                try {
                    batches->push_back(std::stoll(n, &used));
                } catch (const std::logic_error &) {
                    used = 0;
                }
                if (used == 0 || used != n.size()) throw std::runtime_error("not a number in '" + word + "'");
            }
            if (batches->empty()) throw std::runtime_error("no batch size in '" + word + "'");
        } else {
            const size_t eq = word.find('=');
            static const std::set<std::string> known = {"H", "W", "C", "K", "M", "G", "f", "s", "d", "OH", "OW"};
            if (eq == std::string::npos || !known.count(word.substr(0, eq)))
                throw std::runtime_error("unknown field '" + word + "'");
            try {
                v[word.substr(0, eq)] = pair_of(word.substr(eq + 1));
            } catch (const std::logic_error &) {
                throw std::runtime_error("not a number in '" + word + "'");
            }
        }
    }
    auto one = [&](const char *name, int64_t otherwise) {
        auto it = v.find(name);
        if (it == v.end()) {
            if (otherwise < 0) throw std::runtime_error(std::string("needs ") + name + "=");
            return otherwise;
        }
        if (it->second.first != it->second.second) throw std::runtime_error(std::string(name) + "= takes one value");
        return it->second.first;
    };
    if (batches->empty()) throw std::runtime_error("needs N=");
    json shape = {{"N", batches->front()}, {"H", one("H", -1)}, {"W", one("W", -1)}, {"C", one("C", -1)}};
    json structure;
    if (pooling) {
        shape["OH"] = one("OH", -1);
        shape["OW"] = one("OW", -1);
        structure = {{"overlapping", overlapping ? 2 : 1}};
    } else {
        if (!v.count("f")) throw std::runtime_error("needs f= (filter size, e.g. f=3x3)");
        const auto f = v.at("f");
        const auto st = v.count("s") ? v.at("s") : std::pair<int64_t, int64_t>{1, 1};
        const auto d = v.count("d") ? v.at("d") : std::pair<int64_t, int64_t>{1, 1};
        structure = {{"filter_height", f.first}, {"filter_width", f.second}, {"dilation_height", d.first},
                     {"dilation_width", d.second}};
        if (depthwise) {
            if (st.first != st.second) throw std::runtime_error("depthwise ops take one stride (s=2, not s=2x1)");
            structure["stride"] = st.first;
            structure["depth_multiplier"] = one("M", 1);
        } else {
            structure["stride_height"] = st.first;
            structure["stride_width"] = st.second;
            structure["groups"] = one("G", 1);
            shape["O"] = one("K", shape["C"].get<int64_t>());
        }
    }
    return {{"op", op}, {"T", dtype}, {"data_format", format}, {"structure", structure}, {"padding", padding},
            {"shape", shape}};
}

// The text form: one call per line, '#' starts a comment. `batches`, when
// given, replaces every line's N. `only_built_ops` skips the lines of ops
// this build leaves out (GRADTUNE_OP_FILTER): for the embedded default suite,
// whose every op is known; a file's unknown op is an error.
std::vector<SuiteEntry> parse_text_suite(const std::string &path, std::istream &in,
                                         const std::vector<int64_t> *batches = nullptr, bool only_built_ops = false) {
    std::vector<SuiteEntry> suite;
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        line = line.substr(0, line.find('#'));
        const size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
        if (first == std::string::npos) continue;
        line = line.substr(first, last - first + 1);
        if (only_built_ops && !find_op(line.substr(0, line.find_first_of(" \t")))) continue;
        const size_t id = line.find(" id=");
        const std::string name = id == std::string::npos ? "L" + std::to_string(number)
                                                         : line.substr(id + 4, line.find(' ', id + 4) - (id + 4));
        try {
            std::vector<int64_t> sizes;
            json signature = signature_from_text(line, &sizes);
            for (const int64_t n : batches ? *batches : sizes) {
                signature["shape"]["N"] = n;
                SuiteEntry e = entry_from_signature(signature);
                e.id = name;
                suite.push_back(e);
            }
        } catch (const std::exception &error) {
            throw std::runtime_error(path + ":" + std::to_string(number) + ": " + error.what() + " (in '" + line + "')");
        }
    }
    if (suite.empty()) throw std::runtime_error(path + ": no calls (a suite is a JSON list or one call per line)");
    return suite;
}

// The default suite: bench/suites/default.txt, embedded by the build.
const char kDefaultSuite[] =
#include "default_suite.inc"
    ;

}  // namespace

std::vector<SuiteEntry> load_suite(const std::string &path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error(path + ": cannot be read");
    std::stringstream in;
    in << file.rdbuf();
    // JSON starts with '['; anything else is the text form.
    const std::string text = in.str();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '[') return parse_text_suite(path, in);
    json j = json::parse(text);
    std::vector<SuiteEntry> suite;
    for (const json &row : j) {
        SuiteEntry e;
        e.id = row.at("id").get<std::string>();
        e.call = row.at("call");
        e.op = e.call.at("op").get<std::string>();
        e.batch = json_integer_or(row, "batch", int64_t{1});
        if (e.batch < 1) throw std::runtime_error(path + ": row '" + e.id + "' has batch " + std::to_string(e.batch));
        e.description = row.value("description", "");
        // Optional, for the benchmark's throughput column.
        e.flops = row.value("flops", 0.0);
        e.bytes = row.value("bytes", 0.0);
        e.memory_bound = row.value("memory_bound", false);
        suite.push_back(e);
    }
    if (suite.empty()) throw std::runtime_error(path + ": no calls (a suite is a JSON list or one call per line)");
    return suite;
}

std::vector<SuiteEntry> default_suite(const std::vector<std::string> &ops, const std::vector<int64_t> &batches) {
    std::istringstream in(kDefaultSuite);
    std::vector<SuiteEntry> all = parse_text_suite("bench/suites/default.txt", in, &batches, true), suite;
    // Op by op (in the file's order), then batch by batch, then row by row.
    std::vector<std::string> order;
    for (const SuiteEntry &e : all)
        if (std::find(order.begin(), order.end(), e.op) == order.end()) order.push_back(e.op);
    for (const std::string &op : order) {
        if (!ops.empty() && std::find(ops.begin(), ops.end(), op) == ops.end()) continue;
        for (int64_t n : batches)
            for (const SuiteEntry &e : all)
                if (e.op == op && e.batch == n) suite.push_back(e);
    }
    return suite;
}

// --- Calls from signatures (journal suites, text suite files) ---------------

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

}  // namespace gradtune::tooling
