#include "suite.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "journal_suite.h"
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

}  // namespace gradtune::tooling
