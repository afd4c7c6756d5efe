// Which of a kernel's CPU targets this machine may run: Halide's own feature
// check, held below AVX-512 by GRADTUNE_MAX_CPU_ISA=avx2 (in the spirit of
// ONEDNN_MAX_CPU_ISA), so that the AVX2 baseline runs even on an AVX-512
// machine (tests of that path, and machines where AVX-512 clocks down).
// Dispatch asks it whether the tuned-only kernels can run; halide_call.cpp
// installs the limit with the other Halide handlers.
#pragma once

namespace gradtune::internal {

// Applies GRADTUNE_MAX_CPU_ISA to Halide's multi-target wrappers, once,
// thread-safe (an unknown value is reported on stderr and ignored).
void limit_cpu_features();

// How many times the CPU-feature check refused a target because of
// GRADTUNE_MAX_CPU_ISA (tests: proof that the limit was applied).
int cpu_targets_refused();

// Whether this CPU (under GRADTUNE_MAX_CPU_ISA) can use one of the targets the
// tuned-only kernels are compiled for (Kernel::tuned_targets_only): asked the
// way Halide's multi-target wrapper asks, once per process.
bool tuned_cpu_variants_usable();

// Whether this CPU (under GRADTUNE_MAX_CPU_ISA) runs the multi-target
// kernels' AVX2 baseline: it can use no AVX-512 target.
bool cpu_runs_avx2_baseline();

}  // namespace gradtune::internal
