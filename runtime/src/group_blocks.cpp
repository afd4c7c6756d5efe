#include "group_blocks.h"

#include <cstring>
#include <vector>

#include "dispatch.h"

namespace gradtune::internal {

namespace {

constexpr int64_t kBlockLanes = 16;     // channels that fill one AVX-512 vector of float32
constexpr int64_t kMaxGroupsPerBlock = 8;

}  // namespace

GroupBlocks group_blocks(const CallInfo &info) {
    GroupBlocks b;
    if (info.op != "Conv2DBackpropInput" && info.op != "Conv2DBackpropFilter") return b;
    if (info.data_format != "NHWC" || info.structure.at("dilation_height") != 1 ||
        info.structure.at("dilation_width") != 1)
        return b;
    b.groups = info.structure.at("groups");
    if (b.groups <= 1) return b;
    b.in_channels = info.shape.at("C") / b.groups;
    b.out_channels = info.shape.at("O") / b.groups;
    if (b.in_channels < 1 || b.out_channels < 1) return b;
    // The fewest groups that fill a vector on both sides (all of them where
    // even that is too few channels).
    auto groups_for = [](int64_t channels) { return (kBlockLanes + channels - 1) / channels; };
    b.per_block = std::min(b.groups, std::max(groups_for(b.in_channels), groups_for(b.out_channels)));
    // The input gradient's blocks divide the groups where a block of up to
    // kMaxGroupsPerBlock groups can: a last block of fewer than 16 input
    // channels runs the input gradient's kernels on one vector per position.
    // RegNetX-200MF's 24 channels in 3 groups of 8 (32x32, N=8) took 1.64 ms
    // as blocks of 2 and 1 groups against 0.55 ms as one block of 3, its 56
    // channels in 7 groups 0.59 ms against 0.47 ms (Sapphire Rapids). The
    // filter gradient's kernels run 8 channels well: there the same layers
    // took 0.30 and 0.22 ms as blocks of 2 and 1 against 0.67 and 1.59 ms
    // as one block.
    if (info.op == "Conv2DBackpropInput") {
        for (int64_t per_block = b.per_block; per_block <= std::min(b.groups, kMaxGroupsPerBlock); per_block++) {
            if (b.groups % per_block == 0) {
                b.per_block = per_block;
                break;
            }
        }
    }
    b.usable = b.per_block <= kMaxGroupsPerBlock;
    return b;
}

CallInfo block_twin(const CallInfo &info, const GroupBlocks &b, int64_t block) {
    CallInfo twin = info;
    twin.structure["groups"] = 1;
    twin.shape["C"] = b.block_in(block);
    twin.shape["O"] = b.block_out(block);
    std::vector<int64_t> &output = twin.output_shapes.at(0);
    if (info.op == "Conv2DBackpropInput") {
        output[3] = b.block_in(block);  // [N, H, W, b Cg]
    } else {
        output[2] = b.block_in(block);  // [FH, FW, b Cg, b Og]
        output[3] = b.block_out(block);
    }
    return twin;
}

bool detour_to_group_blocks(const CallInfo &info, const RunOptions &options) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    if (!group_blocks(info).usable) return false;
    Selection own;
    return select_kernel(info, options, &own).ok() && own.tier == Tier::generic;
}

namespace {

// Walks block `block`'s filter [FH, FW, b Cg, b Og] row by row (a tap and
// an input channel of the block): visit(row, diagonal, in_call) gets the
// byte offsets of the row, of its group's run of Og output channels within
// the row, and of that run in the call's filter [FH, FW, Cg, O].
template <typename Visit>
void for_each_diagonal_run(const GroupBlocks &b, int64_t block, const std::vector<int64_t> &filter_shape,
                           size_t element, Visit visit) {
    const int64_t taps = filter_shape[0] * filter_shape[1], out = filter_shape[3];
    const size_t row_bytes = static_cast<size_t>(b.block_out(block)) * element;
    size_t row = 0;
    for (int64_t tap = 0; tap < taps; tap++) {
        for (int64_t ci = 0; ci < b.block_in(block); ci++, row += row_bytes) {
            const int64_t g = ci / b.in_channels;
            const int64_t in_call =
                (tap * b.in_channels + ci % b.in_channels) * out + (block * b.per_block + g) * b.out_channels;
            visit(row, static_cast<size_t>(g * b.out_channels) * element, static_cast<size_t>(in_call) * element);
        }
    }
}

// Whether any of `count` values of `bits` bits each has an all-ones exponent
// (`exponent`: its mask): an Inf or a NaN.
template <typename Bits>
bool any_non_finite(const void *data, int64_t count, Bits exponent) {
    const Bits *values = static_cast<const Bits *>(data);
    Bits found = 0;  // no early exit: the loop vectorises
    for (int64_t i = 0; i < count; i++) found |= static_cast<Bits>((values[i] & exponent) == exponent);
    return found != 0;
}

}  // namespace

bool input_gradient_blocks_exact(const GroupBlocks &b, const ConstTensorRef &out_backprop) {
    if (b.per_block == 1) return true;
    const int64_t count = out_backprop.num_elements();
    switch (out_backprop.dtype) {
    case DataType::kHalf: return !any_non_finite<uint16_t>(out_backprop.data, count, 0x7C00);
    case DataType::kBFloat16: return !any_non_finite<uint16_t>(out_backprop.data, count, 0x7F80);
    case DataType::kFloat: return !any_non_finite<uint32_t>(out_backprop.data, count, 0x7F800000u);
    case DataType::kDouble: return !any_non_finite<uint64_t>(out_backprop.data, count, 0x7FF0000000000000ull);
    default: return true;
    }
}

void block_filter(const GroupBlocks &b, int64_t block, const ConstTensorRef &filter, void *to) {
    const size_t element = DataTypeSize(filter.dtype), run = static_cast<size_t>(b.out_channels) * element;
    const char *from = static_cast<const char *>(filter.data);
    char *blocked = static_cast<char *>(to);
    for_each_diagonal_run(b, block, filter.shape, element, [&](size_t row, size_t diagonal, size_t in_call) {
        std::memset(blocked + row, 0, static_cast<size_t>(b.block_out(block)) * element);
        std::memcpy(blocked + row + diagonal, from + in_call, run);
    });
}

void unblock_filter(const GroupBlocks &b, int64_t block, const void *from, const TensorRef &filter) {
    const size_t element = DataTypeSize(filter.dtype), run = static_cast<size_t>(b.out_channels) * element;
    const char *blocked = static_cast<const char *>(from);
    char *to = static_cast<char *>(filter.data);
    for_each_diagonal_run(b, block, filter.shape, element, [&](size_t row, size_t diagonal, size_t in_call) {
        std::memcpy(to + in_call, blocked + row + diagonal, run);
    });
}

}  // namespace gradtune::internal
