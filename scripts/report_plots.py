#!/usr/bin/env python3
"""The main job's report as people would rather read it: a five-line summary
and PNG plots, from gradtune-bench's JSON rows and the last tuning run's curve.

    report_plots.py --rows build/report.json --out-dir build/report \
        [--curve .gradtune/trials-<class>.jsonl.curve.json] \
        [--markdown build/report/summary.md]

Writes into --out-dir, one PNG each:
  speedup-<op>.png   per shape: tuned speedup over the generic default, over
                     the best oneDNN time and over TensorFlow's default path
                     (where those were timed), on a log scale with 1x marked;
  roofline.png       per row: the tuned time's fraction of this machine's
                     roofline (FMA peak or DRAM copy bandwidth, measured by
                     the benchmark run itself);
  tuning-curves.png  best-so-far geomean speedup over the generic variant
                     against time, per structure group: the curve `gradtune
                     tune` printed and wrote next to its log (<log>.curve.json).
and prints (or writes to --markdown) the summary lines and the image links,
relative to the markdown file, for the report to start with.
Needs matplotlib (scripts/requirements.txt puts it in .venv).
"""
import argparse
import collections
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import patches, ticker  # noqa: E402


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def best_onednn_ms(row):
    times = [t for t in (row.get("onednn_tf_layout_median_ms"), row.get("onednn_own_layout_median_ms")) if t]
    return min(times) if times else 0.0


def ratios(row):
    """Tuned speedup over the generic default, oneDNN-best and TF default (0: not timed)."""
    tuned = row["tuned_median_ms"]
    onednn = best_onednn_ms(row)
    tf = row.get("tf_default_median_ms") or 0.0
    return row["generic_median_ms"] / tuned, onednn / tuned if onednn else 0.0, tf / tuned if tf else 0.0


def label(row):
    return f"{row['id']} N={row['batch']}"


def plot_speedups(rows, out_dir):
    """One grouped bar chart per op; returns {op: file name}."""
    files = {}
    by_op = collections.defaultdict(list)
    for row in rows:
        by_op[row["op"]].append(row)
    for op, op_rows in sorted(by_op.items()):
        series = [("over the generic default", 0, "#4c72b0"), ("over oneDNN (best layout)", 1, "#dd8452"),
                  ("over TensorFlow (default path)", 2, "#55a868")]
        values = [ratios(r) for r in op_rows]
        shown = [s for s in series if any(v[s[1]] > 0 for v in values)]
        fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(op_rows) + 2), 4))
        width = 0.8 / len(shown)
        for k, (name, index, color) in enumerate(shown):
            xs = [i + (k - (len(shown) - 1) / 2) * width for i in range(len(op_rows))]
            ys = [v[index] if v[index] > 0 else float("nan") for v in values]
            ax.bar(xs, ys, width, label=name, color=color)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(op_rows)))
        ax.set_xticklabels([label(r) for r in op_rows], rotation=45, ha="right")
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x" if f"{v:.1e}"[:3] in ("2.0", "5.0") else ""))
        ax.set_ylabel("gradtune's speedup (> 1x: faster)")
        ax.set_title(op, fontsize="medium")
        ax.legend(fontsize="small")
        fig.tight_layout()
        name = f"speedup-{op}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=100)
        plt.close(fig)
        files[op] = name
    return files


def plot_roofline(rows, out_dir):
    rows = [r for r in rows if r.get("roofline_fraction", 0) > 0]
    if not rows:
        return None
    ops = sorted({r["op"] for r in rows})
    colors = dict(zip(ops, plt.get_cmap("tab10").colors))
    fig, ax = plt.subplots(figsize=(max(6, 0.3 * len(rows) + 4), 4))
    ax.bar(range(len(rows)), [100 * r["roofline_fraction"] for r in rows],
           color=[colors[r["op"]] for r in rows])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label(r) for r in rows], rotation=60, ha="right", fontsize="small")
    ax.set_ylabel("% of this machine's roofline")
    first = rows[0]
    ax.set_title(f"Roofline: FMA peak {first['fma_peak_gflops']:.0f} GFLOP/s, "
                 f"DRAM {first['dram_gbs']:.1f} GB/s (measured by the run)", fontsize="medium")
    ax.axhline(100, color="black", linewidth=0.8)
    ax.legend(handles=[patches.Patch(color=colors[op], label=op) for op in ops], fontsize="x-small",
              loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "roofline.png"), dpi=100)
    plt.close(fig)
    return "roofline.png"


def read_curve(path):
    """{group: [(minutes, best-so-far)]}, candidates measured and minutes, from
    the <log>.curve.json of a `gradtune tune` run."""
    run = json.load(open(path))
    curves = {g["group"]: [(seconds / 60, best) for seconds, _, best in g["points"]]
              for g in run["groups"] if g["points"]}
    return curves, run["measured"], run["elapsed_s"] / 60


