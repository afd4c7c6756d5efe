// Candidates: knob settings of one op/structure, sampled from the knob space
// and compiled by the build's own generator executable with the build's own
// target string into a shared object the measuring process loads.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "knob_space.h"

namespace gradtune::tooling {

struct Candidate {
    std::string op;
    Device device = Device::cpu;
    Structure structure;
    Knobs knobs;
    // A C identifier unique to (op, device, structure, knobs).
    std::string function_name() const;
};

struct CompiledCandidate {
    Candidate candidate;
    std::string shared_object;  // empty when compilation failed
    std::string error;          // the generator's or linker's last output lines
    double compile_s = 0;
    bool timed_out = false;     // the generator was killed after the timeout
};

// Compiles `candidates`, at most `jobs` at a time, into `work_dir`. A
// generator run longer than `timeout_s` is killed (some heavily unrolled
// settings take minutes to compile; they are logged as compile errors).
std::vector<CompiledCandidate> compile_candidates(const std::vector<Candidate> &candidates,
                                                  const std::string &work_dir, int jobs, double timeout_s = 120);

// Runs argv with stdout and stderr into `log`; returns the exit status, -1
// when it could not run, or -2 when it was killed after `timeout_s` (0: none).
int run_process(const std::vector<std::string> &argv, const std::string &log, double timeout_s = 0);

// Draws legal knob settings: uniformly at random, or near a given setting
// (one or two knobs moved to a neighbouring or random legal value).
class Sampler {
public:
    Sampler(KnobSpace space, uint64_t seed) : space_(std::move(space)), rng_(seed) {}
    Knobs random();
    Knobs mutate(const Knobs &base);
    const KnobSpace &space() const { return space_; }

private:
    KnobSpace space_;
    std::mt19937_64 rng_;
};

}  // namespace gradtune::tooling
