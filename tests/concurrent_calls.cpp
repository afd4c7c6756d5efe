// Concurrent calls of every op from several threads, through the by-name API
// as a TF executor would make them: each thread runs every call many times, in
// its own order, and every result must equal, bit for bit, the result of the
// same call made alone. Built twice: as a normal test, and (GRADTUNE_SANITIZE)
// over a ThreadSanitizer copy of libgradtune, where TSan reports any data race
// in gradtune's own code (dispatch, the variant table, the journal, the error
// routing); tests/tsan.supp says what of Halide's runtime it does not see.
// Usage: gradtune_concurrent_calls [threads] [rounds]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gradtune/gradtune.h"

namespace {

using gradtune::AttrValue;
using gradtune::DataType;
using gradtune::OpCall;
using gradtune::Tensor;

Tensor random_tensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
    Tensor t(dtype, std::move(shape));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < t.num_elements(); i++) t.store(i, u(rng));
    return t;
}

Tensor int_vector(DataType dtype, const std::vector<int64_t> &values) {
    return Tensor::FromVector(dtype, {static_cast<int64_t>(values.size())}, values);
}

// A call and the tensors it points into.
struct Case {
    std::string name;
    std::vector<Tensor> tensors;  // owned inputs (OpCall refers to them)
    OpCall call;
    std::vector<Tensor> expected;
};

std::vector<int64_t> strides(int s) { return {1, s, s, 1}; }

// The dense and depthwise convolutions and their gradients, NHWC, at
// stride 1 and 2, float32 and float64.
void add_convolutions(std::vector<Case> *cases) {
    uint32_t seed = 1;
    for (DataType dtype : {DataType::kFloat, DataType::kDouble}) {
        for (int s : {1, 2}) {
            const int64_t n = 2, h = 9, w = 11, c = 8, m = 2, o = 12, k = 3;
            const int64_t oh = (h + s - 1) / s, ow = (w + s - 1) / s;
            const std::map<std::string, AttrValue> attrs = {{"strides", strides(s)}, {"padding", std::string("SAME")}};
            auto add = [&](const std::string &op, std::vector<std::pair<std::string, Tensor>> inputs) {
                Case &x = cases->emplace_back();
                x.name = op + (dtype == DataType::kFloat ? " float32" : " float64") + " stride " + std::to_string(s);
                x.tensors.reserve(inputs.size());
                for (auto &[name, t] : inputs) x.tensors.push_back(std::move(t));
                x.call.op = op;
                for (size_t i = 0; i < inputs.size(); i++) x.call.inputs.emplace(inputs[i].first, x.tensors[i].cref());
                x.call.attrs = attrs;
            };
            add("Conv2D", {{"input", random_tensor(dtype, {n, h, w, c}, seed++)},
                           {"filter", random_tensor(dtype, {k, k, c, o}, seed++)}});
            add("Conv2DBackpropInput", {{"input_sizes", int_vector(DataType::kInt32, {n, h, w, c})},
                                        {"filter", random_tensor(dtype, {k, k, c, o}, seed++)},
                                        {"out_backprop", random_tensor(dtype, {n, oh, ow, o}, seed++)}});
            add("Conv2DBackpropFilter", {{"input", random_tensor(dtype, {n, h, w, c}, seed++)},
                                         {"filter_sizes", int_vector(DataType::kInt32, {k, k, c, o})},
                                         {"out_backprop", random_tensor(dtype, {n, oh, ow, o}, seed++)}});
            add("DepthwiseConv2dNative", {{"input", random_tensor(dtype, {n, h, w, c}, seed++)},
                                          {"filter", random_tensor(dtype, {k, k, c, m}, seed++)}});
            add("DepthwiseConv2dNativeBackpropInput",
                {{"input_sizes", int_vector(DataType::kInt32, {n, h, w, c})},
                 {"filter", random_tensor(dtype, {k, k, c, m}, seed++)},
                 {"out_backprop", random_tensor(dtype, {n, oh, ow, c * m}, seed++)}});
            add("DepthwiseConv2dNativeBackpropFilter",
                {{"input", random_tensor(dtype, {n, h, w, c}, seed++)},
                 {"filter_sizes", int_vector(DataType::kInt32, {k, k, c, m})},
                 {"out_backprop", random_tensor(dtype, {n, oh, ow, c * m}, seed++)}});
        }
    }
}

