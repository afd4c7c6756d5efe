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

}  // namespace gradtune::internal
