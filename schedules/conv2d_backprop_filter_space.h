// Schedule space of Conv2DBackpropFilter (Halide-free; apply() is in
// conv2d_backprop_filter.h).
//
// The op is a GEMM with a huge reduction (every out_backprop position) and a
// small result (the filter), compute bound like the input gradient. The CPU
// space (see the loop structure in conv2d_backprop_filter.h):
//   - a register tile of (vector_width * vectors_per_tile) output channels
//     (unit stride in the filter and, in NHWC, in out_backprop) x tile_ci
//     input channels x tile_fw filter columns: per out_backprop position it
//     loads vectors_per_tile out_backprop vectors and tile_ci * tile_fw input
//     broadcasts;
//   - the reduction runs in blocks of rows_per_block rows x images_per_block
//     images: bigger blocks read and write the filter gradient less often,
//     smaller ones keep the block's data in cache for all tiles;
//   - ci_outer orders the parallel tiles (which operand stays in cache);
//   - unroll_reduction unrolls the loop over out_backprop columns;
//   - stage_input / stage_out_backprop copy each block once, channels
//     innermost (no boundary selects; NCHW transposed).
// algorithm picks the loop nest around the register tile:
//   0 "blocks outer": for each block (serial), all filter tiles in parallel;
//     the block's data is shared by both cores, but every block is a
//     fork/join and each tile streams the block from L2;
//   1 "tasks outer": each parallel task owns o_tiles_per_task output-channel
//     tiles x 1/ci_tasks of the input-channel tiles (a task's input slice is
//     staged once for all its output-channel tiles), x one filter row with
//     row_tasks, x one of reduction_tasks bands of out_backprop rows, and
//     runs its whole reduction itself, block by block, every tile of the
//     task reusing the block from L1 (one fork/join per call; the staging is
//     per task). Each band's sum lands in its own copy of the filter
//     gradient and the copies are added in band order: without bands, a
//     few-channel layer such as the 7x7 stem has few tasks, each of which
//     reads all of out_backprop.
// Both sum every filter element in the same order whatever the thread count.
// CUDA: one thread per filter element (threads_inner along o, threads_other
// along ci), one kernel per reduction block.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS(KNOB, SHARED)                                                       \
    KNOB(algorithm, (0, 1), 0,                                                                                        \
         "0: blocks outer, the tiles of a block in parallel; 1: tasks outer, each task owns its tiles",               \
         .since_version = 2)                                                                                          \
    KNOB(ci_tasks, (1, 2, 4, 8), 1, "tasks outer: the input-channel tiles split into this many tasks",                \
         .since_version = 2, .algorithms = {1})                                                                       \
    KNOB(o_tiles_per_task, (1, 2, 4, 8), 1, "tasks outer: output-channel tiles per task", .since_version = 2,         \
         .algorithms = {1})                                                                                           \
    KNOB(row_tasks, (0, 1), 1, "tasks outer: 1: each filter row its own task (0: a task runs every row)",             \
         .since_version = 2, .algorithms = {1})                                                                       \
    KNOB(reduction_tasks, (1, 2, 4, 8), 1,                                                                            \
         "tasks outer: bands of out_backprop rows reduced by their own tasks, then added in band order",              \
         .since_version = 2, .algorithms = {1})                                                                       \
    KNOB(vector_width, (4, 8, 16, 32), native, "accumulator lanes per vector along the output channels")              \
    KNOB(vectors_per_tile, (1, 2, 3, 4), 2, "vectors of output channels per register tile")                           \
    KNOB(tile_ci, (1, 2, 3, 4, 5, 6, 7, 8), 4, "input channels per register tile (broadcast operands)")               \
    KNOB(tile_fw, (1, 2, 3), 1, "filter columns per register tile (share the out_backprop vectors)")                  \
    KNOB(ci_outer, (0, 1), 0,                                                                                         \
         "blocks outer: 1: input-channel tiles outside output-channel tiles in the parallel loop", .algorithms = {0}) \
    KNOB(unroll_reduction, (1, 2, 4), 1, "unroll factor of the loop over out_backprop columns")                       \
    KNOB(stage_input, (0, 1), 1, "1: copy each block's zero-padded input slice, channels innermost")                  \
    KNOB(stage_out_backprop, (0, 1), 1, "1: copy each block's out_backprop slice, channels innermost")                \
    KNOB(rows_per_block, (1, 2, 4, 8, 16, 32, 64), 8, "out_backprop rows per reduction block")                        \
    KNOB(images_per_block, (1, 2, 4, 8, 16, 32), 2, "images per reduction block")

#define GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS(KNOB, SHARED)                                 \
    KNOB(threads_inner, (8, 16, 32, 64, 128), 32, "threads along output channels (coalesced)")   \
    KNOB(threads_other, (1, 2, 4, 8, 16), 8, "threads along input channels")                     \
    SHARED(rows_per_block, (1, 2, 4, 8, 16, 32, 64), 8, "out_backprop rows per reduction block") \
    SHARED(images_per_block, (1, 2, 4, 8, 16, 32), 4, "images per reduction block (one kernel launch each)")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(Conv2DBackpropFilterCpuKnobs, GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(Conv2DBackpropFilterCudaKnobs, GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS);

namespace conv2d_backprop_filter_space {

inline KnobSpace cpu_space(const Structure &s) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const int bytes = accumulator_bytes(s.dtype);
    const int native = 64 / bytes;  // one AVX-512 register
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS);
    space.constraint =
        KnobSpace::typed<Conv2DBackpropFilterCpuKnobs>([=](const Conv2DBackpropFilterCpuKnobs &k) -> std::string {
            const int vector_bytes = k.vector_width * bytes;
            if (std::string why = check_vector_bytes(vector_bytes); !why.empty()) return why;
            const int registers_per_vector = std::max(1, vector_bytes / 64);
            // Accumulators, plus the out_backprop vectors and one broadcast of an
            // inner iteration.
            const int accumulators = k.vectors_per_tile * k.tile_ci * k.tile_fw;
            const int registers = (accumulators + k.vectors_per_tile) * registers_per_vector + 1;
            if (registers > 32)
                return "the register tile needs " + std::to_string(registers) + " vector registers (max 32)";
            const int filter_w = fixed.filter_width;
            if (filter_w > 0 && k.tile_fw > filter_w)
                return "tile_fw " + std::to_string(k.tile_fw) + " is wider than the filter";
            return "";
        });
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS);
    space.constraint =
        KnobSpace::typed<Conv2DBackpropFilterCudaKnobs>([](const Conv2DBackpropFilterCudaKnobs &k) -> std::string {
            const int threads = k.threads_inner * k.threads_other;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            return "";
        });
    return space;
}

}  // namespace conv2d_backprop_filter_space

inline OpSchema conv2d_backprop_filter_schema() {
    OpSchema op;
    op.name = "Conv2DBackpropFilter";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = Conv2DBackpropStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    op.knob_space_version = 2;  // 2: algorithm and the tasks-outer knobs (defaults: version 1's blocks-outer schedule)
    op.space = per_device(conv2d_backprop_filter_space::cpu_space, conv2d_backprop_filter_space::cuda_space);
    return op;
}

}  // namespace gradtune
