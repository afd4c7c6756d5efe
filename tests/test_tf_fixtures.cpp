// Golden cases produced by real TensorFlow (tests/golden/<Op>.json, written by
// scripts/make_tf_fixtures.py) run through the by-name API (op_call.h): outputs
// within the normwise tolerance of their dtype, errors with TF's kind and text.
// Where gradtune's policy (docs/tf-ops.md section 15) differs from TF, the
// fixture's "expect" already is the policy expectation and its "policy" field
// says why; "tf" records what TF itself did.
//
// Ops that this build does not register are skipped with a warning (other
// ops arrive over time, and GRADTUNE_OP_FILTER builds subsets); the test
// fails if no case at all ran.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradtune/gradtune.h"
#include "gradtune/op_call.h"
#include "test_util.h"

#ifndef GRADTUNE_GOLDEN_DIR
#error "tests/CMakeLists.txt passes GRADTUNE_GOLDEN_DIR (the tests/golden directory)"
#endif

using namespace gradtune;
using json = nlohmann::json;

namespace {

// Reads one fixture tensor: {"dtype", "shape", "values"} (row-major).
// int64 values are stored exactly (sequence values and shapes beyond 2^53
// must not go through double).
bool tensor_from_json(const json &j, Tensor *out, std::string *why) {
    const auto dtype = DataTypeFromString(j.at("dtype").get<std::string>());
    if (!dtype) {
        *why = "unknown dtype " + j.at("dtype").get<std::string>();
        return false;
    }
    const std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
    const json &values = j.at("values");
    Tensor t(*dtype, shape);
    if (static_cast<int64_t>(values.size()) != t.num_elements()) {
        *why = "tensor has " + std::to_string(values.size()) + " values for shape " + ShapeString(shape);
        return false;
    }
    for (int64_t i = 0; i < t.num_elements(); i++) {
        if (*dtype == DataType::kInt64) t.as<int64_t>()[i] = values[i].get<int64_t>();
        else t.store(i, values[i].get<double>());
    }
    *out = std::move(t);
    return true;
}

// A JSON attr value converted to the kind the op declares (FindOpSpec); an
// attr the op does not declare is converted by its JSON type and passed on,
// so that RunOp reports it as TF would.
bool attr_from_json(const OpSpec &spec, const std::string &name, const json &j, AttrValue *out, std::string *why) {
    const AttrSpec *attr = nullptr;
    for (const AttrSpec &a : spec.attrs)
        if (a.name == name) attr = &a;
    auto ints = [&](std::vector<int64_t> *v) {
        for (const json &e : j) {
            if (!e.is_number_integer()) return false;
            v->push_back(e.get<int64_t>());
        }
        return true;
    };
    AttrKind kind;
    if (attr) kind = attr->kind;
    else if (j.is_boolean()) kind = AttrKind::kBool;
    else if (j.is_string()) kind = AttrKind::kString;
    else if (j.is_number_integer()) kind = AttrKind::kInt;
    else if (j.is_number()) kind = AttrKind::kFloat;
    else if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json &e) { return e.is_number_integer(); }))
        kind = AttrKind::kIntList;
    else kind = AttrKind::kFloatList;
    switch (kind) {
    case AttrKind::kInt:
        if (!j.is_number_integer()) break;
        *out = j.get<int64_t>();
        return true;
    case AttrKind::kFloat:
        if (!j.is_number()) break;
        *out = j.get<double>();
        return true;
    case AttrKind::kBool:
        if (!j.is_boolean()) break;
        *out = j.get<bool>();
        return true;
    case AttrKind::kString:
        if (!j.is_string()) break;
        *out = j.get<std::string>();
        return true;
    case AttrKind::kIntList: {
        std::vector<int64_t> v;
        if (!j.is_array() || !ints(&v)) break;
        *out = v;
        return true;
    }
    case AttrKind::kFloatList: {
        if (!j.is_array()) break;
        std::vector<double> v;
        for (const json &e : j) v.push_back(e.get<double>());
        *out = v;
        return true;
    }
    }
    *why = "attr '" + name + "' does not have the kind " + spec.name + " declares: " + j.dump();
    return false;
}

