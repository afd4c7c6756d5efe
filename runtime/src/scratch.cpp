#include "scratch.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "halide_call.h"

namespace gradtune::internal {

namespace {

struct Scratch {
    void *data = nullptr;
    size_t capacity = 0;
    ~Scratch() { std::free(data); }
    void *get(size_t bytes) {
        if (bytes > capacity) {
            std::free(data);
            capacity = std::max(bytes, capacity + capacity / 2);
            // Aligned as tensors are (kTensorAlignment, 64 bytes: a vector load).
            data = std::aligned_alloc(64, (capacity + 63) / 64 * 64);
            if (!data) capacity = 0;
        }
        return data;
    }
};

int run_task(void *, int i, uint8_t *closure) {
    (*reinterpret_cast<const std::function<void(int)> *>(closure))(i);
    return 0;
}

}  // namespace

void *scratch_buffer(ScratchBuffer which, size_t bytes) {
    thread_local Scratch scratch[static_cast<int>(ScratchBuffer::count)];
    return scratch[static_cast<int>(which)].get(bytes);
}

void parallel_tasks(int count, const std::function<void(int)> &task, ParallelRunner *parallel) {
    install_halide_handlers();
    CallContext context;
    context.parallel = parallel;
    halide_do_par_for(&context, &run_task, 0, count,
                      reinterpret_cast<uint8_t *>(const_cast<std::function<void(int)> *>(&task)));
}

void parallel_row_chunks(int64_t count, int64_t row_bytes, const std::function<void(int64_t)> &row,
                         ParallelRunner *parallel) {
    const int64_t per_task = std::max<int64_t>(1, (int64_t{64} << 10) / std::max<int64_t>(1, row_bytes));
    parallel_tasks(static_cast<int>((count + per_task - 1) / per_task),
                   [&](int task) {
                       const int64_t end = std::min(count, (task + 1) * per_task);
                       for (int64_t i = task * per_task; i < end; i++) row(i);
                   },
                   parallel);
}

}  // namespace gradtune::internal
