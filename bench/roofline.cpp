#include "roofline.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace gradtune::bench {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 16 independent FMA chains keep both FMA ports busy despite the 4-cycle
// latency; the result is stored so the loop is not optimised away.
__attribute__((target("avx512f"))) double fma_loop_avx512(long iterations, float *sink) {
    __m512 acc[16];
    for (int i = 0; i < 16; i++) acc[i] = _mm512_set1_ps(static_cast<float>(i));
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (long it = 0; it < iterations; it++)
        for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 total = acc[0];
    for (int i = 1; i < 16; i++) total = _mm512_add_ps(total, acc[i]);
    *sink = _mm512_reduce_add_ps(total);
    return 2.0 * 16 * 16 * static_cast<double>(iterations);
}

__attribute__((target("avx2,fma"))) double fma_loop_avx2(long iterations, float *sink) {
    __m256 acc[12];
    for (int i = 0; i < 12; i++) acc[i] = _mm256_set1_ps(static_cast<float>(i));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (long it = 0; it < iterations; it++)
        for (int i = 0; i < 12; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 total = acc[0];
    for (int i = 1; i < 12; i++) total = _mm256_add_ps(total, acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, total);
    *sink = lanes[0];
    return 2.0 * 12 * 8 * static_cast<double>(iterations);
}

// Runs `work(thread)` on `threads` threads at once; returns the wall time.
template <typename Work>
double run_parallel(int threads, Work work) {
    std::vector<std::thread> pool;
    const double start = now_s();
    for (int t = 0; t < threads; t++) pool.emplace_back([&, t] { work(t); });
    for (std::thread &th : pool) th.join();
    return now_s() - start;
}

}  // namespace

Roofline measure_roofline(int threads) {
    Roofline r;
    r.threads = std::max(1, threads);
    const bool avx512 = __builtin_cpu_supports("avx512f");
    r.lanes = avx512 ? 16 : 8;
    std::vector<float> sink(r.threads);
    // Peak: the best of 5 runs of about 0.1 s.
    const long iterations = 20'000'000;
    for (int rep = 0; rep < 5; rep++) {
        std::vector<double> flops(r.threads);
        const double seconds = run_parallel(r.threads, [&](int t) {
            flops[t] = avx512 ? fma_loop_avx512(iterations, &sink[t]) : fma_loop_avx2(iterations, &sink[t]);
        });
        double total = 0;
        for (double f : flops) total += f;
        r.fma_gflops = std::max(r.fma_gflops, total / seconds / 1e9);
    }
    // DRAM: each thread copies its own 128 MB array (far beyond any cache),
    // counted as bytes read + bytes written; the best of 5.
    const size_t bytes = size_t{128} << 20;
    std::vector<std::unique_ptr<char[]>> from(r.threads), to(r.threads);
    for (int t = 0; t < r.threads; t++) {
        from[t].reset(new char[bytes]);
        to[t].reset(new char[bytes]);
        std::memset(from[t].get(), t + 1, bytes);  // fault the pages in outside the timing
        std::memset(to[t].get(), 0, bytes);
    }
    for (int rep = 0; rep < 5; rep++) {
        const double seconds = run_parallel(r.threads, [&](int t) { std::memcpy(to[t].get(), from[t].get(), bytes); });
        r.dram_gbs = std::max(r.dram_gbs, 2.0 * bytes * r.threads / seconds / 1e9);
    }
    return r;
}

}  // namespace gradtune::bench