struct OpTally {
    int run = 0, passed = 0, failed = 0, skipped = 0;
    std::map<std::string, double> worst;  // dtype -> worst normwise error over its outputs
};

// Runs one case; returns "" when it passes, else what went wrong.
std::string run_case(const OpSpec &spec, const json &c, OpTally *tally) {
    std::string why;
    std::map<std::string, Tensor> tensors;
    for (const auto &[name, value] : c.at("inputs").items()) {
        Tensor t;
        if (!tensor_from_json(value, &t, &why)) return "bad fixture input '" + name + "': " + why;
        tensors.emplace(name, std::move(t));
    }
    OpCall call;
    call.op = spec.name;
    for (const auto &[name, t] : tensors) call.inputs[name] = t.cref();
    for (const auto &[name, value] : c.at("attrs").items()) {
        AttrValue v;
        if (!attr_from_json(spec, name, value, &v, &why)) return why;
        call.attrs[name] = v;
    }

    std::vector<Tensor> outputs;
    Status status;
    try {
        status = RunOp(call, &outputs);
    } catch (const std::exception &e) {
        return std::string("RunOp threw: ") + e.what();
    }

    // The framework path (RunOpInto, as python/gradtune_tf calls it):
    // DescribeCall validates first, with RunOp's error where it refuses.
    CallInfo info;
    const Status described = DescribeCall(call, &info);
    if (!described.ok() && (described.code() != status.code() || described.message() != status.message()))
        return "DescribeCall: " + described.ToString() + ", RunOp: " + status.ToString();

    const json &expect = c.at("expect");
    if (expect.contains("error")) {
        const json &err = expect.at("error");
        const std::string kind = err.at("kind").get<std::string>();
        const std::string message = err.at("message").get<std::string>();
        if (status.ok()) return "expected " + kind + ": " + message + "\n    got OK";
        const bool prefix_only = err.contains("prefix");
        const std::string want = prefix_only ? err.at("prefix").get<std::string>() : message;
        const bool text_ok = prefix_only ? status.message().rfind(want, 0) == 0 : status.message() == want;
        if (StatusCodeName(status.code()) != kind || !text_ok)
            return "expected " + kind + ": " + want + (prefix_only ? " (prefix)" : "") + "\n    got " +
                   status.ToString();
        return "";
    }

    if (!status.ok()) return "expected outputs, got " + status.ToString();
    if (!described.ok()) return "RunOp succeeded, DescribeCall: " + described.ToString();
    // RunOpInto, into memory of the dtypes and shapes DescribeCall reports:
    // the same bits as RunOp.
    if (info.output_shapes.size() != outputs.size()) return "DescribeCall reports another number of outputs";
    std::vector<Tensor> into;
    for (size_t k = 0; k < outputs.size(); k++) {
        if (info.output_dtypes[k] != outputs[k].dtype() || info.output_shapes[k] != outputs[k].shape())
            return "DescribeCall reports output " + std::to_string(k) + " as " + DataTypeName(info.output_dtypes[k]) +
                   ShapeString(info.output_shapes[k]) + ", RunOp made " + DataTypeName(outputs[k].dtype()) +
                   ShapeString(outputs[k].shape());
        into.emplace_back(info.output_dtypes[k], info.output_shapes[k]);
    }
    std::vector<TensorRef> views;
    for (Tensor &t : into) views.push_back(t.ref());
    const Status into_status = RunOpInto(call, views);
    if (!into_status.ok()) return "RunOp succeeded, RunOpInto: " + into_status.ToString();
    for (size_t k = 0; k < outputs.size(); k++) {
        const size_t bytes = static_cast<size_t>(outputs[k].num_elements()) * DataTypeSize(outputs[k].dtype());
        if (bytes > 0 && std::memcmp(into[k].data(), outputs[k].data(), bytes) != 0)
            return "RunOpInto's output " + std::to_string(k) + " differs from RunOp's";
    }
    const json &want = expect.at("outputs");
    if (outputs.size() != want.size())
        return "expected " + std::to_string(want.size()) + " outputs, got " + std::to_string(outputs.size());
    std::ostringstream problems;
    for (size_t k = 0; k < want.size(); k++) {
        Tensor ref;
        if (!tensor_from_json(want[k], &ref, &why)) return "bad fixture output: " + why;
        const Tensor &got = outputs[k];
        const std::string dtype = DataTypeName(ref.dtype());
        if (got.dtype() != ref.dtype() || got.shape() != ref.shape()) {
            problems << "output " << k << ": expected " << dtype << ShapeString(ref.shape()) << ", got "
                     << DataTypeName(got.dtype()) << ShapeString(got.shape()) << "; ";
            continue;
        }
        double error = 0;
        if (ref.dtype() == DataType::kInt64) {
            for (int64_t i = 0; i < ref.num_elements(); i++)
                if (got.as<int64_t>()[i] != ref.as<int64_t>()[i]) error = 1;  // exact
        } else {
            error = testing::normwise_error(testing::to_doubles(got), testing::to_doubles(ref));
        }
        double &worst = tally->worst[dtype];
        worst = std::max(worst, error);
        if (error > testing::tolerance(ref.dtype())) {
            problems << "output " << k << " (" << dtype << ShapeString(ref.shape()) << "): normwise error "
                     << error << " > " << testing::tolerance(ref.dtype()) << "; ";
        }
    }
    return problems.str();
}

}  // namespace

