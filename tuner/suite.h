// Suites: the calls the tuner tunes and the benchmark times. The default one
// (docs/benchmark-shapes.md section 1, bench/suites/default.txt) holds the
// shapes users of these gradients meet most, fp32 NHWC, each at N=1 and N=32.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gradtune::tooling {

struct SuiteEntry {
    std::string id;           // "D1", "C5", "F2b", ...
    std::string op;           // TF op name
    int64_t batch = 1;
    std::string description;  // "112x112x32 k3 s1"
    nlohmann::json call;      // see call_json.h
    double flops = 0;         // useful floating-point operations per call
    double bytes = 0;         // compulsory memory traffic per call (inputs + outputs once)
    bool memory_bound = false;

    std::string name() const { return id + "/N" + std::to_string(batch); }
};

// A regular pooling sequence (fractional pooling with n_out >= 1 cells):
// 0 = cum[0] < ... < cum[n_out] = n_in, steps K or K+1.
std::vector<int64_t> pooling_sequence(int64_t n_in, int64_t n_out);

// Every row of the default suite (bench/suites/default.txt, built in) for
// `ops` (empty = all ops) at each batch size: op by op, then by batch size.
std::vector<SuiteEntry> default_suite(const std::vector<std::string> &ops = {},
                                      const std::vector<int64_t> &batches = {1, 32});

// A suite from a file, in one of two forms.
// JSON: [{"id": ..., "call": {...}, "batch": N, "description": ..., and
// optionally "flops", "bytes", "memory_bound"}, ...].
// Text: one call per line ('#' starts a comment), e.g.
//   Conv2DBackpropInput N=16 H=56 W=56 C=256 K=512 f=1x1 s=2 SAME
//   DepthwiseConv2dNativeBackpropFilter N=1 H=112 W=112 C=32 f=3 s=1 M=1 T=bfloat16 NCHW id=D1
//   FractionalAvgPoolGrad N=1 H=56 W=56 C=128 OH=39 OW=39 overlapping
// with the input's N (a list, N=1,32, gives one call per batch size), H, W,
// C; K output channels (dense ops, default C), G
// groups, M the depth multiplier (depthwise, default 1); f, s and d the
// filter size, stride and dilation (RxS or one value for both); SAME (the
// default) or VALID; T the dtype (default float32), NHWC (default) or NCHW;
// OH, OW and `overlapping` for fractional pooling (the gradient gets
// regular pooling sequences, the forward op a seeded pseudo-random one);
// id= names the row (default L<line number>).
std::vector<SuiteEntry> load_suite(const std::string &path);

// What the suite readers need to know of an op, from what it declares (its
// structural parameters in schedules/, its inputs in the runtime's OpSpec),
// not from its name: a new op of a family they know needs no code here.
struct OpTraits {
    bool pooling = false;             // declares `overlapping`: fractional pooling
    bool depthwise = false;           // declares `depth_multiplier`
    std::vector<std::string> inputs;  // TF's input names, in order
    bool takes(const std::string &input) const;
};

// Throws std::runtime_error for an op that the schedules or the runtime do
// not know.
OpTraits op_traits(const std::string &op);

// A call from its signature, {"op", "T", "data_format", "structure",
// "padding", "shape"} as the runtime describes it (CallInfo): the calls of
// journal suites and of text suite files. Throws std::runtime_error where a
// signature cannot be rebuilt (EXPLICIT padding, an op without a rule, a size
// out of 1 .. 2^24).
SuiteEntry entry_from_signature(const nlohmann::json &signature);

}  // namespace gradtune::tooling