def plot_curves(curves, minutes, out_dir):
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5 + 0.2 * len(curves)))
    for group, points in sorted(curves.items()):
        xs = [p[0] for p in points] + [minutes]
        ys = [p[1] for p in points] + [points[-1][1]]
        ax.step(xs, ys, where="post", label=group)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("minutes into the tuning run")
    ax.set_ylabel("best-so-far geomean speedup over generic (x)")
    ax.set_title("Tuning curves, per structure group", fontsize="medium")
    # Below the axes, whole: groups differ only late in their labels (stride, filter size).
    ax.legend(fontsize="xx-small", loc="upper center", bbox_to_anchor=(0.5, -0.15))
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "tuning-curves.png"), dpi=100)
    plt.close(fig)
    return "tuning-curves.png"


def summary(rows, curves, measured, minutes):
    """Five lines: what got faster, by how much, against what, on which CPU."""
    first = rows[0]
    per_op = collections.defaultdict(list)
    for row in rows:
        per_op[row["op"]].append(ratios(row))
    best_row = max(rows, key=lambda r: ratios(r)[0])

    def per_op_text(index):
        parts = [f"{op} {geomean([v[index] for v in vals]):.2f}x" for op, vals in sorted(per_op.items())
                 if any(v[index] > 0 for v in vals)]
        return ", ".join(parts)

    lines = [
        f"- **Machine:** {first['machine']}, Halide target class `{first['target_class']}`; "
        f"{len(rows)} rows, each timed side by side in one run.",
        f"- **Over the generic default:** geomean {geomean([ratios(r)[0] for r in rows]):.2f}x "
        f"({per_op_text(0)}); best row {best_row['op']} {label(best_row)} {ratios(best_row)[0]:.2f}x.",
    ]
    onednn = per_op_text(1)
    lines.append(f"- **Over oneDNN** (best of its two layouts; > 1: gradtune faster): {onednn}."
                 if onednn else "- **Over oneDNN:** not timed (no libdnnl-dev in this build).")
    tf = per_op_text(2)
    lines.append(f"- **Over TensorFlow's default path:** {tf}." if tf else
                 "- **Over TensorFlow:** not timed (no .tf-venv: scripts/tf-venv.sh makes it).")
    fractions = sorted(r["roofline_fraction"] for r in rows if r.get("roofline_fraction", 0) > 0)
    roof = (f"roofline median {100 * fractions[len(fractions) // 2]:.0f}% "
            f"({100 * fractions[0]:.0f}-{100 * fractions[-1]:.0f}%)" if fractions else "roofline not computed")
    if curves:
        best = max(max(best for _, best in points) for points in curves.values())
        tune = (f"tuning: {measured} candidates in {minutes:.0f} min over {len(curves)} structure group(s), "
                f"best group {best:.2f}x over generic")
    else:
        tune = "no tuning run given"
    lines.append(f"- **Where it stands:** {roof}; {tune}.")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", required=True, help="gradtune-bench --json output")
    parser.add_argument("--out-dir", required=True, help="where the PNG files go")
    parser.add_argument("--curve", help="the tuning run's curve (<trials log>.curve.json, written by gradtune tune)")
    parser.add_argument("--markdown", help="write the summary and image links here (default: stdout)")
    args = parser.parse_args()

    try:
        rows = json.load(open(args.rows))
    except (OSError, ValueError) as e:
        sys.exit(f"report_plots: cannot read the benchmark rows {args.rows}: {e}")
    rows = [r for r in rows if not r.get("error") and r.get("tuned_median_ms", 0) > 0]
    if not rows:
        sys.exit(f"report_plots: {args.rows} has no timed row")
    curves, measured, minutes = {}, 0, 0.0
    if args.curve:
        try:
            curves, measured, minutes = read_curve(args.curve)
        except OSError as e:
            sys.exit(f"report_plots: cannot read the tuning curve {args.curve}: {e}")
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"report_plots: {args.curve} is not a curve written by gradtune tune: {e!r}")

    os.makedirs(args.out_dir, exist_ok=True)
    images = [(f"Speedup of {op}", name) for op, name in plot_speedups(rows, args.out_dir).items()]
    roofline = plot_roofline(rows, args.out_dir)
    if roofline:
        images.append(("Fraction of the roofline per row", roofline))
    curve_file = plot_curves(curves, minutes, args.out_dir)
    if curve_file:
        images.append(("Tuning curves", curve_file))

    base = os.path.dirname(os.path.abspath(args.markdown)) if args.markdown else os.getcwd()
    text = summary(rows, curves, measured, minutes) + [""]
    for title, name in images:
        text.append(f"![{title}]({os.path.relpath(os.path.join(args.out_dir, name), base)})")
    text.append("")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(text) + "\n")
    else:
        print("\n".join(text))


if __name__ == "__main__":
    main()
