#include "search.h"

#include <cmath>

#include "records.h"  // knobs_text

namespace gradtune::tooling {

SeededSearch::SeededSearch(KnobSpace space, uint64_t seed, std::vector<GroupShape> shapes, std::deque<Knobs> seeds,
                           SearchKind kind)
    : sampler_(std::move(space), seed), shapes_(std::move(shapes)), queue_(std::move(seeds)), kind_(kind) {}

std::optional<Knobs> SeededSearch::next() {
    while (!exhausted()) {
        Knobs k = draw();
        if (tried_.insert(knobs_text(k)).second) {
            handed_out_++;
            return k;
        }
        exhausted_draws_++;
    }
    return std::nullopt;
}

Knobs SeededSearch::draw() {
    if (!queue_.empty()) {
        Knobs k = queue_.front();
        queue_.pop_front();
        return k;
    }
    const bool refine = kind_ == SearchKind::refine && handed_out_ >= kExploreFirst && handed_out_ % 2 == 0;
    if (!refine) return sampler_.random();
    const int target = refinements_++ % static_cast<int>(shapes_.size() + 1) - 1;
    const Setting *base = best(target);
    return base ? sampler_.neighbour(base->knobs, tried_) : sampler_.random();
}

void SeededSearch::give_back(const Knobs &knobs) {
    tried_.erase(knobs_text(knobs));
    queue_.push_front(knobs);
}

void SeededSearch::notify(const Trial &trial) {
    size_t s = 0;
    while (s < shapes_.size() && !(trial.shape == shapes_[s].shape && trial.padding == shapes_[s].padding)) s++;
    if (s == shapes_.size()) return;  // not a shape of this group
    const std::string text = knobs_text(trial.knobs);
    auto [it, inserted] = results_.try_emplace(text, Setting{trial.knobs, std::vector<ShapeResult>(shapes_.size())});
    if (inserted) order_.push_back(text);
    ShapeResult &r = it->second.shapes[s];
    r.measured = true;
    r.ok = trial.status == TrialStatus::ok && trial.median_ms > 0;
    const bool timed = r.ok || (trial.status == TrialStatus::slow && trial.median_ms > 0);
    r.speedup = timed ? trial.generic_median_ms / trial.median_ms : 0;
}

double SeededSearch::group_speedup(const Setting &setting) const {
    double log_sum = 0;
    for (const ShapeResult &r : setting.shapes) {
        // A "slow" result counts with its one-call estimate, so that the
        // geomean still ranks a setting that loses on one shape only.
        if (!r.measured || r.speedup <= 0) return 0;
        log_sum += std::log(r.speedup);
    }
    return std::exp(log_sum / static_cast<double>(setting.shapes.size()));
}

const SeededSearch::Setting *SeededSearch::best(int target) const {
    const Setting *best = nullptr;
    double best_speedup = 0;
    for (const std::string &text : order_) {
        const Setting &setting = results_.at(text);
        const double s = target < 0                  ? group_speedup(setting)
                         : setting.shapes[target].ok ? setting.shapes[target].speedup
                                                     : 0;
        if (s > best_speedup) {
            best_speedup = s;
            best = &setting;
        }
    }
    return best;
}

double SeededSearch::best_speedup() const {
    const Setting *b = best(-1);
    return b ? group_speedup(*b) : 0;
}

}  // namespace gradtune::tooling
