#include "nhwc_detour.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "dispatch.h"

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
    return select_kernel(nhwc_twin(info), options, &twin).ok() && twin.tier != Tier::generic;
}

namespace {

// A thread's scratch memory: grows to the largest request and is reused, so
// that a training loop's calls neither allocate nor fault pages in.
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

// Each of `planes` row-major rows x cols matrices into its transpose, in
// 32 x 32 blocks (a block's reads and writes both stay in L1).
template <typename T>
void transpose_planes(const T *from, T *to, int64_t planes, int64_t rows, int64_t cols) {
    constexpr int64_t kBlock = 32;
    for (int64_t p = 0; p < planes; p++) {
        const T *src = from + p * rows * cols;
        T *dst = to + p * rows * cols;
        for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
            for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
                const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
                for (int64_t r = r0; r < r1; r++)
                    for (int64_t c = c0; c < c1; c++) dst[c * rows + r] = src[r * cols + c];
            }
    }
}

void transpose(DataType dtype, const void *from, void *to, int64_t planes, int64_t rows, int64_t cols) {
    switch (DataTypeSize(dtype)) {
    case 2:
        transpose_planes(static_cast<const uint16_t *>(from), static_cast<uint16_t *>(to), planes, rows, cols);
        break;
    case 4:
        transpose_planes(static_cast<const uint32_t *>(from), static_cast<uint32_t *>(to), planes, rows, cols);
        break;
    default:
        transpose_planes(static_cast<const uint64_t *>(from), static_cast<uint64_t *>(to), planes, rows, cols);
        break;
    }
}

}  // namespace

void *scratch_buffer(int which, size_t bytes) {
    thread_local Scratch scratch[3];
    return scratch[which].get(bytes);
}

void nchw_to_nhwc(const ConstTensorRef &from, void *to) {
    const auto &s = from.shape;  // [N, C, H, W]
    transpose(from.dtype, from.data, to, s[0], s[1], s[2] * s[3]);
}

void nhwc_to_nchw(const void *from, const TensorRef &to) {
    const auto &s = to.shape;  // [N, C, H, W]
    transpose(to.dtype, from, to.data, s[0], s[2] * s[3], s[1]);
}

}  // namespace gradtune::internal
