// The tuner's search strategy, driven by a fake measurer: a made-up speedup
// per setting and shape instead of compiled and timed kernels.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "records.h"  // knobs_text
#include "search.h"

using namespace gradtune;
using namespace gradtune::tooling;

namespace {

// Two knobs of 8 values each: 64 settings.
KnobSpace grid_space() {
    KnobSpace space;
    space.knobs = {{"a", {1, 2, 3, 4, 5, 6, 7, 8}, 1, "first"}, {"b", {1, 2, 3, 4, 5, 6, 7, 8}, 1, "second"}};
    return space;
}

const std::vector<GroupShape> kTwoShapes = {{{{"N", 1}}, "SAME"}, {{{"N", 32}}, "SAME"}};

// The fake measurer: a trial of `knobs` on shape `s` with the given speedup
// over a generic variant that takes 10 ms.
Trial measured(const Knobs &knobs, size_t s, double speedup, TrialStatus status = TrialStatus::ok) {
    Trial t;
    t.knobs = knobs;
    t.shape = kTwoShapes[s].shape;
    t.padding = kTwoShapes[s].padding;
    t.status = status;
    t.generic_median_ms = 10;
    t.median_ms = speedup > 0 ? 10 / speedup : 0;
    return t;
}

using Speedup = std::function<double(const Knobs &, size_t shape)>;

// Runs the search for at most `rounds` proposals, measuring each on both
// shapes; returns how many proposals it took until every setting of `goals`
// was handed out (0: not within `rounds`).
int proposals_until(SearchStrategy &search, const Speedup &speedup, std::set<Knobs> goals, int rounds) {
    for (int i = 1; i <= rounds; i++) {
        std::optional<Knobs> k = search.next();
        if (!k) return 0;
        for (size_t s = 0; s < kTwoShapes.size(); s++) search.notify(measured(*k, s, speedup(*k, s)));
        goals.erase(*k);
        if (goals.empty()) return i;
    }
    return 0;
}

// Proposals until `goals` are found, summed over ten seeds, for each kind.
std::pair<int, int> refine_and_random(const Speedup &speedup, const std::set<Knobs> &goals) {
    int refine_total = 0, random_total = 0;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        SeededSearch refine(grid_space(), seed, kTwoShapes, {{{"a", 1}, {"b", 8}}});
        SeededSearch random(grid_space(), seed, kTwoShapes, {{{"a", 1}, {"b", 8}}}, SearchKind::random);
        const int r = proposals_until(refine, speedup, goals, 64), u = proposals_until(random, speedup, goals, 64);
        refine_total += r ? r : 65;
        random_total += u ? u : 65;
    }
    return {refine_total, random_total};
}

}  // namespace

TEST_CASE("the search hands out its seeds first, in order, and every setting once", "[search]") {
    const Knobs seed1{{"a", 4}, {"b", 4}}, seed2{{"a", 2}, {"b", 7}};
    SeededSearch search(grid_space(), 1, kTwoShapes, {seed1, seed2, seed1});
    CHECK(search.next() == seed1);
    CHECK(search.next() == seed2);
    std::set<std::string> seen{knobs_text(seed1), knobs_text(seed2)};
    int handed_out = 2;
    while (std::optional<Knobs> k = search.next()) {
        CHECK(seen.insert(knobs_text(*k)).second);  // the repeated seed was skipped
        REQUIRE(++handed_out <= 64);
    }
    // It gives up after 200 draws of settings handed out before.
    CHECK(search.exhausted());
    CHECK(handed_out > 32);
}

TEST_CASE("a setting given back is handed out again, first", "[search]") {
    SeededSearch search(grid_space(), 1, kTwoShapes, {});
    const Knobs first = *search.next();
    const Knobs second = *search.next();
    search.give_back(second);
    search.give_back(first);
    CHECK(search.next() == first);
    CHECK(search.next() == second);
}

TEST_CASE("the group's best is the geomean over its shapes, failures and missing shapes rank last", "[search]") {
    SeededSearch search(grid_space(), 1, kTwoShapes, {});
    CHECK(search.best_speedup() == 0);
    const Knobs a{{"a", 1}, {"b", 1}}, b{{"a", 2}, {"b", 1}}, c{{"a", 3}, {"b", 1}}, d{{"a", 4}, {"b", 1}};
    search.notify(measured(a, 0, 2));
    search.notify(measured(a, 1, 8));  // geomean 4
    search.notify(measured(b, 0, 9));  // one shape only
    search.notify(measured(c, 0, 50));
    search.notify(measured(c, 1, 0, TrialStatus::wrong));
    CHECK(search.best_speedup() == Approx(4));
    // A "slow" trial counts with its one-call estimate.
    search.notify(measured(d, 0, 5, TrialStatus::slow));
    search.notify(measured(d, 1, 5));
    CHECK(search.best_speedup() == Approx(5));
    // A trial of a shape outside the group is not counted.
    Trial other = measured(b, 1, 100);
    other.shape = {{"N", 7}};
    search.notify(other);
    CHECK(search.best_speedup() == Approx(5));
}

TEST_CASE("refining climbs to the best setting of a unimodal space quickly", "[search]") {
    // One peak at a=6, b=3 on both shapes. A search that climbs reaches it in
    // far fewer proposals than the 64 settings of the space; random draws
    // need about half of them.
    const Speedup speedup = [](const Knobs &k, size_t) {
        return 20.0 - std::abs(k.at("a") - 6) - std::abs(k.at("b") - 3);
    };
    const auto [refine, random] = refine_and_random(speedup, {{{"a", 6}, {"b", 3}}});
    INFO("proposals over ten seeds: refine " << refine << ", random " << random);
    CHECK(refine <= 10 * 20);
    CHECK(refine < random);
}

TEST_CASE("refining also climbs from each shape's own best", "[search]") {
    // The shapes disagree: shape 0 peaks at a=2, b=2, shape 1 at a=7, b=7,
    // and the group's geomean is flat between them; each peak is still found.
    const Speedup speedup = [](const Knobs &k, size_t s) {
        const int peak = s == 0 ? 2 : 7;
        return std::exp(-0.5 * (std::abs(k.at("a") - peak) + std::abs(k.at("b") - peak)));
    };
    const auto [refine, random] = refine_and_random(speedup, {{{"a", 2}, {"b", 2}}, {{"a", 7}, {"b", 7}}});
    INFO("proposals over ten seeds: refine " << refine << ", random " << random);
    CHECK(refine < random);
}
