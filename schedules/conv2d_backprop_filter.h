// Schedule of Conv2DBackpropFilter: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// The op is a GEMM with a huge reduction (every out_backprop position) and a
// small result (the filter). On the CPU a register tile of output channels
// (the vector lanes) x input channels x filter columns accumulates over
// reduction blocks of rows_per_block rows x images_per_block images; the
// `algorithm` knob picks the loop nest around it (apply(), below, draws
// both): 0 "blocks outer", the tiles of each block in parallel; 1 "tasks
// outer", each task owning its tiles and running its whole reduction, with
// optional bands of out_backprop rows summed in band order. Both sum every
// filter element in the same order whatever the thread count. Each knob's
// line in the table says what it trades; what the choices were measured to
// gain: docs/halide-lessons.md section 5.
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
    KNOB(stage_out_backprop, (0, 1, 2), 1,                                                                            \
         "1: copy each block's out_backprop slice, channels innermost; 2 (tasks outer): one copy per output-channel " \
         "tile, dense and reused by all the task's input-channel tiles",                                              \
         .values_since = 3)                                                                                           \
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
    // Accumulators, plus the out_backprop vectors and one broadcast of an
    // inner iteration.
    const auto registers = [=](const Conv2DBackpropFilterCpuKnobs &k) {
        const int registers_per_vector = std::max(1, k.vector_width * bytes / 64);
        return (k.vectors_per_tile * k.tile_ci * k.tile_fw + k.vectors_per_tile) * registers_per_vector + 1;
    };
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS);
    // No space.registers: its settings compile as tuned on AVX2 too. Fitted
    // to 16 ymm registers (fit_register_file), the default suite's filter
    // gradients ran at 0.40 (halved vectors) and 0.28 (halved vectors, tile
    // lanes kept) of oneDNN's AVX2 kernels, against 0.58 as tuned, on an
    // Intel Xeon (x86-64-linux-avx512_sapphirerapids, GRADTUNE_MAX_CPU_ISA=avx2).
    space.constraint =
        KnobSpace::typed<Conv2DBackpropFilterCpuKnobs>([=](const Conv2DBackpropFilterCpuKnobs &k) -> std::string {
            if (std::string why = check_register_tile(k.vector_width * bytes, registers(k)); !why.empty()) return why;
            const int filter_w = fixed.filter_width;
            if (filter_w > 0 && k.tile_fw > filter_w)
                return "tile_fw " + std::to_string(k.tile_fw) + " is wider than the filter";
            if (k.stage_out_backprop == 2 && k.algorithm != 1)
                return "stage_out_backprop 2 (a copy per output-channel tile of a task) needs algorithm 1";
            return "";
        });
    // The few-channel start (space.algorithm_seeds, tried first by the
    // tuner): one vector of output channels x 8 input channels x 3 filter
    // columns, tasks of bands of rows that each run every tile, out_backprop
    // read in place. On zoo row R1 (32x32x16 -> 16, N=64; Intel Xeon,
    // x86-64-linux-avx512_sapphirerapids) 1.42 ms against the committed
    // record's 3.8 ms; a tune of 96 sampled settings had not found it.
    Conv2DBackpropFilterCpuKnobs few = Conv2DBackpropFilterCpuKnobs::from(space.defaults());
    few.algorithm = 1;
    few.vector_width = native;
    few.vectors_per_tile = 1;
    few.tile_ci = 8;
    few.tile_fw = fixed.filter_width > 0 ? std::min(3, fixed.filter_width) : 3;
    few.ci_tasks = 1;
    few.o_tiles_per_task = 1;
    few.row_tasks = 0;
    few.reduction_tasks = 4;
    few.stage_input = 1;
    few.stage_out_backprop = 0;
    few.rows_per_block = 8;
    few.images_per_block = 2;
    few.unroll_reduction = 1;
    space.add_seed(few.map());
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_block_space<Conv2DBackpropFilterCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS),
        [](const Conv2DBackpropFilterCudaKnobs &k) { return k.threads_inner * k.threads_other; });
}

}  // namespace conv2d_backprop_filter_space

