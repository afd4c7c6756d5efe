#include "group_blocks.h"

#include <cstring>

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
    b.per_block = b.groups;
    for (int64_t per_block = 1; per_block <= b.groups; per_block++) {
        if (b.groups % per_block == 0 && per_block * b.in_channels >= kBlockLanes &&
            per_block * b.out_channels >= kBlockLanes) {
            b.per_block = per_block;
            break;
        }
    }
    b.usable = b.per_block <= kMaxGroupsPerBlock;
    return b;
}

CallInfo block_twin(const CallInfo &info, const GroupBlocks &b) {
    CallInfo twin = info;
    twin.structure["groups"] = 1;
    twin.shape["C"] = b.block_in();
    twin.shape["O"] = b.block_out();
    std::vector<int64_t> &output = twin.output_shapes.at(0);
    if (info.op == "Conv2DBackpropInput") {
        output[3] = b.block_in();  // [N, H, W, B Cg]
    } else {
        output[2] = b.block_in();  // [FH, FW, B Cg, B Og]
        output[3] = b.block_out();
    }
    return twin;
}

bool detour_to_group_blocks(const CallInfo &info, const RunOptions &options) {
    if (options.device != Device::cpu || !options.variant.empty() || options.external_kernel) return false;
    if (!group_blocks(info).usable) return false;
    Selection own;
    return select_kernel(info, options, &own).ok() && own.tier == Tier::generic;
}

void block_filter(const GroupBlocks &b, int64_t block, const ConstTensorRef &filter, void *to) {
    const int64_t taps = filter.shape[0] * filter.shape[1], out = filter.shape[3];
    const size_t element = DataTypeSize(filter.dtype), run = static_cast<size_t>(b.out_channels) * element;
    const char *from = static_cast<const char *>(filter.data);
    char *row = static_cast<char *>(to);
    for (int64_t tap = 0; tap < taps; tap++) {
        for (int64_t ci = 0; ci < b.block_in(); ci++, row += b.block_out() * element) {
            const int64_t g = ci / b.in_channels;
            std::memset(row, 0, b.block_out() * element);
            std::memcpy(row + g * run,
                        from + ((tap * b.in_channels + ci % b.in_channels) * out + (block * b.per_block + g) * b.out_channels) * element,
                        run);
        }
    }
}

void unblock_filter(const GroupBlocks &b, int64_t block, const void *from, const TensorRef &filter) {
    const int64_t taps = filter.shape[0] * filter.shape[1], out = filter.shape[3];
    const size_t element = DataTypeSize(filter.dtype), run = static_cast<size_t>(b.out_channels) * element;
    const char *row = static_cast<const char *>(from);
    char *to = static_cast<char *>(filter.data);
    for (int64_t tap = 0; tap < taps; tap++) {
        for (int64_t ci = 0; ci < b.block_in(); ci++, row += b.block_out() * element) {
            const int64_t g = ci / b.in_channels;
            std::memcpy(to + ((tap * b.in_channels + ci % b.in_channels) * out + (block * b.per_block + g) * b.out_channels) * element,
                        row + g * run, run);
        }
    }
}

}  // namespace gradtune::internal
