"""FractionalAvgPool and FractionalAvgPoolGrad cases: the forward op over
random and TF shapes, the gradient over TF's direct tests, and the gradient
over the sequences the forward op returned (phase 2 of main())."""
import math

import numpy as np

from .common import DTYPE_NAMES, F16, F32, F64, I32, I64, add, data, i64, iota, rng_for


# --- FractionalAvgPool and its gradient ---------------------------------------

FAP_PHASE2 = []  # FAP cases whose results seed FractionalAvgPoolGrad cases


def fap_attrs(ratio, pseudo, overlap, seed=0, seed2=0, det=True):
    return {"pooling_ratio": [float(r) for r in ratio], "pseudo_random": pseudo, "overlapping": overlap,
            "deterministic": det, "seed": seed, "seed2": seed2}


def build_fap():
    op = "FractionalAvgPool"
    r2, r3 = math.sqrt(2), math.sqrt(3)
    shapes = [  # name, shape, ratio
        ("tf_5x20x30x3", (2, 20, 30, 2), (1, r3, r2, 1)),
        ("small_7x13", (1, 7, 13, 1), (1, r2, r3, 1)),
        ("b2_13x11x3", (2, 13, 11, 3), (1, r3, r2, 1)),
        ("ratio2", (1, 10, 12, 2), (1, 2, 2, 1)),
        ("ratio_1_5", (1, 9, 10, 1), (1, 1.5, 1.5, 1)),
        ("tf_30x50", (1, 30, 50, 1), (1, math.sqrt(11), math.sqrt(37), 1)),
        ("tf_30x50_b", (1, 30, 50, 1), (1, math.sqrt(11), math.sqrt(27), 1)),
        ("ratio_1", (1, 5, 6, 2), (1, 1, 1, 1)),
        ("rows_only", (1, 17, 23, 1), (1, math.sqrt(13), 1, 1)),
        ("tf_17x23", (1, 17, 23, 1), (1, math.sqrt(13), math.sqrt(7), 1)),
    ]
    i = 0
    for name, shape, ratio in shapes:
        for pseudo in (False, True):
            for overlap in (False, True):
                for dtype in (F32, F64, I32, I64):
                    i += 1
                    if name.startswith("tf_") and dtype not in (F32, I32):
                        continue  # keep the larger shapes to two dtypes
                    rng = rng_for(f"{op}{name}{pseudo}{overlap}{dtype}")
                    x = data(rng, shape, dtype, lo=-500, hi=499) if dtype in (I32, I64) else \
                        data(rng, shape, dtype, lo=-50, hi=49)
                    seed, seed2 = 341261000 + i, (i * 7919) % 100003
                    cname = f"{name}_{'pseudo' if pseudo else 'random'}_{'overlap' if overlap else 'disjoint'}_{DTYPE_NAMES[dtype]}"
                    add(op, cname, [("value", x)], fap_attrs(ratio, pseudo, overlap, seed, seed2), fapg_seed=True)
    # 64-bit seeds, seed2 only, and the (seed, 0) pair.
    x = iota((1, 12, 12, 1), F32)
    add(op, "seed_64bit", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), True, False, 2 ** 62 + 12345, 2 ** 63 - 1),
        fapg_seed=True)
    add(op, "seed_negative", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), False, True, -5, -7), fapg_seed=True)
    add(op, "seed2_only", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), False, False, 0, 99), fapg_seed=True)
    add(op, "seed_only", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), True, True, 99, 0), fapg_seed=True)
    # float32 output-size division: 10 / 1.1 ...
    add(op, "float32_division", [("value", iota((1, 11, 10, 1), F64))],
        fap_attrs((1, 1.1, 10.0 / 3.0, 1), False, False, 3, 4), fapg_seed=True)
    add(op, "int_worked_6x6", [("value", iota((1, 6, 6, 1), I32))], fap_attrs((1, 2, 2, 1), False, True, 1, 2),
        fapg_seed=True)
    # Bad inputs (rows 50-56, 68).
    bad = iota((1, 6, 6, 1), F32)
    add(op, "row50_ratio_length_3", [("value", bad)], fap_attrs((1, 1.5, 1.5), False, False, det=False))
    add(op, "row51_ratio_length_5", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1, 1), False, False, det=False))
    add(op, "row52_ratio_negative", [("value", bad)], fap_attrs((1, -1, 3, 1), False, False, det=False))
    add(op, "row52_ratio_below_1", [("value", bad)], fap_attrs((1, 0.5, 1.5, 1), False, False, det=False))
    add(op, "row53_batch_ratio", [("value", bad)], fap_attrs((2, 3, 1.5, 1), False, False, det=False))
    add(op, "row53_channel_ratio", [("value", bad)], fap_attrs((1, 1.5, 1.5, 2), False, False, det=False))
    add(op, "row54_seed_not_deterministic", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 0, False))
    add(op, "row54_seed2_not_deterministic", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1), False, False, 0, 1, False))
    add(op, "row55_rank_3", [("value", iota((6, 6, 1), F32))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))
    add(op, "row56_ratio_above_size", [("value", np.ones((1, 1, 1, 1), F32))],
        fap_attrs((1, 1.0000014, 1, 1), False, False, 1, 1))
    add(op, "row56_tf_repro", [("value", np.array([[[[1, 4, 2, 3]]]], F32))],
        fap_attrs((1, 1.44, 1.73, 1), False, False, 1, 1))
    add(op, "row56_empty_batch", [("value", np.zeros((0, 6, 6, 1), F32))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))
    add(op, "row68_half", [("value", iota((1, 6, 6, 1), F16))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))


