#include "suite.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "journal_suite.h"

namespace gradtune::tooling {

using nlohmann::json;

namespace {

json values(const std::string &dtype, const std::vector<int64_t> &v) { return {{"dtype", dtype}, {"values", v}}; }
json shaped(const std::vector<int64_t> &shape) { return {{"dtype", "float32"}, {"shape", shape}}; }

double elements(const std::vector<int64_t> &shape) {
    double n = 1;
    for (int64_t d : shape) n *= static_cast<double>(d);
    return n;
}

// Depthwise rows D1-D6: input H x W x C, filter k x k, stride s, SAME.
struct DepthwiseRow {
    const char *id, *description;
    int64_t size, channels, k, stride;
};
const DepthwiseRow kDepthwise[] = {
    {"D1", "112x112x32 k3 s1", 112, 32, 3, 1},   {"D2", "112x112x96 -> 56x56 k3 s2", 112, 96, 3, 2},
    {"D3", "56x56x144 k3 s1", 56, 144, 3, 1},    {"D4", "14x14x576 k3 s1", 14, 576, 3, 1},
    {"D5", "7x7x960 k3 s1", 7, 960, 3, 1},       {"D6", "14x14x672 k5 s1", 14, 672, 5, 1},
};

// Dense rows C1-C6: dx H x W x Cin <- dy OH x OW x Cout, filter k x k, stride s, SAME.
struct DenseRow {
    const char *id, *description;
    int64_t size, in_channels, out_channels, k, stride;
};
const DenseRow kDense[] = {
    {"C1", "dx 56x56x64 <- dy 56x56x64 k3 s1", 56, 64, 64, 3, 1},
    {"C2", "dx 28x28x128 <- dy 28x28x128 k3 s1", 28, 128, 128, 3, 1},
    {"C3", "dx 14x14x256 <- dy 14x14x256 k3 s1", 14, 256, 256, 3, 1},
    {"C4", "dx 7x7x512 <- dy 7x7x512 k3 s1", 7, 512, 512, 3, 1},
    {"C5", "dx 56x56x128 <- dy 28x28x128 k3 s2", 56, 128, 128, 3, 2},
    {"C6", "dx 56x56x256 <- dy 56x56x64 k1 s1", 56, 256, 64, 1, 1},
};

// Fractional pooling rows F1-F3: input H x W x C pooled to OH x OW.
struct PoolRow {
    const char *id, *description;
    int64_t rows, cols, channels, out_rows, out_cols;
    bool overlapping;
};
const PoolRow kPool[] = {
    {"F1", "112x112x64 -> 79x79 overlapping", 112, 112, 64, 79, 79, true},
    {"F2a", "56x56x128 -> 39x39 overlapping", 56, 56, 128, 39, 39, true},
    {"F2b", "56x56x128 -> 39x39 non-overlapping", 56, 56, 128, 39, 39, false},
    {"F2c", "56x56x128 -> 38x32 (ratio 1.44, 1.73) overlapping", 56, 56, 128, 38, 32, true},
    {"F3", "32x32x192 -> 22x22", 32, 32, 192, 22, 22, false},
};


// A SAME-padded call of a convolution op (forward, or either gradient: the
// op's name says which) with TF's input names, plus its FLOP and byte counts.
// `flops_per_output` counts one output element of the forward convolution.
SuiteEntry conv_entry(const std::string &op, const char *id, const char *description, int64_t n, int64_t stride,
                      const std::vector<int64_t> &in_shape, const std::vector<int64_t> &f_shape,
                      const std::vector<int64_t> &out_shape, double flops_per_output) {
    const auto ends_with = [&](const std::string &suffix) {
        return op.size() >= suffix.size() && op.compare(op.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    json inputs;
    if (ends_with("BackpropInput")) {
        inputs = {{"input_sizes", values("int32", in_shape)}, {"filter", shaped(f_shape)},
                  {"out_backprop", shaped(out_shape)}};
    } else if (ends_with("BackpropFilter")) {
        inputs = {{"input", shaped(in_shape)}, {"filter_sizes", values("int32", f_shape)},
                  {"out_backprop", shaped(out_shape)}};
    } else {  // the forward op
        inputs = {{"input", shaped(in_shape)}, {"filter", shaped(f_shape)}};
    }
    SuiteEntry e;
    e.id = id;
    e.op = op;
    e.batch = n;
    e.description = description;
    e.call = {{"op", op}, {"inputs", inputs}, {"attrs", {{"strides", {1, stride, stride, 1}}, {"padding", "SAME"}}}};
    e.flops = flops_per_output * elements(out_shape);
    e.bytes = 4 * (elements(in_shape) + elements(out_shape) + elements(f_shape));
    return e;
}

void add_depthwise(std::vector<SuiteEntry> &suite, const std::string &op, int64_t n) {
    for (const DepthwiseRow &r : kDepthwise) {
        const int64_t out = (r.size + r.stride - 1) / r.stride;  // SAME
        SuiteEntry e = conv_entry(op, r.id, r.description, n, r.stride, {n, r.size, r.size, r.channels},
                                  {r.k, r.k, r.channels, 1}, {n, out, out, r.channels}, 2.0 * r.k * r.k);
        e.memory_bound = true;
        suite.push_back(e);
    }
}

void add_dense(std::vector<SuiteEntry> &suite, const std::string &op, int64_t n) {
    for (const DenseRow &r : kDense) {
        // Conv2DBackpropFilter and the Conv2D forward use a representative subset.
        const std::string id = r.id;
        if (op != "Conv2DBackpropInput" && id != "C1" && id != "C5") continue;
        const int64_t out = (r.size + r.stride - 1) / r.stride;
        suite.push_back(conv_entry(op, r.id, r.description, n, r.stride, {n, r.size, r.size, r.in_channels},
                                   {r.k, r.k, r.in_channels, r.out_channels}, {n, out, out, r.out_channels},
                                   2.0 * r.k * r.k * r.in_channels));
    }
}

void add_pooling(std::vector<SuiteEntry> &suite, const std::string &op, int64_t n) {
    for (const PoolRow &r : kPool) {
        const std::vector<int64_t> in_shape{n, r.rows, r.cols, r.channels};
        const std::vector<int64_t> out_shape{n, r.out_rows, r.out_cols, r.channels};
        SuiteEntry e;
        e.id = r.id;
        e.op = op;
        e.batch = n;
        e.description = r.description;
        if (op == "FractionalAvgPoolGrad") {
            e.call = {{"op", op},
                      {"inputs",
                       {{"orig_input_tensor_shape", values("int64", in_shape)},
                        {"out_backprop", shaped(out_shape)},
                        {"row_pooling_sequence", values("int64", pooling_sequence(r.rows, r.out_rows))},
                        {"col_pooling_sequence", values("int64", pooling_sequence(r.cols, r.out_cols))}}},
                      {"attrs", {{"overlapping", r.overlapping}}}};
        } else {  // FractionalAvgPool: the ratio that gives these output sizes
            if (std::string(r.id) != "F1" && std::string(r.id) != "F3") continue;
            e.call = {{"op", op},
                      {"inputs", {{"value", shaped(in_shape)}}},
                      {"attrs",
                       {{"pooling_ratio", {1.0, 1.414, 1.414, 1.0}},
                        {"pseudo_random", true},
                        {"overlapping", r.overlapping},
                        {"deterministic", true},
                        {"seed", 7},
                        {"seed2", 11}}}};
        }
        e.flops = elements(in_shape) + elements(out_shape);
        e.bytes = 4 * (elements(in_shape) + elements(out_shape));
        e.memory_bound = true;
        suite.push_back(e);
    }
}

}  // namespace

std::vector<int64_t> pooling_sequence(int64_t n_in, int64_t n_out) {
    std::vector<int64_t> cum(static_cast<size_t>(n_out) + 1);
    for (int64_t i = 0; i <= n_out; i++) cum[static_cast<size_t>(i)] = i * n_in / n_out;
    return cum;
}

std::vector<SuiteEntry> default_suite(const std::vector<std::string> &ops, const std::vector<int64_t> &batches) {
    static const char *kOrder[] = {"DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
                                   "Conv2DBackpropInput",                "FractionalAvgPoolGrad",
                                   "Conv2DBackpropFilter",               "DepthwiseConv2dNative",
                                   "Conv2D",                             "FractionalAvgPool"};
    std::vector<SuiteEntry> suite;
    for (const char *op : kOrder) {
        if (!ops.empty() && std::find(ops.begin(), ops.end(), op) == ops.end()) continue;
        const std::string name = op;
        for (int64_t n : batches) {
            if (name.rfind("Depthwise", 0) == 0) add_depthwise(suite, name, n);
            else if (name.rfind("Conv2D", 0) == 0) add_dense(suite, name, n);
            else add_pooling(suite, name, n);
        }
    }
    return suite;
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

// One line of the text form (see suite.h) as a call signature.
json signature_from_text(const std::string &line) {
    std::istringstream words(line);
    std::string op, word;
    words >> op;
    const bool depthwise = op.rfind("Depthwise", 0) == 0, pooling = op == "FractionalAvgPoolGrad";
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
            continue;  // read by load_suite
        } else {
            const size_t eq = word.find('=');
            static const std::set<std::string> known = {"N", "H", "W", "C", "K", "M", "G", "f", "s", "d", "OH", "OW"};
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
    json shape = {{"N", one("N", -1)}, {"H", one("H", -1)}, {"W", one("W", -1)}, {"C", one("C", -1)}};
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

// The text form: one call per line, '#' starts a comment.
std::vector<SuiteEntry> load_text_suite(const std::string &path, std::istream &in) {
    std::vector<SuiteEntry> suite;
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        line = line.substr(0, line.find('#'));
        const size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
        if (first == std::string::npos) continue;
        line = line.substr(first, last - first + 1);
        SuiteEntry e;
        try {
            e = entry_from_signature(signature_from_text(line));
        } catch (const std::exception &error) {
            throw std::runtime_error(path + ":" + std::to_string(number) + ": " + error.what() + " (in '" + line + "')");
        }
        const size_t id = line.find(" id=");
        e.id = id == std::string::npos ? "L" + std::to_string(number)
                                       : line.substr(id + 4, line.find(' ', id + 4) - (id + 4));
        e.description = line;
        suite.push_back(e);
    }
    if (suite.empty()) throw std::runtime_error(path + ": no calls (a suite is a JSON list or one call per line)");
    return suite;
}

}  // namespace

std::vector<SuiteEntry> load_suite(const std::string &path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error(path + ": cannot be read");
    std::stringstream in;
    in << file.rdbuf();
    // JSON starts with '['; anything else is the text form.
    const std::string text = in.str();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '[') return load_text_suite(path, in);
    json j = json::parse(text);
    std::vector<SuiteEntry> suite;
    for (const json &row : j) {
        SuiteEntry e;
        e.id = row.at("id").get<std::string>();
        e.call = row.at("call");
        e.op = e.call.at("op").get<std::string>();
        e.batch = row.value("batch", int64_t{1});
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

}  // namespace gradtune::tooling
