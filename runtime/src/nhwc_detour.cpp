#include "nhwc_detour.h"

#include <algorithm>
#include <cstdint>

#include "dilation_phases.h"
#include "dispatch.h"
#include "group_blocks.h"
#include "scratch.h"

namespace gradtune::internal {

CallInfo nhwc_twin(const CallInfo &info) {
    CallInfo twin = info;
    twin.data_format = "NHWC";
    return twin;
}

bool detour_to_nhwc(const CallInfo &info, const RunOptions &options) {
    if (info.data_format != "NCHW" || options.device != Device::cpu || !options.variant.empty() ||
        options.external_kernel)
        return false;
    Selection own, twin;
    if (!select_kernel(info, options, &own).ok() || own.tier != Tier::generic) return false;
    const CallInfo nhwc = nhwc_twin(info);
    return select_kernel(nhwc, options, &twin).ok() &&
           (twin.tier != Tier::generic || detour_to_group_blocks(nhwc, options) || detour_to_phases(nhwc, options));
}

namespace {

// A transpose of `planes` row-major rows x cols matrices, as parallel tasks
// of kChunk columns of one plane each: a task copies its columns in 16 x 16
// blocks, each block's writes along 16 contiguous elements of a row of the
// result and its reads from 16 rows of the source, cache lines it reuses for
// all 16 of the block's columns. (Element by element along a row of the
// source, each write strode a whole row of the result, 4 KB for 1024
// positions, every one to the same cache set: 3.9 ms to transpose a
// 32x32x96 batch of 8 and back, against 0.14 ms for the kernel it served.
// Blocked, 0.43 ms each way on one core; memcpy takes 0.23 ms.)
struct Transpose {
    DataType dtype;
    const void *from;
    void *to;
    int64_t planes, rows, cols, chunks;  // chunks: tasks per plane
    static constexpr int64_t kBlock = 16, kChunk = 64;

    template <typename T>
    void run_chunk(int64_t plane, int64_t chunk) const {
        const T *src = static_cast<const T *>(from) + plane * rows * cols;
        T *dst = static_cast<T *>(to) + plane * rows * cols;
        const int64_t c_end = std::min(cols, (chunk + 1) * kChunk);
        for (int64_t c0 = chunk * kChunk; c0 < c_end; c0 += kBlock)
            for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
                const int64_t c1 = std::min(c_end, c0 + kBlock), r1 = std::min(rows, r0 + kBlock);
                for (int64_t c = c0; c < c1; c++)
                    for (int64_t r = r0; r < r1; r++) dst[c * rows + r] = src[r * cols + c];
            }
    }

    void run(int i) const {
        const int64_t plane = i / chunks, chunk = i % chunks;
        switch (DataTypeSize(dtype)) {
        case 2: run_chunk<uint16_t>(plane, chunk); break;
        case 4: run_chunk<uint32_t>(plane, chunk); break;
        default: run_chunk<uint64_t>(plane, chunk); break;
        }
    }
};

void transpose(DataType dtype, const void *from, void *to, int64_t planes, int64_t rows, int64_t cols,
               ParallelRunner *parallel) {
    const Transpose t{dtype, from, to, planes, rows, cols, (cols + Transpose::kChunk - 1) / Transpose::kChunk};
    parallel_tasks(static_cast<int>(planes * t.chunks), [&](int i) { t.run(i); }, parallel);
}

}  // namespace

void nchw_to_nhwc(const ConstTensorRef &from, void *to, ParallelRunner *parallel) {
    const auto &s = from.shape;  // [N, C, H, W]
    transpose(from.dtype, from.data, to, s[0], s[1], s[2] * s[3], parallel);
}

void nhwc_to_nchw(const void *from, const TensorRef &to, ParallelRunner *parallel) {
    const auto &s = to.shape;  // [N, C, H, W]
    transpose(to.dtype, from, to.data, s[0], s[2] * s[3], s[1], parallel);
}

}  // namespace gradtune::internal