inline OpSchema conv2d_backprop_filter_schema() {
    OpSchema op;
    op.name = "Conv2DBackpropFilter";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = Conv2DBackpropStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: algorithm and the tasks-outer knobs (defaults: version 1's blocks-outer schedule);
    // 3: stage_out_backprop 2 (per output-channel tile).
    op.knob_space_version = 3;
    op.space = per_device(conv2d_backprop_filter_space::cpu_space, conv2d_backprop_filter_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include <algorithm>

#include "Halide.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
GRADTUNE_GENERATOR_KNOBS(Conv2DBackpropFilterKnobs, GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS,
                         GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DBackpropFilterPipeline {
    Halide::Func output;                           // dF(o, ci, fw, fh), type T
    Halide::Func accumulator{"accumulator"};       // (o, ci, fw, fh): pure 0, update += over positions
    Halide::Func input{"input_padded"};            // (c, w, h, n), zero outside the input; with a
                                                   // fixed 1x1 filter (NHWC) at output positions (c, ow, oh, n)
    Halide::Func out_backprop{"out_backprop_in"};  // (o, ow, oh, n), out_backprop as is
    Halide::RDom positions;                        // (ow, oh, n): every out_backprop position
    Halide::Var o{"o"}, ci{"ci"}, fw{"fw"}, fh{"fh"};
    Halide::Expr out_depth, group_in_depth, filter_width;  // Cout, Cg, FW (constants where fixed)
    Halide::Expr groups;                                   // G (a constant in variants that fix it)
};

// apply() for Conv2DBackpropFilter. Knob meanings and legal values: the tables above.
//
// The reduction over every out_backprop position (N * OH * OW, 100k for a
// ResNet-50 layer at batch 32) is split into blocks of rows_per_block rows of
// images_per_block images. rfactor turns the block into an intermediate,
// block_sum(o, ci, fw, fh, block), computed one register tile at a time:
//   for each block (serial):          stage the block's out_backprop / input
//     parallel for each filter tile:  block_sum tile = sum over the block (registers)
//                                     accumulator tile += block_sum tile
// so the block's data is reused from cache by every tile, and the filter
// gradient is read and written once per block (algorithm 0, "blocks outer").
// Algorithm 1 ("tasks outer") turns the nest inside out:
//   parallel for each task (output-channel tiles x input-channel group
//                             [x filter row] [x band of out_backprop rows]):
//     for each block of the task's rows (serial): stage the task's slice of the block
//       for each filter tile of the task:         block_sum tile (registers), merged tile +=
// where `merged` is the accumulator, or with bands the band's own copy of it
// (the copies are added in band order afterwards). One fork/join per call,
// and the task's tiles reuse the block from L1. The parallel loop is the
// output's (output_tasks): each task's part of the accumulator is zeroed,
// summed and rounded into the output inside it, while in cache; with bands,
// the output's loop over chunks of the filter adds the bands' copies. With
// stage_out_backprop 2, each output-channel tile of the task is a loop of
// its own around the task's other tiles, and copies its own slice of the
// block's out_backprop.
namespace conv2d_backprop_filter_schedule {

using namespace Halide;

// Names shared by both specialisation branches, so that producers can be
// computed at the same loop in both.
struct Loops {
    Var o_tile{"o_tile"}, o_lane{"o_lane"}, ci_tile{"ci_tile"}, ci_pos{"ci_pos"};
    Var fw_tile{"fw_tile"}, fw_pos{"fw_pos"}, tile{"tile"}, tile_a{"tile_a"}, tile_b{"tile_b"};
    RVar oh_block{"oh_block"}, oh_in{"oh_in"}, n_block{"n_block"}, n_in{"n_in"};
    Var block_oh{"block_oh"}, block_n{"block_n"};
    Var band{"band"};  // tasks outer: the band of out_backprop rows a task reduces
    // stage_out_backprop 2: the loop at which out_backprop is copied. In the
    // full branch, a task's output-channel tiles (outside its input-channel
    // tiles); in the others, a loop of one iteration just inside the block,
    // which copies the block's slice as stage_out_backprop 1 does.
    Var o_group{"o_group"};
};

// Splits the reduction of `update` (over columns, rows `oh`, images) into
// blocks and returns the per-block intermediate. After this, `update` adds
// block_sum(..., oh_block, n_block) over the blocks.
inline Func split_into_blocks(Stage update, RVar oh, const Conv2DBackpropFilterPipeline &p, const Loops &l, int rows,
                              int images) {
    RVar n = p.positions.z;
    update.split(oh, l.oh_block, l.oh_in, rows, TailStrategy::GuardWithIf)
        .split(n, l.n_block, l.n_in, images, TailStrategy::GuardWithIf);
    return update.rfactor({{l.oh_block, l.block_oh}, {l.n_block, l.block_n}});
}

// Splits the merge stage into register tiles of o_size output channels x
// ci_size input channels x fw_size filter columns. Past Cg and FW the
// accumulator is rounded up. Output channels are rounded up too (a branch
// taken only when o_size divides Cout) unless o_tail says otherwise.
inline void split_register_tile(Stage merge, const Conv2DBackpropFilterPipeline &p, const Loops &l, int o_size,
                                int ci_size, int fw_size, TailStrategy o_tail = TailStrategy::RoundUp) {
    merge.split(p.o, l.o_tile, l.o_lane, o_size, o_tail)
        .split(p.ci, l.ci_tile, l.ci_pos, ci_size, TailStrategy::RoundUp)
        .split(p.fw, l.fw_tile, l.fw_pos, fw_size, TailStrategy::RoundUp);
}

// The full-tile branch of the merge stage: register tiles of o_size output
// channels x ci_size input channels x fw_size filter columns, all tiles of a
// block in parallel, blocks outermost.
inline void tile_merge(Stage merge, const Conv2DBackpropFilterPipeline &p, const Loops &l, int o_size, int ci_size,
                       int fw_size, bool ci_outer, int vector) {
    split_register_tile(merge, p, l, o_size, ci_size, fw_size);
    const Var inner_tile = ci_outer ? l.o_tile : l.ci_tile, outer_tile = ci_outer ? l.ci_tile : l.o_tile;
    merge.reorder(l.o_lane, l.ci_pos, l.fw_pos, inner_tile, outer_tile, l.fw_tile, p.fh, l.oh_block, l.n_block)
        .fuse(inner_tile, outer_tile, l.tile_a)
        .fuse(l.tile_a, l.fw_tile, l.tile_b)
        .fuse(l.tile_b, p.fh, l.tile)
        .parallel(l.tile)
        .vectorize(l.o_lane, vector, TailStrategy::GuardWithIf)
        .unroll(l.ci_pos)
        .unroll(l.fw_pos);
}

// The tasks-outer algorithm's split of the filter into parallel tasks.
struct Tasks {
    int bands;             // reduction_tasks: bands of out_backprop rows (1: none)
    bool rows;             // row_tasks: each filter row its own task
    int ci_groups;         // ci_tasks
    int o_tiles_per_task;  // o_tiles_per_task
    bool o_tile_outer;     // stage_out_backprop 2: the task's output-channel tiles outside its other tiles
    bool in_output_tasks;  // the output's parallel loop over the same tasks runs them (output_tasks): none here
};

// The input-channel tiles of a task (ci_tasks: the tiles split into that many tasks).
inline Expr ci_tiles_per_task(const Conv2DBackpropFilterPipeline &p, int ci_size, int ci_groups) {
    return ((p.group_in_depth + ci_size - 1) / ci_size + ci_groups - 1) / ci_groups;
}

// Tasks outer: the full-tile branch of algorithm 1. A task owns
// o_tiles_per_task output-channel tiles x 1/ci_tasks of the input-channel
// tiles (x one filter row with row_tasks, x one band of out_backprop rows
// with bands) and runs every block of its reduction over them; its tiles
// (output-channel x input-channel x filter-column [x filter-row] tile) are
// innermost, fused into `tile` as in tile_merge.
inline void task_merge(Stage merge, const Conv2DBackpropFilterPipeline &p, const Loops &l, int o_size, int ci_size,
                       int fw_size, const Tasks &t, int vector) {
    split_register_tile(merge, p, l, o_size, ci_size, fw_size);
    Var ci_task{"ci_task"}, ci_in{"ci_in"}, o_task{"o_task"}, o_in{"o_in"}, task_a{"task_a"}, task{"task"};
    merge.split(l.ci_tile, ci_task, ci_in, ci_tiles_per_task(p, ci_size, t.ci_groups), TailStrategy::GuardWithIf)
        .split(l.o_tile, o_task, o_in, t.o_tiles_per_task, TailStrategy::GuardWithIf);
    // Innermost first: the register tile, the task's tiles, its blocks, the
    // tasks. With o_tile_outer, the output-channel tiles are a loop of their
    // own (o_group) around the task's other tiles.
    std::vector<VarOrRVar> order{l.o_lane, l.ci_pos, l.fw_pos, ci_in};
    if (!t.o_tile_outer) order.push_back(o_in);
    order.push_back(l.fw_tile);
    if (!t.rows) order.push_back(p.fh);
    if (t.o_tile_outer) order.push_back(o_in);
    order.insert(order.end(), {l.oh_block, l.n_block});
    if (t.rows) order.push_back(p.fh);
    order.insert(order.end(), {ci_task, o_task});
    if (t.bands > 1) order.push_back(l.band);
    merge.reorder(order);
    if (t.o_tile_outer) {
        merge.rename(o_in, l.o_group).rename(ci_in, l.tile_a);
    } else {
        merge.fuse(ci_in, o_in, l.tile_a);
    }
    merge.fuse(l.tile_a, l.fw_tile, l.tile_b);
    if (t.rows) {
        merge.rename(l.tile_b, l.tile).fuse(p.fh, ci_task, task_a);
    } else {
        merge.fuse(l.tile_b, p.fh, l.tile).rename(ci_task, task_a);
    }
    if (t.bands > 1) {
        Var task_b{"task_b"};
        merge.fuse(task_a, o_task, task_b).fuse(task_b, l.band, task);
    } else {
        merge.fuse(task_a, o_task, task);
    }
    if (!t.in_output_tasks) merge.parallel(task);
    merge.vectorize(l.o_lane, vector, TailStrategy::GuardWithIf).unroll(l.ci_pos).unroll(l.fw_pos);
}

// The block's partial sums for one tile stay in registers over the block's
// positions: columns innermost (unrolled by `unroll`), then rows, then
// images. Vectors of `lanes` output channels, `half` of them where only a
// half vector divides the output channels (half_vectors).
inline void schedule_block_sum(Func block_sum, const Func &merged, const Conv2DBackpropFilterPipeline &p,
                               const Loops &l, int unroll, int lanes, int half, const Expr &half_vectors) {
    block_sum.compute_at(merged, l.tile);
    auto schedule_sums = [&](Stage init, Stage update, int o_lanes) {
        init.vectorize(p.o, o_lanes, TailStrategy::Predicate).unroll(p.o).unroll(p.ci).unroll(p.fw);
        RVar ow = p.positions.x;
        if (unroll > 1) {
            RVar ow_outer("ow_outer"), ow_inner("ow_inner");
            update.split(ow, ow_outer, ow_inner, unroll, TailStrategy::GuardWithIf)
                .reorder(p.o, p.ci, p.fw, ow_inner, ow_outer, l.oh_in, l.n_in)
                .unroll(ow_inner);
        } else {
            update.reorder(p.o, p.ci, p.fw, ow, l.oh_in, l.n_in);
        }
        update.vectorize(p.o, o_lanes, TailStrategy::Predicate).unroll(p.o).unroll(p.ci).unroll(p.fw);
    };
    if (half >= 4) {
        schedule_sums(block_sum.specialize(half_vectors), block_sum.update().specialize(half_vectors), half);
    }
    schedule_sums(block_sum, block_sum.update(), lanes);
}

// Staging copies the block's slice once, channels innermost: dense channel
// loads in both layouts (NCHW is transposed here) and, for the input, no
// boundary selects in the reduction. Blocks outer copies in parallel; tasks
// outer copies each task's own slice inside the task.
//
// The input's copy loop is partitioned by force. A task's slice may run past
// the last channel (tiles round Cg up), so its vectors clamp the channel
// index, and Halide's own partitioning left that clamp in every vector: the
// copy was a gather of scalar loads (12% of the 1x1 stride-2 layer's time).
// Partitioned, only the vectors at the edges clamp.
//
// Tasks outer, the small branches' tasks (`narrow`) copy a slice of a few
// input channels: `narrow_lanes` of them, not the knob's vector, are copied
// at a time. A 16-lane vector over an 8-channel slice left the whole copy to
// the tail, one element at a time: a third of a 16-channel layer's time (R1
// of bench/suites/zoo.txt).
inline void stage_block(const Conv2DBackpropFilterCpuKnobs &k, bool nhwc, bool tasks_outer, const Func &merged,
                        const Conv2DBackpropFilterPipeline &p, const Loops &l, const Expr &narrow,
                        int narrow_lanes) {
    struct Staged {
        int stage;     // the knob
        Func func;     // what is copied
        bool clamped;  // its boundary condition clamps the dense dimension
    };
    for (auto [stage, staged, clamped] : {Staged{k.stage_out_backprop, p.out_backprop, false},  // (o, ow, oh, n)
                                          Staged{k.stage_input, p.input, true}}) {  // (c, w, h, n) or (c, ow, oh, n)
        if (!stage) continue;
        const std::vector<Var> v = staged.args();
        const Var dense = nhwc ? v[0] : v[1], lanes{"lanes"};
        staged.compute_at(stage == 2 ? LoopLevel(merged, l.o_group) : LoopLevel(merged, l.oh_block));
        if (clamped && nhwc && tasks_outer && narrow_lanes < k.vector_width) {
            staged.specialize(narrow)
                .split(dense, dense, lanes, narrow_lanes, TailStrategy::GuardWithIf)
                .vectorize(lanes);
        }
        staged.split(dense, dense, lanes, k.vector_width, TailStrategy::GuardWithIf).vectorize(lanes);
        if (clamped) staged.partition(dense, Partition::Always);
        if (!tasks_outer) staged.parallel(v[1]);
    }
}

// A pass over the whole filter gradient (zeroing the sums, adding the
// bands' sums in band order, rounding into the output) runs in parallel over
// filter taps x chunks of 16 input channels; returns that loop. Over filter
// rows alone the passes left a 1x1 filter on one thread: on zoo row P11
// (3x3x1536 -> 2048, a 12 MB filter) they were 40% of the call's time.
inline Var parallel_over_filter(Stage pass, const Conv2DBackpropFilterPipeline &p) {
    Var ci_chunk{"ci_chunk"}, ci_in{"ci_in"}, tap{"tap"}, chunk{"chunk"};
    pass.split(p.ci, ci_chunk, ci_in, 16, TailStrategy::GuardWithIf)
        .fuse(p.fw, p.fh, tap)
        .fuse(ci_chunk, tap, chunk)
        .parallel(chunk);
    return chunk;
}

// Tasks outer without bands: the output's loop over the merge's tasks (the
// full branch's: output-channel tiles x input-channel tiles [x filter row]),
// in parallel; the accumulator is computed inside it. The output-channel
// chunks are guarded, not rounded: the accumulator's region, and with it the
// out_backprop channels a task reads, stays within Cout.
inline Var output_tasks(Conv2DBackpropFilterPipeline &p, int o_size, int ci_size, const Tasks &t, int vector) {
    Var o_task{"o_task"}, o_in{"o_in"}, ci_task{"ci_task"}, ci_in{"ci_in"}, task_a{"task_a"}, task{"task"};
    p.output.split(p.o, o_task, o_in, o_size * t.o_tiles_per_task, TailStrategy::GuardWithIf)
        .split(p.ci, ci_task, ci_in, ci_size * ci_tiles_per_task(p, ci_size, t.ci_groups), TailStrategy::GuardWithIf);
    if (t.rows) {
        p.output.reorder(o_in, ci_in, p.fw, ci_task, o_task, p.fh)
            .fuse(ci_task, o_task, task_a)
            .fuse(task_a, p.fh, task);
    } else {
        p.output.reorder(o_in, ci_in, p.fw, p.fh, ci_task, o_task).fuse(ci_task, o_task, task);
    }
    p.output.parallel(task).vectorize(o_in, vector, TailStrategy::GuardWithIf);
    return task;
}

inline void apply_cpu(const Conv2DBackpropFilterCpuKnobs &k, const Structure &s, Conv2DBackpropFilterPipeline &p,
                      const Target &target) {
    const bool nhwc = s.data_format == "NHWC";
    const int vector = k.vector_width;
    // The small branch's vectors (and block_sum's) are at most one register:
    // a wider vector over few output channels would be mostly masked lanes.
    const int lanes = std::min(vector, target.natural_vector_size(p.accumulator.type()));
    const int o_size = vector * k.vectors_per_tile, ci_size = k.tile_ci, fw_size = k.tile_fw;
    const bool tasks_outer = k.algorithm == 1;
    const bool o_tile_outer = k.stage_out_backprop == 2;
    const bool banded = tasks_outer && k.reduction_tasks > 1;
    const Tasks tasks{k.reduction_tasks, k.row_tasks == 1, k.ci_tasks, k.o_tiles_per_task, o_tile_outer,
                      tasks_outer && !banded};
    Loops l;

    // The accumulator holds the filter gradient in the accumulator type
    // (float32 for 16-bit T) across blocks; the output rounds it once.
    // Blocks outer, it is a pass of its own over the whole filter, as is the
    // output. Tasks outer, each task's part of it is computed inside the
    // output's loop (over the merge's tasks, or with bands over chunks of
    // the filter): zeroed, summed and rounded into the output while in cache.
    // As passes of their own, zeroing and rounding were 25% of zoo row P11's
    // time (a 12 MB filter gradient: 3x3x1536 -> 2048, N=8).
    if (!tasks_outer) {
        p.accumulator.compute_root().vectorize(p.o, vector, TailStrategy::RoundUp);
        parallel_over_filter(p.accumulator, p);
        p.output.vectorize(p.o, vector, TailStrategy::Predicate);
        parallel_over_filter(p.output, p);
    } else if (banded) {
        p.accumulator.compute_at(p.output, parallel_over_filter(p.output, p))
            .vectorize(p.o, vector, TailStrategy::RoundUp);
        p.output.vectorize(p.o, vector, TailStrategy::Predicate);
    } else {
        p.accumulator.compute_at(p.output, output_tasks(p, o_size, ci_size, tasks, vector))
            .vectorize(p.o, vector, TailStrategy::RoundUp);
    }

    // `merged` is the Func whose update adds the blocks' sums: the
    // accumulator, or with bands the per-band sums, which the accumulator
    // then adds in band order (the same bits whatever the thread count).
    Func merged = p.accumulator;
    RVar oh = p.positions.y;
    if (banded) {
        RVar oh_band{"oh_band"}, oh_rest{"oh_rest"};
        const Expr band_rows = (p.positions.y.extent() + tasks.bands - 1) / tasks.bands;
        merged = p.accumulator.update()
                     .split(oh, oh_band, oh_rest, band_rows, TailStrategy::GuardWithIf)
                     .rfactor(oh_band, l.band);
        merged.compute_root().vectorize(p.o, vector, TailStrategy::RoundUp);
        parallel_over_filter(merged, p);
        p.accumulator.update().vectorize(p.o, vector, TailStrategy::Predicate);
        oh = oh_rest;
    }
    Func block_sum = split_into_blocks(merged.update(), oh, p, l, k.rows_per_block, k.images_per_block);

    // Full tiles: whole vectors of output channels (a tile never runs past
    // Cout, so out_backprop is read in bounds without a boundary condition);
    // the input-channel and filter-column tiles may run past Cg and FW: the
    // input reads zero there and the accumulator is rounded up, so the extra
    // lanes cost work but no checks. Other output-channel counts, and
    // grouped calls with a run-time group count, take the small branches.
    Expr full = p.out_depth % o_size == 0;
    if (!is_const(p.groups)) full = full && p.groups == 1;
    if (tasks_outer) {
        task_merge(merged.update().specialize(full), p, l, o_size, ci_size, fw_size, tasks, vector);
    } else {
        tile_merge(merged.update().specialize(full), p, l, o_size, ci_size, fw_size, k.ci_outer, vector);
    }
    // The small branches: output-channel counts that are not a multiple of the
    // tile, and grouped calls. Where one vector (or, for counts such as 24,
    // half a vector) divides Cout, a tile is that vector of output channels x
    // small_ci input channels x the full branch's filter columns (rounded up
    // as there): block_sum keeps a constant size (it stays in registers) and
    // its sums run on small_ci * fw_size independent accumulators; tasks
    // outer, these tiles take the full branch's tasks (task_merge). Otherwise
    // a tile is one vector of one input channel and filter column, the last
    // vector's loads and stores masked (a short code path for rare counts).
    // Its output-channel tile loop is innermost and serial: fused into the
    // parallel loop, Halide could not bound block_sum's masked vector loop by
    // a constant. It is renamed `tile` so that block_sum is computed at the
    // same loop name in every branch. Blocks outer runs the blocks around the
    // parallel tiles, as in the full branch; tasks outer runs all its blocks
    // inside each task (with bands: each task one band).
    std::vector<VarOrRVar> order{l.o_lane, l.ci_pos, l.fw_pos, l.o_tile};
    if (o_tile_outer) order.push_back(l.o_group);  // just inside the blocks
    const std::vector<VarOrRVar> tiles{l.ci_tile, l.fw_tile, p.fh}, blocks{l.oh_block, l.n_block};
    for (const auto &loops : tasks_outer ? std::vector{blocks, tiles} : std::vector{tiles, blocks})
        order.insert(order.end(), loops.begin(), loops.end());
    if (banded) order.push_back(l.band);
    auto small_tiles = [&](Stage merge, int o_lanes, TailStrategy o_tail, int ci_tile_size, int fw_tile_size) {
        if (tasks_outer && o_tail == TailStrategy::RoundUp) {
            // Whole vectors: the full branch's tasks, on one-vector tiles. A
            // task's blocks are staged once for all its tiles and filter
            // taps; with tasks of one input-channel tile x one filter
            // column x one row (below), a 16-channel 3x3 layer copied each
            // block 18 times and ran at a third of this.
            task_merge(merge, p, l, o_lanes, ci_tile_size, fw_tile_size, tasks, o_lanes);
            return;
        }
        Var rest{"rest"};
        split_register_tile(merge, p, l, o_lanes, ci_tile_size, fw_tile_size, o_tail);
        if (o_tile_outer) merge.split(l.o_tile, l.o_tile, l.o_group, 1);
        merge.reorder(order).fuse(l.ci_tile, l.fw_tile, l.tile_a).fuse(l.tile_a, p.fh, rest);
        if (banded) merge.fuse(rest, l.band, rest);
        if (!tasks.in_output_tasks) merge.parallel(rest);
        merge.vectorize(l.o_lane).unroll(l.ci_pos).unroll(l.fw_pos).rename(l.o_tile, l.tile);
    };
    // A one-vector (or half-vector) tile spends the full tile's accumulators
    // on more input channels (at most 8, the knob's largest): with the full
    // tile's 2 x 6 of the 3x3 default left at 6, a 16-channel layer's sums
    // waited on the FMA latency.
    const auto small_ci = [&](int o_lanes) { return std::clamp(ci_size * o_size / o_lanes, ci_size, 8); };
    // Counts that only a half vector divides: block_sum is specialised to
    // match the half-vector tiles.
    const int half = lanes / 2;
    const Expr half_vectors = p.out_depth % lanes != 0 && p.out_depth % half == 0;
    if (o_size != lanes) {
        small_tiles(merged.update().specialize(p.out_depth % lanes == 0), lanes, TailStrategy::RoundUp,
                    small_ci(lanes), fw_size);
    }
    if (half >= 4) {
        small_tiles(merged.update().specialize(half_vectors), half, TailStrategy::RoundUp, small_ci(half), fw_size);
    }
    small_tiles(merged.update(), lanes, TailStrategy::Predicate, 1, 1);

    schedule_block_sum(block_sum, merged, p, l, k.unroll_reduction, lanes, half, half_vectors);
    // The largest power of two within the one-vector branch's input-channel tile.
    int narrow_lanes = 4;
    while (narrow_lanes * 2 <= small_ci(lanes)) narrow_lanes *= 2;
    stage_block(k, nhwc, tasks_outer, merged, p, l, !full, narrow_lanes);
}

inline void apply_cuda(const Conv2DBackpropFilterCudaKnobs &k, const Structure &, Conv2DBackpropFilterPipeline &p) {
    Loops l;
    Func block_sum =
        split_into_blocks(p.accumulator.update(), p.positions.y, p, l, k.rows_per_block, k.images_per_block);
    const int threads_o = k.threads_inner, threads_ci = k.threads_other;
    Var o_block{"o_block"}, o_thread{"o_thread"}, ci_block{"ci_block"}, ci_thread{"ci_thread"}, tap{"tap"};

    // One thread per filter element: threads along o (coalesced
    // out_backprop reads in NHWC) and ci.
    p.accumulator.compute_root()
        .fuse(p.fw, p.fh, tap)
        .gpu_tile(p.o, p.ci, o_block, ci_block, o_thread, ci_thread, threads_o, threads_ci, TailStrategy::GuardWithIf)
        .gpu_blocks(tap);
    // Every block of the reduction is one kernel launch; each thread sums
    // its element over the block in a register, then adds it once.
    p.accumulator.update()
        .fuse(p.fw, p.fh, tap)
        .split(p.o, o_block, o_thread, threads_o, TailStrategy::GuardWithIf)
        .split(p.ci, ci_block, ci_thread, threads_ci, TailStrategy::GuardWithIf)
        .reorder(o_thread, ci_thread, o_block, ci_block, tap, l.oh_block, l.n_block)
        .gpu_threads(o_thread, ci_thread)
        .gpu_blocks(o_block, ci_block, tap);
    // At the innermost thread loop: each thread's own element, in a register.
    // (At ci_thread, one loop out, every thread row would compute the whole
    // row of block_sum in global memory, and the threads past Cout wrote past
    // its end: compute-sanitizer on an H200.)
    block_sum.compute_at(p.accumulator, o_thread);
    p.output.fuse(p.fw, p.fh, tap)
        .gpu_tile(p.o, p.ci, o_block, ci_block, o_thread, ci_thread, threads_o, threads_ci, TailStrategy::GuardWithIf)
        .gpu_blocks(tap);
}

}  // namespace conv2d_backprop_filter_schedule

inline void apply(const Knobs &knobs, const Structure &structure, Conv2DBackpropFilterPipeline &pipeline,
                  const Halide::Target &target) {
    if (device_of(target) == Device::cuda)
        return conv2d_backprop_filter_schedule::apply_cuda(Conv2DBackpropFilterCudaKnobs::from(knobs), structure,
                                                           pipeline);
    conv2d_backprop_filter_schedule::apply_cpu(Conv2DBackpropFilterCpuKnobs::from(knobs), structure, pipeline, target);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
