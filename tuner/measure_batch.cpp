// `gradtune measure --batch FILE`: the batch runner's measuring child
// (batch.h). It checks every candidate of the batch against the generic
// variant on each shape, cuts clear losers after one call, times the rest
// side by side (interleaved) and prints one JSON line per result, plus
// progress lines ("running", "timing") from which the parent tells which
// candidate it died in.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "batch.h"
#include "call_json.h"
#include "gradtune/variants.h"
#include "measure.h"
#include "npy.h"
#include "records.h"

namespace gradtune::tooling {

using nlohmann::json;

namespace {

// Fault injection for the tuner's tests (tests/tuner/fault_injection_test.sh):
// with GRADTUNE_FAULT_INJECT=crash:K (or hang:K) a measuring process crashes
// with SIGSEGV (or hangs) at the K-th candidate it checks (counting each
// shape's checks), as a candidate with a broken schedule would. crash:K:FILE
// does so once in all: only while FILE does not exist, and creates it.
// Unset, it does nothing.
void inject_fault(int candidate_call) {
    const char *spec = std::getenv("GRADTUNE_FAULT_INJECT");
    if (!spec) return;
    const std::string text = spec;
    const size_t colon = text.find(':');
    if (colon == std::string::npos || std::atoi(text.c_str() + colon + 1) != candidate_call) return;
    if (const size_t marker = text.find(':', colon + 1); marker != std::string::npos) {
        const std::string path = text.substr(marker + 1);
        if (std::filesystem::exists(path)) return;
        std::ofstream(path) << "fault injected\n";
    }
    if (text.compare(0, colon, "crash") == 0) std::raise(SIGSEGV);
    if (text.compare(0, colon, "hang") == 0) {
        for (;;) pause();
    }
}

std::string ratio_text(double ratio) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1fx", ratio);
    return buffer;
}

// Normwise comparison of two outputs (as the tests do), tolerance per dtype.
std::string compare_outputs(const std::vector<Tensor> &got, const std::vector<Tensor> &want) {
    if (got.size() != want.size()) return "a different number of outputs";
    for (size_t o = 0; o < got.size(); o++) {
        if (got[o].shape() != want[o].shape()) return "output " + std::to_string(o) + " has another shape";
        double diff = 0, scale = 0;
        const int64_t elements = got[o].num_elements();
        for (int64_t i = 0; i < elements; i++) {
            const double w = want[o].load(i), d = std::fabs(got[o].load(i) - w);
            if (std::isnan(d) && !std::isnan(w))  // std::max would skip it
                return "output " + std::to_string(o) + " has NaN at element " + std::to_string(i) +
                       " (left unwritten, or computed so) where the generic variant has a number";
            if (d > diff) diff = d;
            scale = std::max(scale, std::fabs(w));
        }
        const double error = scale > 0 ? diff / scale : diff;
        // Both sides carry rounding error: twice the tests' tolerance.
        if (error > 2 * tolerance(got[o].dtype()))
            return "output " + std::to_string(o) + " differs from the generic variant (normwise error " +
                   std::to_string(error) + ")";
    }
    return "";
}

std::string generic_variant(const CallInfo &info, Device device) {
    for (const VariantInfo &v : Variants(info.op))
        if (v.generic && v.device == device && v.dtype == info.dtype && v.data_format == info.data_format)
            return v.name;
    return "";
}

// One line for the parent, flushed at once: if this process dies next, the
// parent has read every line before it.
void say(const json &line) { std::cout << line << std::endl; }

// A candidate of the batch, ready to run: a compiled shared object's
// function, or the library's own variant.
struct Loaded {
    size_t index;
    ExternalKernel kernel;
    std::string variant;