// FractionalAvgPool (seeded, so deterministic) and the gradient of its result.
bool add_pooling(std::vector<Case> *cases) {
    for (bool overlapping : {false, true}) {
        Case &pool = cases->emplace_back();
        pool.name = std::string("FractionalAvgPool overlapping=") + (overlapping ? "true" : "false");
        pool.tensors.push_back(random_tensor(DataType::kFloat, {2, 17, 13, 6}, overlapping ? 7 : 8));
        pool.call.op = "FractionalAvgPool";
        pool.call.inputs.emplace("value", pool.tensors[0].cref());
        pool.call.attrs = {{"pooling_ratio", std::vector<double>{1.0, 1.44, 1.73, 1.0}},
                           {"pseudo_random", true},
                           {"overlapping", overlapping},
                           {"deterministic", true},
                           {"seed", int64_t{5}},
                           {"seed2", int64_t{9}}};
        std::vector<Tensor> pooled;
        gradtune::Status st = gradtune::RunOp(pool.call, &pooled);
        if (!st.ok()) {
            std::fprintf(stderr, "%s: %s\n", pool.name.c_str(), st.ToString().c_str());
            return false;
        }
        Case grad;
        grad.name = std::string("FractionalAvgPoolGrad overlapping=") + (overlapping ? "true" : "false");
        grad.tensors.push_back(int_vector(DataType::kInt64, {2, 17, 13, 6}));
        grad.tensors.push_back(random_tensor(DataType::kFloat, pooled[0].shape(), 11));
        grad.tensors.push_back(pooled[1]);
        grad.tensors.push_back(pooled[2]);
        grad.call.op = "FractionalAvgPoolGrad";
        grad.call.inputs = {{"orig_input_tensor_shape", grad.tensors[0].cref()},
                            {"out_backprop", grad.tensors[1].cref()},
                            {"row_pooling_sequence", grad.tensors[2].cref()},
                            {"col_pooling_sequence", grad.tensors[3].cref()}};
        grad.call.attrs = {{"overlapping", overlapping}};
        cases->push_back(std::move(grad));
    }
    return true;
}

bool same(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
        if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape()) return false;
        const size_t bytes = static_cast<size_t>(a[i].num_elements()) * gradtune::DataTypeSize(a[i].dtype());
        if (bytes && std::memcmp(a[i].data(), b[i].data(), bytes) != 0) return false;
    }
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    std::vector<Case> cases;
    add_convolutions(&cases);
    if (!add_pooling(&cases)) return 1;
    // Every op the library registers, so that a new op cannot be left out.
    for (const gradtune::OpSpec &spec : gradtune::RegisteredOps()) {
        bool covered = false;
        for (const Case &c : cases) covered = covered || c.call.op == spec.name;
        if (!covered) {
            std::fprintf(stderr, "no concurrent call of %s: add its cases here (tests/concurrent_calls.cpp)\n",
                         spec.name.c_str());
            return 1;
        }
    }
    // Alone first: the expected results (the copies inside `cases` must not
    // move from here on, since the calls point into them).
    for (Case &c : cases) {
        gradtune::Status st = gradtune::RunOp(c.call, &c.expected);
        if (!st.ok()) {
            std::fprintf(stderr, "%s: %s\n", c.name.c_str(), st.ToString().c_str());
            return 1;
        }
    }
    // A bad call among them: the error of one thread must not reach another.
    OpCall bad = cases[0].call;
    bad.attrs["padding"] = std::string("SAMEISH");

    std::vector<int> mismatches(threads, 0);
    std::vector<std::string> first_mismatch(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        pool.emplace_back([&, t] {
            for (int r = 0; r < rounds; r++) {
                for (size_t k = 0; k < cases.size(); k++) {
                    const Case &c = cases[(k + t * 3 + r) % cases.size()];
                    std::vector<Tensor> got;
                    gradtune::Status st = gradtune::RunOp(c.call, &got);
                    if (!st.ok() || !same(got, c.expected)) {
                        if (!mismatches[t]++) first_mismatch[t] = c.name + (st.ok() ? ": different result" : ": " + st.ToString());
                    }
                    if (k % 5 == t % 5) {
                        std::vector<Tensor> none;
                        if (gradtune::RunOp(bad, &none).ok()) {
                            if (!mismatches[t]++) first_mismatch[t] = "a bad padding was accepted";
                        }
                    }
                }
            }
        });
    }
    for (std::thread &th : pool) th.join();
    int total = 0;
    for (int t = 0; t < threads; t++) {
        total += mismatches[t];
        if (mismatches[t]) std::fprintf(stderr, "thread %d: %d mismatches, first: %s\n", t, mismatches[t], first_mismatch[t].c_str());
    }
    std::printf("%d threads x %d rounds x %zu calls: %d mismatches\n", threads, rounds, cases.size(), total);
    return total ? 1 : 0;
}