// (No commas or brackets in the name: ctest passes it to Catch as a test spec.)
TEST_CASE("TensorFlow golden fixtures in tests/golden run through RunOp", "[tf_fixtures]") {
    namespace fs = std::filesystem;
    const fs::path dir = GRADTUNE_GOLDEN_DIR;
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    REQUIRE_FALSE(files.empty());

    std::map<std::string, OpTally> tallies;
    int total_run = 0, total_skipped = 0;
    for (const fs::path &path : files) {
        std::ifstream in(path);
        json doc;
        try {
            doc = json::parse(in);
        } catch (const std::exception &e) {
            FAIL_CHECK(path.filename().string() << ": not valid JSON: " << e.what());
            continue;
        }
        const std::string op = doc.at("op").get<std::string>();
        CHECK(path.stem().string() == op);
        OpTally &tally = tallies[op];
        const json &cases = doc.at("cases");
        const OpSpec *spec = FindOpSpec(op);
        if (!spec) {
            tally.skipped = static_cast<int>(cases.size());
            total_skipped += tally.skipped;
            WARN(op << " is not registered in this build: " << cases.size() << " TF fixture cases skipped");
            continue;
        }
        for (const json &c : cases) {
            const std::string name = c.value("name", std::string("?"));
            std::string failure;
            try {
                failure = run_case(*spec, c, &tally);
            } catch (const std::exception &e) {
                failure = std::string("malformed case: ") + e.what();
            }
            tally.run++;
            total_run++;
            if (failure.empty()) {
                tally.passed++;
            } else {
                tally.failed++;
                std::string context = "tf_path " + c.value("tf_path", std::string("?"));
                if (c.contains("policy")) context += "; policy: " + c.at("policy").get<std::string>();
                FAIL_CHECK(op << "/" << name << " (" << context << ")\n    " << failure);
            }
        }
    }

    // The per-op summary the lead's report needs (printed even on success).
    std::printf("TF fixtures (TensorFlow goldens in %s):\n", dir.string().c_str());
    for (const auto &[op, t] : tallies) {
        if (t.skipped) {
            std::printf("  %-38s skipped %d cases (op not registered)\n", op.c_str(), t.skipped);
            continue;
        }
        std::printf("  %-38s run %d, passed %d, failed %d; worst normwise error:", op.c_str(), t.run, t.passed,
                    t.failed);
        for (const auto &[dtype, err] : t.worst) std::printf(" %s %.3g", dtype.c_str(), err);
        std::printf("\n");
    }
    std::printf("  total: %d cases run, %d skipped\n", total_run, total_skipped);
    std::fflush(stdout);
    REQUIRE(total_run > 0);
}
