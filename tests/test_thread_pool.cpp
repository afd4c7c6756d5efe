// The thread pool of the kernels' parallel loops (runtime/src/thread_pool.h):
// halide_do_par_for's contract under the conditions the runtime meets it in.
#include <HalideRuntime.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <climits>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "thread_pool.h"

using gradtune::internal::pool_do_par_for;

namespace {

// A loop's closure: a count per iteration, the threads that ran them, and an
// iteration that fails.
struct Counts {
    std::vector<std::atomic<int>> runs;
    int min = 0;
    int fail_at = INT_MIN;  // the iteration that fails: none
    std::mutex mutex;
    std::set<std::thread::id> threads;
    explicit Counts(int size, int min_ = 0) : runs(size), min(min_) {}
};

int count_task(void *, int i, uint8_t *closure) {
    auto *c = reinterpret_cast<Counts *>(closure);
    c->runs[i - c->min]++;
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->threads.insert(std::this_thread::get_id());
    }
    return i == c->fail_at ? 7 : 0;
}

bool each_ran_once(const Counts &c) {
    return std::all_of(c.runs.begin(), c.runs.end(), [](const std::atomic<int> &n) { return n == 1; });
}

// Restores Halide's thread count when a test ends.
struct ThreadCount {
    int previous;
    explicit ThreadCount(int n) : previous(halide_set_num_threads(n)) {}
    ~ThreadCount() { halide_set_num_threads(previous); }
};

}  // namespace

TEST_CASE("thread pool: every iteration runs once, from any min, for any size", "[thread_pool]") {
    ThreadCount threads(2);
    for (int size : {1, 2, 3, 7, 64, 1000}) {
        for (int min : {0, -5, 12}) {
            Counts c(size, min);
            REQUIRE(pool_do_par_for(nullptr, count_task, min, size, reinterpret_cast<uint8_t *>(&c)) == 0);
            INFO("size " << size << " min " << min);
            CHECK(each_ran_once(c));
        }
    }
    Counts none(0);
    CHECK(pool_do_par_for(nullptr, count_task, 0, 0, reinterpret_cast<uint8_t *>(&none)) == 0);
}

TEST_CASE("thread pool: a failing iteration's result is returned, the others still run once at most", "[thread_pool]") {
    ThreadCount threads(2);
    Counts c(100);
    c.fail_at = 37;
    CHECK(pool_do_par_for(nullptr, count_task, 0, 100, reinterpret_cast<uint8_t *>(&c)) == 7);
    CHECK(c.runs[37] == 1);
    CHECK(std::all_of(c.runs.begin(), c.runs.end(), [](const std::atomic<int> &n) { return n <= 1; }));
}

TEST_CASE("thread pool: Halide's thread count bounds the threads of a loop", "[thread_pool]") {
    for (int n : {1, 2, 3}) {
        ThreadCount threads(n);
        Counts c(200);
        REQUIRE(pool_do_par_for(nullptr, count_task, 0, 200, reinterpret_cast<uint8_t *>(&c)) == 0);
        INFO("threads " << n);
        CHECK(each_ran_once(c));
        CHECK(static_cast<int>(c.threads.size()) <= n);
        if (n == 1) CHECK(*c.threads.begin() == std::this_thread::get_id());
    }
}

namespace {

// An outer loop whose iterations each run an inner parallel loop.
struct Nested {
    std::deque<Counts> inner;  // not moved: the counts are atomics
    Nested() {
        for (int i = 0; i < 6; i++) inner.emplace_back(50);
    }
};

int outer_task(void *user_context, int i, uint8_t *closure) {
    auto *n = reinterpret_cast<Nested *>(closure);
    return pool_do_par_for(user_context, count_task, 0, 50, reinterpret_cast<uint8_t *>(&n->inner[i]));
}

}  // namespace

TEST_CASE("thread pool: nested loops and loops of concurrent callers complete", "[thread_pool]") {
    ThreadCount threads(2);
    Nested nested;
    REQUIRE(pool_do_par_for(nullptr, outer_task, 0, 6, reinterpret_cast<uint8_t *>(&nested)) == 0);
    for (const Counts &c : nested.inner) CHECK(each_ran_once(c));

    // Four application threads at once: one holds the pool, the others run
    // on Halide's own pool; every loop completes with each iteration once.
    std::atomic<int> wrong{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 4; t++) {
        callers.emplace_back([&wrong] {
            for (int round = 0; round < 200; round++) {
                Counts c(33);
                if (pool_do_par_for(nullptr, count_task, 0, 33, reinterpret_cast<uint8_t *>(&c)) != 0 ||
                    !each_ran_once(c))
                    wrong++;
            }
        });
    }
    for (std::thread &t : callers) t.join();
    CHECK(wrong == 0);
}
