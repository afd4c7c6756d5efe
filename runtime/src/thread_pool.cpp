#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GRADTUNE_PAUSE() _mm_pause()
#else
#define GRADTUNE_PAUSE() std::this_thread::yield()
#endif

extern "C" int halide_host_cpu_count();  // Halide's runtime (not in its public header)

namespace gradtune::internal {

namespace {

long spin_microseconds() {
    const char *text = std::getenv("GRADTUNE_SPIN_US");
    if (!text || !*text) return 100;
    char *end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return end && *end == '\0' && value >= 0 ? value : 100;
}

// True on the pool's workers and on a caller while it runs tasks: a parallel
// loop started there is nested.
thread_local bool running_tasks = false;

class Pool {
public:
    int run(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
        const int threads = std::min(pool_thread_count(), size);
        if (threads <= 1) return run_serially(user_context, task, min, size, closure);
        if (running_tasks || busy_.exchange(true, std::memory_order_acquire))
            return halide_default_do_par_for(user_context, task, min, size, closure);
        Claim mine;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const uint64_t previous = generation_.load(std::memory_order_relaxed);
            try {
                while (static_cast<int>(workers_.size()) < threads - 1)
                    workers_.emplace_back([this, previous] { work(previous); });
            } catch (const std::system_error &) {
                // No more threads: run with those there are (the caller alone at worst).
            }
            const int seats = std::min(threads - 1, static_cast<int>(workers_.size()));
            job_ = {task, user_context, closure, min, size, seats};
            joined_ = 0;
            mine = {job_, previous + 1};
            error_.store(0, std::memory_order_relaxed);
            remaining_.store(size, std::memory_order_relaxed);
            next_.store(mine.generation << 32, std::memory_order_relaxed);
            generation_.store(mine.generation, std::memory_order_release);
        }
        if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
        running_tasks = true;
        run_claimed(mine);
        running_tasks = false;
        // The tasks the workers claimed: short, so spin, then yield.
        for (int spins = 0; remaining_.load(std::memory_order_acquire) > 0; spins++) {
            if (spins < 4096) {
                GRADTUNE_PAUSE();
            } else {
                std::this_thread::yield();
            }
        }
        const int error = error_.load(std::memory_order_relaxed);
        busy_.store(false, std::memory_order_release);
        return error;
    }

    static int run_serially(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
        for (int i = 0; i < size; i++) {
            if (int result = task(user_context, min + i, closure)) return result;
        }
        return 0;
    }

private:
    struct Job {
        halide_task_t task = nullptr;
        void *user_context = nullptr;
        uint8_t *closure = nullptr;
        int min = 0, size = 0;
        int worker_seats = 0;  // how many workers may join (Halide's thread count - 1)
    };
    // A thread's view of a job: its copy and its generation.
    struct Claim {
        Job job;
        uint64_t generation = 0;
    };

    // Claims the job's iterations one at a time: next_ holds the generation
    // (high 32 bits) and the next iteration (low 32 bits), so that a thread
    // holding a finished job's generation claims nothing of a later job.
    void run_claimed(const Claim &claim) {
        uint64_t current = next_.load(std::memory_order_relaxed);
        for (;;) {
            if ((current >> 32) != (claim.generation & 0xffffffffu)) return;
            const int i = static_cast<int>(current & 0xffffffffu);
            if (i >= claim.job.size) return;
            if (!next_.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel)) continue;
            if (int result = claim.job.task(claim.job.user_context, claim.job.min + i, claim.job.closure)) {
                int none = 0;
                error_.compare_exchange_strong(none, result, std::memory_order_relaxed);
            }
            remaining_.fetch_sub(1, std::memory_order_acq_rel);
            current = next_.load(std::memory_order_relaxed);
        }
    }