def build_fapg_direct():
    op = "FractionalAvgPoolGrad"
    # TF's direct tests (docs/tf-ops.md section 13.5): uniform sequences vs
    # AvgPoolGrad.
    i = 0
    for wr in (2, 5):
        for wc in (2, 4):
            for batch in (1, 3):
                for ch in (1, 2):
                    i += 1
                    dtype = (F32, F64, I32, I64)[i % 4]
                    rng = rng_for(f"{op}direct{i}")
                    rows, cols = wr * 5, wc * 7
                    dy = data(rng, (batch, 5, 7, ch), dtype, lo=-50, hi=50)
                    add(op, f"tf_disjoint_w{wr}x{wc}_b{batch}_c{ch}_{DTYPE_NAMES[dtype]}",
                        [("orig_input_tensor_shape", i64([batch, rows, cols, ch])), ("out_backprop", dy),
                         ("row_pooling_sequence", i64(range(0, rows + 1, wr))),
                         ("col_pooling_sequence", i64(range(0, cols + 1, wc)))], {"overlapping": False})
                    # Overlapping: rows = (wr-1)*5+1, ksize w, stride w-1; last entry + 1.
                    orows, ocols = (wr - 1) * 5 + 1, (wc - 1) * 7 + 1
                    rseq = [k * (wr - 1) for k in range(6)]
                    cseq = [k * (wc - 1) for k in range(8)]
                    rseq[-1] += 1
                    cseq[-1] += 1
                    add(op, f"tf_overlap_w{wr}x{wc}_b{batch}_c{ch}_{DTYPE_NAMES[dtype]}",
                        [("orig_input_tensor_shape", i64([batch, orows, ocols, ch])), ("out_backprop", dy),
                         ("row_pooling_sequence", i64(rseq)), ("col_pooling_sequence", i64(cseq))],
                        {"overlapping": True})
    # Worked example of the op doc (docs/tf-ops.md section 8): sequence
    # [0, 2, 5] over 5 values.
    for overlap in (False, True):
        add(op, f"doc_example_{'overlap' if overlap else 'disjoint'}",
            [("orig_input_tensor_shape", i64([1, 5, 1, 1])), ("out_backprop", np.ones((1, 2, 1, 1), F64)),
             ("row_pooling_sequence", i64([0, 2, 5])), ("col_pooling_sequence", i64([0, 1]))],
            {"overlapping": overlap})
    # Bad inputs (rows 57-67, 68).
    good_dy = iota((1, 2, 3, 2), I32)

    def g(name, orig=(2, 2, 2, 2), dy=None, rows=(0, 1, 2, 3), cols=(0, 1, 2, 3), overlap=True, **flags):
        add(op, name, [("orig_input_tensor_shape", orig if isinstance(orig, np.ndarray) else i64(orig)),
                       ("out_backprop", good_dy if dy is None else dy), ("row_pooling_sequence", i64(rows)),
                       ("col_pooling_sequence", i64(cols))], {"overlapping": overlap}, **flags)

    g("row57_orig_shape_3_values", orig=(2, 2, 2))
    g("row57_orig_shape_2d", orig=np.array([[2, 2], [2, 2]], np.int64))
    g("row58_out_backprop_scalar", dy=np.array(1, np.int32))
    g("row59_out_backprop_zero_dims", dy=np.zeros((0, 0, 0, 0), np.int32))
    g("row59_out_backprop_zero_depth", dy=np.zeros((1, 2, 3, 0), np.int32))
    g("row60_tfsa_2021_067", orig=(1, 3, 2, 3), dy=np.ones((1, 1, 1, 1), F32), rows=(0,), cols=(0,))
    g("row60_cols_too_short", cols=(0, 1, 2))
    g("row61_batch_0", orig=(0, 1, 2, 3), dy=np.ones((1, 2, 2, 1), F32), rows=(0, 0, 0, 0, 0), cols=(-2, 0, 0, 2, 0))
    g("row61_rows_0", orig=(2, 0, 2, 2))
    g("row61_cols_0", orig=(2, 2, 0, 2))
    g("row61_depth_0", orig=(2, 2, 2, 0))
    g("row62_negative_orig", orig=(-1879048192,) * 4, dy=np.ones((1, 1, 1, 1), F32), rows=(0, 1), cols=(0, 1),
      isolate=True)
    g("row62_overflow", orig=(2 ** 40, 2 ** 40, 1, 1), dy=np.ones((1, 1, 1, 1), F32), rows=(0, 1), cols=(0, 1),
      isolate=True)
    g("row63_negative_row_start", rows=(-10, 1, 2, 3), cols=(1, 2, 3, 4))
    g("row64_negative_col", rows=(0, 1, 2, 3), cols=(1, 2, -3, 4))
    g("row65_disjoint_row_end_0", rows=(0, 0, 1, 2), overlap=False)
    g("row66_batch_larger", orig=(1, 2, 3, 2), dy=iota((2, 2, 3, 2), F32), isolate=True,
      policy_error=("InvalidArgument", "out_backprop batch/depth must match orig_input_tensor_shape",
                    "spec 15.3 / row 66: TF writes out of bounds"))
    g("row66_depth_larger", orig=(1, 2, 3, 1), dy=iota((1, 2, 3, 2), F32), isolate=True,
      policy_error=("InvalidArgument", "out_backprop batch/depth must match orig_input_tensor_shape",
                    "spec 15.3 / row 66: TF writes out of bounds"))
    g("row66_smaller_batch_depth", orig=(2, 2, 3, 3), dy=iota((1, 2, 3, 2), F32))
    g("row67_sequence_beyond_input", rows=(0, 1, 5, 9), cols=(0, 3, 7, 8), dy=iota((1, 3, 3, 2), F64))
    g("row67_decreasing_sequence", rows=(0, 2, 1, 2), cols=(3, 1, 2, 2), dy=iota((1, 3, 3, 2), F64), overlap=False)
    g("row67_extra_sequence_elements", rows=(0, 1, 2, 3, 4, 5), cols=(0, 1, 2, 3, 7), dy=iota((1, 2, 3, 2), F64))
    g("row68_half", dy=iota((1, 2, 3, 2), F16))
    g("orig_shape_int32", orig=np.array([2, 2, 2, 2], np.int32))


def build_fapg_from_fap(fap_results):
    """FractionalAvgPoolGrad over the sequences TF's forward op returned."""
    op = "FractionalAvgPoolGrad"
    for case, res in fap_results:
        if "outputs" not in res:
            continue
        out, rows, cols = res["outputs"]
        x = case["inputs"]["value"]
        rng = rng_for(op + case["name"])
        dtype = x.dtype
        dy = data(rng, out.shape, dtype, lo=-50, hi=50) if dtype in (I32, I64) else data(rng, out.shape, dtype)
        add(op, "from_fap_" + case["name"],
            [("orig_input_tensor_shape", i64(x.shape)), ("out_backprop", dy), ("row_pooling_sequence", rows),
             ("col_pooling_sequence", cols)], {"overlapping": case["attrs"]["overlapping"]})
