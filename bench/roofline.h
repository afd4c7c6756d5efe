// This machine's rooflines, measured by the benchmark itself before the
// suite runs (docs/benchmark-shapes.md section 2: FMA peak and DRAM
// bandwidth), so that every row can say what fraction of its bound it
// reaches.
#pragma once

namespace gradtune::bench {

struct Roofline {
    double fma_gflops = 0;  // float32 FMA peak over `threads` threads (2 FLOP per lane per FMA)
    double dram_gbs = 0;    // STREAM-style copy of arrays far larger than the caches: bytes read + written
    int threads = 0;
    int lanes = 0;          // float32 lanes of the vectors the peak was measured with (16: AVX-512, 8: AVX2)
};

// Takes about a second. `threads`: the kernels' thread count.
Roofline measure_roofline(int threads);

}  // namespace gradtune::bench
