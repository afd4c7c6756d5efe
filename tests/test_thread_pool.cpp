// The thread pool of the kernels' parallel loops (runtime/src/thread_pool.h):
// halide_do_par_for's contract under the conditions the runtime meets it in.
#include <HalideRuntime.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <climits>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gradtune/conv2d_backprop_input.h"
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

// --- Loops on threads a caller lends (RunOptions::parallel) ------------------

namespace {

using gradtune::internal::runner_do_par_for;

// A caller's pool: `threads` workers that run scheduled work in order; or,
// with `hold`, none until released (a pool busy with the caller's other
// work), to show that a loop never waits for a helper to start.
class TestRunner : public gradtune::ParallelRunner {
public:
    TestRunner(int threads, bool hold = false) : threads_(threads), held_(hold) {
        for (int i = 0; i < threads - 1; i++) workers_.emplace_back([this] { work(); });
    }
    ~TestRunner() override {
        release();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        ready_.notify_all();
        for (std::thread &t : workers_) t.join();
    }
    int Threads() const override { return threads_; }
    void Schedule(std::function<void()> work) override {
        scheduled++;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.push_back(std::move(work));
        }
        ready_.notify_one();
    }
    void release() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            held_ = false;
        }
        ready_.notify_all();
    }
    // Blocks until every scheduled work item has run.
    void drain() {
        std::unique_lock<std::mutex> lock(mutex_);
        idle_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
    }
    std::atomic<int> scheduled{0};

private:
    void work() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] { return stop_ || (!held_ && !queue_.empty()); });
            if (queue_.empty()) return;
            std::function<void()> item = std::move(queue_.front());
            queue_.pop_front();
            running_++;
            lock.unlock();
            item();
            lock.lock();
            running_--;
            idle_.notify_all();
        }
    }
    int threads_;
    bool held_;
    bool stop_ = false;
    int running_ = 0;
    std::mutex mutex_;
    std::condition_variable ready_, idle_;
    std::deque<std::function<void()>> queue_;
    std::vector<std::thread> workers_;
};

}  // namespace

TEST_CASE("lent threads: every iteration runs once, on the caller and the runner's threads", "[thread_pool]") {
    for (int threads : {1, 2, 4}) {
        TestRunner runner(threads);
        for (int size : {0, 1, 2, 3, 64, 1000}) {
            Counts c(size, -3);
            REQUIRE(runner_do_par_for(runner, nullptr, count_task, -3, size, reinterpret_cast<uint8_t *>(&c)) == 0);
            INFO("threads " << threads << " size " << size);
            CHECK(each_ran_once(c));
            CHECK(static_cast<int>(c.threads.size()) <= threads);
        }
        // At most Threads() - 1 helpers per loop, none for a single thread.
        CHECK(runner.scheduled <= (threads - 1) * 5);
        if (threads == 1) CHECK(runner.scheduled == 0);
        runner.drain();
    }
}

TEST_CASE("lent threads: a failing iteration's result is returned", "[thread_pool]") {
    TestRunner runner(2);
    Counts c(100);
    c.fail_at = 63;
    CHECK(runner_do_par_for(runner, nullptr, count_task, 0, 100, reinterpret_cast<uint8_t *>(&c)) == 7);
    CHECK(c.runs[63] == 1);
    CHECK(std::all_of(c.runs.begin(), c.runs.end(), [](const std::atomic<int> &n) { return n <= 1; }));
    runner.drain();
}

TEST_CASE("lent threads: a loop never waits for a helper to start, and a late helper does nothing", "[thread_pool]") {
    // The runner's threads are all busy (held): the caller runs every
    // iteration itself and returns; the helpers run after the loop's
    // closure is gone and must not touch it.
    TestRunner runner(3, /*hold=*/true);
    for (int round = 0; round < 20; round++) {
        auto c = std::make_unique<Counts>(50);
        REQUIRE(runner_do_par_for(runner, nullptr, count_task, 0, 50, reinterpret_cast<uint8_t *>(c.get())) == 0);
        CHECK(each_ran_once(*c));
        CHECK(c->threads == std::set<std::thread::id>{std::this_thread::get_id()});
    }
    CHECK(runner.scheduled == 40);
    runner.release();
    runner.drain();  // 40 late helpers, nothing to claim
}

namespace {

struct LentNested {
    TestRunner *runner;
    Nested nested;
};

int lent_outer_task(void *user_context, int i, uint8_t *closure) {
    auto *n = reinterpret_cast<LentNested *>(closure);
    return runner_do_par_for(*n->runner, user_context, count_task, 0, 50,
                             reinterpret_cast<uint8_t *>(&n->nested.inner[i]));
}

}  // namespace

TEST_CASE("lent threads: nested loops and concurrent callers share the runner and complete", "[thread_pool]") {
    TestRunner runner(2);
    LentNested n{&runner, {}};
    REQUIRE(runner_do_par_for(runner, nullptr, lent_outer_task, 0, 6, reinterpret_cast<uint8_t *>(&n)) == 0);
    for (const Counts &c : n.nested.inner) CHECK(each_ran_once(c));
    std::atomic<int> wrong{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 3; t++) {
        callers.emplace_back([&] {
            for (int round = 0; round < 100; round++) {
                Counts c(33);
                if (runner_do_par_for(runner, nullptr, count_task, 0, 33, reinterpret_cast<uint8_t *>(&c)) != 0 ||
                    !each_ran_once(c))
                    wrong++;
            }
        });
    }
    for (std::thread &t : callers) t.join();
    CHECK(wrong == 0);
    runner.drain();
}

TEST_CASE("lent threads: an op call runs its parallel loops on RunOptions::parallel, with the same result",
          "[thread_pool]") {
    using gradtune::DataType;
    using gradtune::Tensor;
    std::vector<float> filter_values(3 * 3 * 16 * 24), dy_values(4 * 20 * 20 * 24);
    for (size_t i = 0; i < filter_values.size(); i++) filter_values[i] = static_cast<float>(i % 7) - 3.0f;
    for (size_t i = 0; i < dy_values.size(); i++) dy_values[i] = static_cast<float>(i % 11) * 0.25f - 1.0f;
    const Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int32_t>{4, 20, 20, 16});
    const Tensor filter = Tensor::FromVector(DataType::kFloat, {3, 3, 16, 24}, filter_values);
    const Tensor dy = Tensor::FromVector(DataType::kFloat, {4, 20, 20, 24}, dy_values);
    Tensor own, lent;
    REQUIRE(gradtune::Conv2DBackpropInput::Compute(sizes, filter, dy, {1, 1, 1, 1}, "SAME", &own).ok());
    TestRunner runner(2);
    gradtune::RunOptions options;
    options.parallel = &runner;
    REQUIRE(gradtune::Conv2DBackpropInput::Compute(sizes, filter, dy, {1, 1, 1, 1}, "SAME", &lent,
                                                   gradtune::Conv2DBackpropInput::Attrs(), options)
                .ok());
    CHECK(runner.scheduled > 0);
    REQUIRE(own.num_elements() == lent.num_elements());
    CHECK(std::equal(own.as<float>(), own.as<float>() + own.num_elements(), lent.as<float>()));
    runner.drain();
}
