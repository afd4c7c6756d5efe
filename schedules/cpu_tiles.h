// The CPU tiling that the direct convolution schedules share (Conv2D,
// DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput): an output
// tiled into register tiles along a vectorised unit-stride dimension
// (`inner`), the other tiled dimension (`other`) and rows, run as parallel
// tasks of whole tile rows.
#pragma once

#include "Halide.h"

namespace gradtune {

// Names shared by an op's full-tile and small-extent branches, so that
// producers can be computed at the same loop in all of them.
struct CpuLoops {
    Halide::Var inner_tile{"inner_tile"}, inner_lane{"inner_lane"};
    Halide::Var other_tile{"other_tile"}, other_pos{"other_pos"};
    Halide::Var row_tile{"row_tile"}, row_pos{"row_pos"};
    Halide::Var task{"task"}, task_n{"task_n"};
};

// Tiles `stage` into register tiles of inner x other x rows and parallel tasks
// of rows_per_task tile rows (of image n). `tail` handles extents that the
// tile does not divide: ShiftInwards for the full-tile branches (extents >=
// tile, so a shifted tile stays inside the output), GuardWithIf for small
// extents.
inline void tile_cpu(Halide::Stage stage, const CpuLoops &l, Halide::Var inner, Halide::Var other, Halide::Var y,
                     Halide::Var n, int inner_size, int other_size, int rows, int rows_per_task, bool channel_outer,
                     int vector_width, Halide::TailStrategy tail) {
    using Halide::TailStrategy;
    stage.split(inner, l.inner_tile, l.inner_lane, inner_size, tail)
        .split(other, l.other_tile, l.other_pos, other_size, tail)
        .split(y, l.row_tile, l.row_pos, rows, tail)
        .split(l.row_tile, l.task, l.row_tile, rows_per_task, TailStrategy::GuardWithIf);
    if (channel_outer) {
        stage.reorder(l.inner_lane, l.other_pos, l.row_pos, l.other_tile, l.row_tile, l.inner_tile, l.task, n);
    } else {
        stage.reorder(l.inner_lane, l.other_pos, l.row_pos, l.inner_tile, l.other_tile, l.row_tile, l.task, n);
    }
    stage.fuse(l.task, n, l.task_n).parallel(l.task_n);
    stage.vectorize(l.inner_lane, vector_width, TailStrategy::GuardWithIf);
}

}  // namespace gradtune