    RunOptions options(Device device) const {
        RunOptions o;
        o.device = device;
        if (variant.empty()) {
            o.external_kernel = &kernel;
        } else {
            o.variant = variant;
        }
        return o;
    }
};

std::vector<Loaded> load_candidates(const json &batch, Device device) {
    std::vector<Loaded> loaded;
    for (const json &c : batch["candidates"]) {
        Loaded l{c.at("index").get<size_t>(), {}, c.value("variant", "")};
        if (!l.variant.empty()) {
            loaded.push_back(std::move(l));
            continue;
        }
        void *handle = dlopen(c.at("shared_object").get<std::string>().c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            say({{"candidate", l.index}, {"shape_id", ""}, {"status", "failed"}, {"error", dlerror()}});
            continue;
        }
        l.kernel.name = c.at("function").get<std::string>();
        l.kernel.knobs = c.value("knobs", "");
        l.kernel.function = reinterpret_cast<void (*)()>(dlsym(handle, l.kernel.name.c_str()));
        Structure s = structure_from_json(c.at("structure"));
        l.kernel.dtype = s.dtype;
        l.kernel.data_format = s.data_format;
        l.kernel.structure = s.fixed;
        l.kernel.device = device;
        loaded.push_back(std::move(l));
    }
    return loaded;
}

// The generic variant's outputs for the shape's call: read back from an
// earlier batch of the run (<reference>-<output>.npy), or computed here (and
// cached; `call_ms` is then that call's time, else 0). `dtypes`: the call's
// output dtypes. A bfloat16 output is cached widened to float32 (.npy has no
// bfloat16) and read back as bfloat16, exactly: read as float32, every later
// batch's candidates were handed float32 outputs and refused them.
Status reference_outputs(const json &shape, const OpCall &call, const std::vector<DataType> &dtypes,
                         const RunOptions &generic, std::vector<Tensor> *reference, double *call_ms) {
    const std::string prefix = shape.value("reference", "");
    auto path = [&](size_t o) { return prefix + "-" + std::to_string(o) + ".npy"; };
    for (size_t o = 0; !prefix.empty() && std::filesystem::exists(path(o)); o++) {
        Tensor cached;
        if (o >= dtypes.size() || !read_npy(path(o), &cached).ok()) {
            reference->clear();
            break;
        }
        reference->push_back(cached.dtype() == dtypes[o] ? std::move(cached) : with_dtype(cached, dtypes[o]));
    }
    *call_ms = 0;
    if (!reference->empty()) return Status::OK();
    const auto start = std::chrono::steady_clock::now();
    GRADTUNE_RETURN_IF_ERROR(RunOp(call, reference, generic));
    *call_ms = 1e3 * seconds_since(start);
    for (size_t o = 0; !prefix.empty() && o < reference->size(); o++) {
        if (!write_npy(path(o) + ".tmp", (*reference)[o]).ok()) break;  // a full disk: no cache, no harm
        std::filesystem::rename(path(o) + ".tmp", path(o));
    }
    return Status::OK();
}

void say_timing(size_t candidate, const std::string &shape_id, const Timing &t, const Timing &generic, int threads) {
    say({{"candidate", candidate},
         {"shape_id", shape_id},
         {"status", to_string(t.status.ok() ? TrialStatus::ok : TrialStatus::failed)},
         {"error", t.status.ok() ? "" : t.status.ToString()},
         {"median_ms", t.median_ms},
         {"min_ms", t.min_ms},
         {"spread_pct", t.spread_pct},
         {"samples", t.samples},
         {"iterations", t.iterations},
         {"generic_median_ms", generic.median_ms},
         {"generic_spread_pct", generic.spread_pct},
         {"threads", threads}});
}

// A candidate's first call on a shape, into `got` poisoned beforehand (all
// bits set: NaN, -1), timed in `call_ms`. A CUDA candidate's first call also
// loads its module, and the driver compiles the PTX for the GPU at hand:
// hundreds of times an N=1 kernel. Where that call is over `cut_ms`, a
// second call is timed instead (an element neither call writes stays
// poisoned).
Status first_call(const OpCall &call, const RunOptions &options, double cut_ms, std::vector<Tensor> *got,
                  double *call_ms) {
    for (Tensor &t : *got) std::memset(t.data(), 0xff, t.num_elements() * DataTypeSize(t.dtype()));
    auto start = std::chrono::steady_clock::now();
    const Status run = RunOp(call, got, options);
    *call_ms = 1e3 * seconds_since(start);
    if (run.ok() && options.device == Device::cuda && *call_ms > cut_ms) {
        start = std::chrono::steady_clock::now();
        if (RunOp(call, got, options).ok()) *call_ms = 1e3 * seconds_since(start);
    }
    return run;
}

// Measures every candidate on one shape. Returns the exit status: nonzero
// when the shape itself cannot run.
int measure_shape(const json &shape, const std::vector<Loaded> &loaded, const MeasureOptions &options, Device device,
                  int *candidate_calls) {
    const std::string shape_id = shape.at("shape_id").get<std::string>();
    MaterialisedCall m;
    CallInfo info;
    Status st = materialise(shape.at("call"), 42, &m);
    if (st.ok()) st = DescribeCall(m.call, &info);
    RunOptions generic;
    generic.device = device;
    generic.variant = generic_variant(info, device);
    std::vector<Tensor> reference;
    double generic_call_ms = 0;
    if (st.ok()) st = reference_outputs(shape, m.call, info.output_dtypes, generic, &reference, &generic_call_ms);
    if (!st.ok()) {
        std::cerr << "gradtune measure: " << shape_id << ": " << st.ToString() << "\n";
        return 3;
    }
    // The generic variant is timed side by side with the candidates of a
    // shape's first batch; later batches get that timing.
    const bool generic_known = shape.contains("generic");
    const double generic_ms = generic_known ? shape["generic"].value("median_ms", 0.0) : generic_call_ms;
    // The cut for clear losers, against the generic variant or the fastest
    // candidate measured so far on the shape, whichever is faster.
    double cut_ms = options.slow_factor * generic_ms;
    if (const double best = shape.value("best_ms", 0.0); best > 0) cut_ms = std::min(cut_ms, options.slow_factor * best);
    const int threads = halide_threads();

    // Correctness first: each candidate against the generic variant. Each
    // candidate's first call writes into one output set allocated once per
    // shape, poisoned (all bits set: NaN, -1) before each call so that an
    // element a candidate leaves unwritten cannot pass: a fresh output would
    // charge the first call with its page faults (150 MB of an N=32 input
    // gradient faults in for longer than a good schedule computes it), and
    // the cut against the fastest candidate's median would then throw good
    // candidates away.
    std::vector<std::function<Status()>> participants;
    std::vector<std::vector<Tensor>> outputs(loaded.size() + 1, reference);
    if (!generic_known) participants.push_back([&, generic] { return RunOp(m.call, &outputs[0], generic); });
    std::vector<size_t> timed;  // indices into `loaded`
    std::vector<Tensor> got = reference;
    for (size_t i = 0; i < loaded.size(); i++) {
        say({{"running", loaded[i].index}, {"shape_id", shape_id}});
        inject_fault(++*candidate_calls);
        const RunOptions o = loaded[i].options(device);
        double call_ms = 0;
        const Status run = first_call(m.call, o, cut_ms, &got, &call_ms);
        const std::string wrong = run.ok() ? compare_outputs(got, reference) : "";
        json result = {{"candidate", loaded[i].index}, {"shape_id", shape_id}};
        if (!run.ok() || !wrong.empty()) {
            if (got.size() != reference.size()) got = reference;  // a failed call may leave it emptied
            result["status"] = to_string(run.ok() ? TrialStatus::wrong : TrialStatus::failed);
            result["error"] = run.ok() ? wrong : run.ToString();
            say(result);
            continue;
        }
        // A clear loser is not timed further: its samples would cost most of
        // a batch (a bad schedule of a large N=32 shape runs for seconds a
        // call) and it can never be a record. The call is the candidate's
        // first (cold code and caches), so the cut is generous; calls shorter
        // than a sample cost no more to time than the cut would save.
        if (call_ms > cut_ms && call_ms > options.min_sample_ms) {
            result.update({{"status", to_string(TrialStatus::slow)},
                           {"error", "one call took " + ratio_text(call_ms / generic_ms) + " the generic variant's (" +
                                         ratio_text(call_ms / cut_ms * options.slow_factor) +
                                         " the fastest so far); not timed further"},
                           {"median_ms", call_ms},
                           {"min_ms", call_ms},
                           {"samples", 1},
                           {"iterations", 1},
                           {"generic_median_ms", generic_ms},
                           {"threads", threads}});
            say(result);
            continue;
        }
        timed.push_back(i);
        participants.push_back([&, o, slot = timed.size()] { return RunOp(m.call, &outputs[slot], o); });
    }
    // Every candidate ran once on this shape: a crash from here on is no one
    // candidate's (the parent blames nobody).
    say({{"timing", shape_id}});
    MeasureOptions warm = options;
    warm.warm = true;  // the candidates ran for the check above, the generic for the reference
    std::vector<Timing> timing = time_interleaved(participants, warm);
    Timing generic_timing;
    if (generic_known) {
        generic_timing.median_ms = generic_ms;
        generic_timing.spread_pct = shape["generic"].value("spread_pct", 0.0);
    } else if (!timing.empty()) {
        generic_timing = timing.front();
        timing.erase(timing.begin());
    }
    for (size_t k = 0; k < timed.size(); k++)
        say_timing(loaded[timed[k]].index, shape_id, timing[k], generic_timing, threads);
    return 0;
}

}  // namespace

int measure_batch(const std::string &batch_path) {
    json batch;
    {
        std::ifstream in(batch_path);
        batch = json::parse(in);
    }
    MeasureOptions options;
    options.samples = batch["measure"].value("samples", 7);
    options.min_sample_ms = batch["measure"].value("min_sample_ms", 20.0);
    options.slow_factor = batch["measure"].value("slow_factor", options.slow_factor);
    options.evict_mb = batch["measure"].value("evict_mb", 0.0);
    const Device device = device_from_string(batch.value("device", "cpu")).value_or(Device::cpu);
    const std::vector<Loaded> loaded = load_candidates(batch, device);
    int candidate_calls = 0;  // candidate checks so far, over all shapes (inject_fault)
    for (const json &shape : batch["shapes"])
        if (int rc = measure_shape(shape, loaded, options, device, &candidate_calls); rc != 0) return rc;
    return 0;
}

}  // namespace gradtune::tooling
