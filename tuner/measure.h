// Measuring kernels honestly (docs/design.md section 7): warm-up, calibrated
// iterations per sample, several samples with the participants interleaved
// (so that machine noise hits all of them alike), median and spread. Used by
// the tuner and the benchmark driver alike; never while anything compiles.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune::tooling {

// The longest compile (seconds, one target) of a setting that may become a
// record or a structure default: every user's build compiles each record for
// 2-3 CPU targets, and one Conv2D setting at 45 s here made 6 minutes of the
// library's build for a 1.2x win on one shape. `gradtune distill` ignores
// trials that compiled longer (--max-compile-s), and `gradtune tune` stops
// such a compile there (--compile-timeout): waiting for it only delays the
// rest of its batch (two 120 s waits were 4 of a 15-minute tune's minutes).
constexpr double kRecordCompileLimitS = 30;

struct Timing {
    double median_ms = 0, min_ms = 0;
    double spread_pct = 0;  // interquartile range / median, in percent
    int samples = 0, iterations = 0;
    Status status;  // a participant that failed is not timed
};

struct MeasureOptions {
    int samples = 7;
    double min_sample_ms = 20;  // each sample runs enough calls to last this long
    double max_iterations = 1000;
    // Every participant has run before (the tuner's correctness call): the
    // first call calibrates, no separate warm-up call.
    bool warm = false;
    // The tuner's cut for clear losers: a candidate whose first call takes
    // more than slow_factor times the generic variant's and longer than a
    // sample is reported "slow" with that one call instead of being timed.
    double slow_factor = 3;
    // What a training step does between two gradient calls, put back before
    // every timed call of an in-process participant (each call is then timed
    // alone): every kernel thread writes evict_mb MiB of its own memory (the
    // operands leave the cores' caches), then the caller sleeps idle_us
    // (the pools' workers go to sleep). `gradtune tune --evict-mb` picks
    // settings for that cold start, `gradtune-bench --evict-mb` shows it.
    double evict_mb = 0;
    int idle_us = 0;
};

// MeasureOptions::evict_mb and idle_us as a function to run before a call;
// empty where both are 0.
std::function<void()> between_calls(const MeasureOptions &options);

// Times every participant (one call per invocation); participants rotate
// their order from sample to sample.
std::vector<Timing> time_interleaved(const std::vector<std::function<Status()>> &participants,
                                     const MeasureOptions &options);
// The same with participants that time themselves: each runs `iterations`
// calls and reports their total milliseconds (TensorFlow in its own process,
// whose pipe round trip must not count).
using SelfTimed = std::function<Status(int iterations, double *elapsed_ms)>;
// A participant of the first form, timed from outside. With `between`, every
// call is timed alone and between() runs before it, outside the time (the
// MeasureOptions' evict_mb and idle_us: what a training step's other ops do
// to the caches and the pool's workers between two gradient calls).
SelfTimed self_timed(std::function<Status()> call, std::function<void()> between = {});
std::vector<Timing> time_interleaved(const std::vector<SelfTimed> &participants, const MeasureOptions &options);

// Median and IQR helpers (exposed for tests).
double median(std::vector<double> v);
double spread_pct(std::vector<double> v);

// The threads the kernels' parallel loops run on now (runtime/src/thread_pool.h).
int halide_threads();

// Seconds since `start` on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point start);

// The normwise tolerance of a dtype (the issues': f64 1e-12, f32 1e-5, f16
// 1e-3, bf16 1e-2; 0 for integers): the tests', the tuner's and the CUDA
// check's one definition.
double tolerance(DataType dtype);

}  // namespace gradtune::tooling
