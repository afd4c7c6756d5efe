// Candidates: knob settings of one op/structure, sampled from the knob space
// and compiled by the build's own generator executable with the build's own
// target string into a shared object the measuring process loads.
#pragma once

#include <random>
#include <set>
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
    // The library's own variant with these knobs, measured as shipped instead
    // of compiled again (structure defaults and every class's records are
    // compiled into the library); empty for a candidate that was compiled.
    std::string library_variant;
    std::string error;          // the generator's or linker's last output lines
    double compile_s = 0;
    bool timed_out = false;     // the generator was killed after the timeout
};

// Compiles `candidates`, at most `jobs` at a time, into `work_dir`. A
// generator run longer than `timeout_s` is killed (some heavily unrolled
// settings take minutes to compile; they are logged as compile errors).
std::vector<CompiledCandidate> compile_candidates(const std::vector<Candidate> &candidates,
                                                  const std::string &work_dir, int jobs, double timeout_s = 120);

// Removes what compile_candidates left in `work_dir` for `c` (the shared
// object, the object file and the generator's log).
void remove_compiled(const CompiledCandidate &c, const std::string &work_dir);

// Runs argv with stdout and stderr into `log`; returns the exit status
// (128 + the signal for a child a signal ended), -1 when it could not run, or
// kProcessTimedOut when it was killed after `timeout_s` (0: none).
constexpr int kProcessTimedOut = -2;
int run_process(const std::vector<std::string> &argv, const std::string &log, double timeout_s = 0);

// Draws legal knob settings: uniformly at random, near a given setting (one
// or two knobs moved to a neighbouring or random legal value), or the next
// untried setting of a given one's neighbourhood.
class Sampler {
public:
    Sampler(KnobSpace space, uint64_t seed) : space_(std::move(space)), rng_(seed) {}
    Knobs random();
    Knobs mutate(const Knobs &base);
    // Hill climbing: a legal setting that differs from `base` in one knob,
    // moved to the next value up or down its domain, and whose knobs_text is
    // not in `tried`, in random order. Once every such neighbour is tried
    // (`base` is a local optimum) it jumps: mutate(base). A best whose
    // neighbours are all measured is thus certain to be found, one knob at a
    // time, which random moves are not: a 7x7x512 input gradient's record
    // ran one parallel task because its channel_tasks=1 neighbour, 1.9x
    // faster, was never drawn.
    Knobs neighbour(const Knobs &base, const std::set<std::string> &tried);
    const KnobSpace &space() const { return space_; }

private:
    KnobSpace space_;
    std::mt19937_64 rng_;
};

}  // namespace gradtune::tooling