    // A worker, created while the job after `seen` is being published.
    void work(uint64_t seen) {
        running_tasks = true;
        const auto spin = std::chrono::microseconds(spin_microseconds());
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            // Wait for a new job: spin without the lock (yielding to any other
            // runnable thread), then sleep.
            lock.unlock();
            const auto start = std::chrono::steady_clock::now();
            while (generation_.load(std::memory_order_acquire) == seen &&
                   std::chrono::steady_clock::now() - start < spin) {
                for (int i = 0; i < 64; i++) GRADTUNE_PAUSE();
                std::this_thread::yield();
            }
            lock.lock();
            if (generation_.load(std::memory_order_relaxed) == seen) {
                sleeping_.fetch_add(1, std::memory_order_acq_rel);
                wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
                sleeping_.fetch_sub(1, std::memory_order_acq_rel);
            }
            seen = generation_.load(std::memory_order_relaxed);
            if (joined_ >= job_.worker_seats) continue;  // the loop has its threads
            joined_++;
            const Claim claim{job_, seen};
            lock.unlock();
            run_claimed(claim);
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<std::thread> workers_;  // never joined: the pool lives as long as the process
    Job job_;                           // the current job (under mutex_)
    int joined_ = 0;                    // under mutex_: workers that joined job_
    std::atomic<uint64_t> generation_{0};
    std::atomic<uint64_t> next_{0};
    std::atomic<int> remaining_{0};
    std::atomic<int> error_{0};
    std::atomic<int> sleeping_{0};
    std::atomic<bool> busy_{false};
};

// One loop on a runner's threads. Shared by the caller and its helpers: a
// helper that starts after the loop is done finds no iteration to claim and
// touches nothing of the caller's (the closure may be gone by then).
struct LentLoop {
    halide_task_t task;
    void *user_context;
    uint8_t *closure;
    int min, size;
    std::atomic<int> next{0};
    std::atomic<int> remaining;
    std::atomic<int> error{0};
    std::mutex mutex;
    std::condition_variable done;

    LentLoop(halide_task_t t, void *context, uint8_t *c, int first, int count)
        : task(t), user_context(context), closure(c), min(first), size(count), remaining(count) {}

    void claim() {
        for (int i = next.fetch_add(1, std::memory_order_relaxed); i < size;
             i = next.fetch_add(1, std::memory_order_relaxed)) {
            if (int result = task(user_context, min + i, closure)) {
                int none = 0;
                error.compare_exchange_strong(none, result, std::memory_order_relaxed);
            }
            if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(mutex);  // so that wait() cannot miss it
                done.notify_all();
            }
        }
    }

    // The iterations helpers claimed and still run: spin a little (they are
    // usually short), then sleep: the runner's other work needs the core.
    void wait() {
        for (int spins = 0; spins < 2048; spins++) {
            if (remaining.load(std::memory_order_acquire) == 0) return;
            GRADTUNE_PAUSE();
        }
        std::unique_lock<std::mutex> lock(mutex);
        done.wait(lock, [this] { return remaining.load(std::memory_order_acquire) == 0; });
    }
};

}  // namespace

int runner_do_par_for(ParallelRunner &runner, void *user_context, halide_task_t task, int min, int size,
                      uint8_t *closure) {
    const int helpers = std::min(runner.Threads(), size) - 1;
    if (helpers <= 0) return Pool::run_serially(user_context, task, min, size, closure);
    auto loop = std::make_shared<LentLoop>(task, user_context, closure, min, size);
    for (int i = 0; i < helpers; i++) runner.Schedule([loop] { loop->claim(); });
    loop->claim();
    loop->wait();
    return loop->error.load(std::memory_order_relaxed);
}

int pool_thread_count() {
    const int set = halide_get_num_threads();
    if (set > 0) return set;
    // Halide's default, as its own pool would read it when it starts (it
    // never starts while this pool runs the loops).
    static const int fallback = [] {
        const char *text = std::getenv("HL_NUM_THREADS");
        if (!text) text = std::getenv("HL_NUMTHREADS");  // Halide's legacy name
        const int n = text ? std::atoi(text) : halide_host_cpu_count();
        return std::clamp(n, 1, 256);
    }();
    return fallback;
}

int pool_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
    // Created on first use and never destroyed: kernels may run from static
    // destructors, and workers blocked in wait() need no joining at exit.
    static Pool *pool = new Pool;
    return pool->run(user_context, task, min, size, closure);
}

}  // namespace gradtune::internal

namespace gradtune {

int PoolThreads() { return internal::pool_thread_count(); }

}  // namespace gradtune
