#include "measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "gradtune/run_options.h"

namespace gradtune::tooling {

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = q * (v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

}  // namespace

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double spread_pct(std::vector<double> v) {
    const double m = median(v);
    return m > 0 ? 100.0 * (quantile(v, 0.75) - quantile(v, 0.25)) / m : 0;
}

int halide_threads() {
    return gradtune::PoolThreads();
}

std::function<void()> between_calls(const MeasureOptions &options) {
    if (options.evict_mb <= 0 && options.idle_us <= 0) return {};
    const size_t bytes = options.evict_mb > 0 ? static_cast<size_t>(options.evict_mb * (1 << 20)) : 0;
    auto buffers = std::make_shared<std::vector<std::vector<char>>>(bytes ? halide_threads() : 0,
                                                                    std::vector<char>(bytes));
    auto round = std::make_shared<int>(0);
    return [buffers, round, idle_us = options.idle_us] {
        const char value = static_cast<char>(++*round & 0xff);  // a new value each time: real writes
        std::vector<std::thread> threads;
        for (std::vector<char> &b : *buffers) threads.emplace_back([&b, value] { std::fill(b.begin(), b.end(), value); });
        for (std::thread &t : threads) t.join();
        if (idle_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(idle_us));
    };
}

SelfTimed self_timed(std::function<Status()> call, std::function<void()> between) {
    if (!between) {
        return [call = std::move(call)](int iterations, double *elapsed_ms) {
            const double start = now_ms();
            for (int it = 0; it < iterations; it++) {
                Status st = call();
                if (!st.ok()) return st;
            }
            *elapsed_ms = now_ms() - start;
            return Status::OK();
        };
    }
    return [call = std::move(call), between = std::move(between)](int iterations, double *elapsed_ms) {
        *elapsed_ms = 0;
        for (int it = 0; it < iterations; it++) {
            between();
            const double start = now_ms();
            Status st = call();
            *elapsed_ms += now_ms() - start;
            if (!st.ok()) return st;
        }
        return Status::OK();
    };
}

std::vector<Timing> time_interleaved(const std::vector<std::function<Status()>> &participants,
                                     const MeasureOptions &options) {
    std::vector<SelfTimed> timed;
    const std::function<void()> between = between_calls(options);
    for (const std::function<Status()> &call : participants) timed.push_back(self_timed(call, between));
    return time_interleaved(timed, options);
}

std::vector<Timing> time_interleaved(const std::vector<SelfTimed> &participants, const MeasureOptions &options) {
    const size_t n = participants.size();
    std::vector<Timing> timing(n);
    std::vector<int> iterations(n, 0);
    // Warm-up (first touch of memory, thread pool start) and calibration.
    for (size_t i = 0; i < n; i++) {
        double once = 0;
        timing[i].status = participants[i](1, &once);
        if (!timing[i].status.ok()) continue;
        if (!options.warm) timing[i].status = participants[i](1, &once);
        iterations[i] = static_cast<int>(
            std::clamp(std::ceil(options.min_sample_ms / std::max(once, 1e-4)), 1.0, options.max_iterations));
    }
    std::vector<std::vector<double>> samples(n);
    for (int s = 0; s < options.samples; s++) {
        for (size_t k = 0; k < n; k++) {
            const size_t i = (k + s) % n;  // rotate who goes first
            if (!timing[i].status.ok()) continue;
            double elapsed = 0;
            timing[i].status = participants[i](iterations[i], &elapsed);
            if (timing[i].status.ok()) samples[i].push_back(elapsed / iterations[i]);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!timing[i].status.ok() || samples[i].empty()) continue;
        timing[i].median_ms = median(samples[i]);
        timing[i].min_ms = *std::min_element(samples[i].begin(), samples[i].end());
        timing[i].spread_pct = spread_pct(samples[i]);
        timing[i].samples = static_cast<int>(samples[i].size());
        timing[i].iterations = iterations[i];
    }
    return timing;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double tolerance(DataType dtype) {
    switch (dtype) {
    case DataType::kDouble: return 1e-12;
    case DataType::kFloat: return 1e-5;
    case DataType::kHalf: return 1e-3;
    case DataType::kBFloat16: return 1e-2;
    default: return 0;
    }
}

}  // namespace gradtune::tooling
