// Searching one structure group's knob space: which setting to measure next.
// A strategy proposes settings and learns from results; it never compiles or
// measures. The tuner's loop (tune.cpp) hands its proposals to the batch
// runner (batch.h) and tells it every result, an earlier run's logged ones
// included. tests/test_search.cpp drives strategies with a fake measurer.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "candidates.h"  // Sampler
#include "knob_space.h"
#include "trials.h"

namespace gradtune::tooling {

// A shape of the group, as trials name it.
struct GroupShape {
    std::map<std::string, int64_t> shape;
    std::string padding;
};

class SearchStrategy {
public:
    virtual ~SearchStrategy() = default;
    // The next setting to measure, never one handed out before; nullopt when
    // the space looks exhausted (exhausted() then says so).
    virtual std::optional<Knobs> next() = 0;
    virtual bool exhausted() const = 0;
    // A setting handed out but not measured (a compile or measuring child the
    // budget cut short): it is handed out again, first.
    virtual void give_back(const Knobs &knobs) = 0;
    // One result: a setting on one of the group's shapes.
    virtual void notify(const Trial &trial) = 0;
    // The best setting so far by geomean speedup over the generic variant on
    // every shape of the group (0 while none is measured on all of them).
    virtual double best_speedup() const = 0;
};

enum class SearchKind {
    refine,  // seeds, random draws, then also one-knob moves from the bests
    random,  // seeds, then random draws only
};

// The tuner's strategy. First the seeds, in order: the space's defaults, each
// other algorithm's starting point, the structure default and every class's
// records (tune.cpp). Then random draws; with SearchKind::refine, from the
// seventh draw on every other one is a one-knob neighbour of a best, in turn
// the group's (geomean over its shapes) and each shape's own, since records
// are kept per shape and one setting rarely wins on every shape of a group.
// Neighbours are walked before any jump (Sampler::neighbour).
class SeededSearch : public SearchStrategy {
public:
    SeededSearch(KnobSpace space, uint64_t seed, std::vector<GroupShape> shapes, std::deque<Knobs> seeds,
                 SearchKind kind = SearchKind::refine);
    std::optional<Knobs> next() override;
    bool exhausted() const override { return exhausted_draws_ > kMaxRepeatedDraws; }
    void give_back(const Knobs &knobs) override;
    void notify(const Trial &trial) override;
    double best_speedup() const override;

private:
    static constexpr int kExploreFirst = 6;        // draws before any refinement
    static constexpr int kMaxRepeatedDraws = 200;  // draws of tried settings before giving up
    // A setting's result on one shape.
    struct ShapeResult {
        bool measured = false;
        bool ok = false;     // timed: a shape's best counts only these
        double speedup = 0;  // generic / candidate; for "slow", the one-call estimate
    };
    struct Setting {
        Knobs knobs;
        std::vector<ShapeResult> shapes;
    };
    Knobs draw();
    double group_speedup(const Setting &s) const;
    // The best setting on shape `target`, or over the group for -1; nullptr while none.
    const Setting *best(int target) const;

    Sampler sampler_;
    std::vector<GroupShape> shapes_;
    std::deque<Knobs> queue_;
    SearchKind kind_;
    std::set<std::string> tried_;     // knobs_text of every setting handed out
    std::vector<std::string> order_;  // knobs_text of the settings with results, first result first
    std::map<std::string, Setting> results_;
    int handed_out_ = 0, refinements_ = 0, exhausted_draws_ = 0;
};

}  // namespace gradtune::tooling
