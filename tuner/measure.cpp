#include "measure.h"

#include <HalideRuntime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

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
    // halide_set_num_threads returns the previous value; set it back at once.
    const int n = halide_set_num_threads(0);
    halide_set_num_threads(n);
    return n > 0 ? n : static_cast<int>(std::thread::hardware_concurrency());
}

std::vector<Timing> time_interleaved(const std::vector<std::function<Status()>> &participants,
                                     const MeasureOptions &options) {
    const size_t n = participants.size();
    std::vector<Timing> timing(n);
    std::vector<int> iterations(n, 0);
    // Warm-up (first touch of memory, thread pool start) and calibration.
    for (size_t i = 0; i < n; i++) {
        timing[i].status = participants[i]();
        if (!timing[i].status.ok()) continue;
        const double start = now_ms();
        timing[i].status = participants[i]();
        const double once = std::max(now_ms() - start, 1e-4);
        iterations[i] = static_cast<int>(
            std::clamp(std::ceil(options.min_sample_ms / once), 1.0, options.max_iterations));
    }
    std::vector<std::vector<double>> samples(n);
    for (int s = 0; s < options.samples; s++) {
        for (size_t k = 0; k < n; k++) {
            const size_t i = (k + s) % n;  // rotate who goes first
            if (!timing[i].status.ok()) continue;
            const double start = now_ms();
            for (int it = 0; it < iterations[i]; it++) {
                Status st = participants[i]();
                if (!st.ok()) {
                    timing[i].status = st;
                    break;
                }
            }
            samples[i].push_back((now_ms() - start) / iterations[i]);
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

}  // namespace gradtune::tooling
