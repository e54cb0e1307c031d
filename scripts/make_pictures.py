#!/usr/bin/env python3
"""Draws the pictures of docs/learn.md into docs/img/ (SVG, text kept as text so the
files stay small). Every number in the drawings comes from the code's constants below
(checked against the sources by tests/python/test_learn_docs.py) or from a run.

    .venv/bin/python scripts/make_pictures.py [--out docs/img] [--cli build/tools/onnxmini]

Pictures:
  gemm_panels.svg        the packed A block and B panel, the B sliver, the C tile, and
                         which cache level holds each (kernels/gemm_engine/gemm_builtin.cc)
  microkernel_tile.svg   the AVX-512 14 x 32 register tile: 28 accumulators, 2 B vectors,
                         1 broadcast of A (kernels/gemm_engine/sgemm_kernel_avx512.cc)
  im2col_vs_implicit.svg im2col copies every tap into a K x P matrix; the implicit GEMM
                         reads the rows of a padded input in place (kernels/nn/conv*.cc)
  transpose16.svg        the 16 x 16 register transpose, stage by stage, computed by
                         replaying its shuffles (kernels/simd/transpose16_avx512.h)
  profile_by_op.svg      time per op type of models/cnn_small.onnx, reference kernels vs
                         fast kernels, from two profiles this script records with the CLI
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PICTURES = ["gemm_panels.svg", "microkernel_tile.svg", "im2col_vs_implicit.svg", "transpose16.svg",
            "profile_by_op.svg"]

# AVX-512 block sizes of the builtin SGEMM (sgemm_kernel_avx512.cc's make_set).
MR, NR, KC, MC, NC = 14, 32, 512, 112, 4096
# Caches of the machine the docs measure on (Intel Xeon, lscpu): L1d 48 KiB, L2 2 MiB per core.
L1_KIB, L2_KIB = 48, 2048

plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "onnxmini", "font.size": 9,
                     "font.family": "DejaVu Sans"})
COL = {"A": "#4C72B0", "B": "#DD8452", "C": "#55A868", "reg": "#C44E52", "pad": "#CCCCCC", "grey": "#888888"}


def save(fig, out, name):
    fig.savefig(out / name, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)


def box(ax, x, y, w, h, color, label=None, alpha=0.35, fs=8, lw=1.2):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=color, alpha=alpha, lw=lw))
    ax.add_patch(Rectangle((x, y), w, h, facecolor="none", edgecolor=color, lw=lw))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fs)


def arrow(ax, a, b, text=None, color="black"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=color, lw=1))
    if text:
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.15, text, ha="center", fontsize=7, color=color)


def gemm_panels(out):
    """C[M,N] += A[M,K] B[K,N], cut into the blocks the driver packs."""
    fig, ax = plt.subplots(figsize=(8.2, 4.4))
    ax.set_xlim(0, 16.5), ax.set_ylim(-0.6, 8.4), ax.axis("off")
    # A: MC x KC block of A, in MR-tall slivers.
    box(ax, 0.2, 2.0, 3.0, 5.0, COL["A"], alpha=0.12)
    ax.text(1.7, 6.55, "A (M x K)", ha="center")
    box(ax, 1.0, 3.2, 2.0, 2.6, COL["A"], alpha=0.4)
    for i in range(1, 5):
        ax.plot([1.0, 3.0], [3.2 + i * 0.52, 3.2 + i * 0.52], color=COL["A"], lw=0.6)
    ax.text(2.0, 2.7, f"packed A block\nMC x KC = {MC} x {KC}\n{MC * KC * 4 // 1024} KiB: L2", ha="center",
            va="top", fontsize=7.5)
    ax.text(1.0, 5.95, f"MR = {MR}-row slivers", fontsize=7, color=COL["A"])
    # B: KC x NC panel, in NR-wide slivers.
    box(ax, 4.6, 5.2, 7.0, 2.6, COL["B"], alpha=0.12)
    ax.text(8.1, 8.0, "B (K x N)", ha="center")
    box(ax, 5.4, 5.6, 5.4, 1.8, COL["B"], alpha=0.35)
    for j in range(1, 9):
        ax.plot([5.4 + j * 0.6, 5.4 + j * 0.6], [5.6, 7.4], color=COL["B"], lw=0.6)
    box(ax, 5.4, 5.6, 0.6, 1.8, COL["B"], alpha=0.8)
    ax.text(8.1, 5.35, f"packed B panel KC x NC = {KC} x {NC}: {KC * NC * 4 // 2**20} MiB, L3", ha="center",
            fontsize=7.5)
    ax.text(4.5, 7.6, f"B sliver KC x NR = {KC} x {NR}\n{KC * NR * 4 // 1024} KiB: L1 / L2", fontsize=7.5,
            ha="right", va="center")
    arrow(ax, (4.55, 7.5), (5.5, 7.2))
    # C
    box(ax, 4.6, 0.6, 7.0, 4.2, COL["C"], alpha=0.12)
    ax.text(8.1, 0.3, "C (M x N)", ha="center")
    box(ax, 5.4, 3.2, 0.6, 0.52, COL["reg"], alpha=0.8)
    ax.text(6.1, 3.1, f"C tile MR x NR = {MR} x {NR}:\n28 zmm registers", fontsize=7.5, va="top")
    arrow(ax, (3.0, 3.46), (5.35, 3.46), "A sliver", COL["A"])
    arrow(ax, (5.7, 5.55), (5.7, 3.8), None, COL["B"])
    # Loop nest legend.
    ax.text(12.0, 7.6, "loop nest (gemm_builtin.cc)", fontsize=8, weight="bold")
    nest = [f"for jc in N step NC={NC}", f"  for pc in K step KC={KC}", "    pack B panel  -> L3",
            f"    for ic in M step MC={MC}", "      pack A block -> L2", f"      for jr step NR={NR}",
            "        B sliver -> L1/L2", f"        for ir step MR={MR}", "          micro-kernel:",
            "          C tile in registers"]
    for i, line in enumerate(nest):
        ax.text(12.0, 7.1 - i * 0.42, line, fontsize=7.5, family="DejaVu Sans Mono")
    ax.text(12.0, 2.6, f"caches here: L1d {L1_KIB} KiB,\nL2 {L2_KIB} KiB per core", fontsize=7.5, color=COL["grey"],
            va="top")
    save(fig, out, "gemm_panels.svg")


def microkernel_tile(out):
    """One k step of the 14 x 32 kernel: broadcast a[i], 2 loads of b, 28 FMAs."""
    fig, ax = plt.subplots(figsize=(7.4, 4.6))
    ax.set_xlim(-3.2, 10.5), ax.set_ylim(-1.2, 16.8), ax.axis("off")
    for i in range(MR):
        y = MR - 1 - i
        box(ax, -1.6, y, 1.0, 0.9, COL["A"], f"a[{i}]", alpha=0.3, fs=6.5)
        for h in range(2):
            box(ax, 0.4 + h * 4.2, y, 4.0, 0.9, COL["reg"], f"zmm{2 * i + h}: c[{i}][{16 * h}..{16 * h + 15}]",
                alpha=0.15 + 0.1 * h, fs=6.5, lw=0.8)
    for h in range(2):
        box(ax, 0.4 + h * 4.2, MR + 0.6, 4.0, 0.9, COL["B"], f"b[k][{16 * h}..{16 * h + 15}] (zmm{28 + h})", 0.5,
            fs=6.5)
    ax.text(-1.1, MR + 0.7, "A: broadcast\n(zmm30)", ha="center", fontsize=6.5, color=COL["A"])
    ax.text(4.4, -0.9, "per k step: 2 loads of B, 14 broadcasts of A, 28 FMAs (16 lanes each); "
            "31 of 32 zmm registers", ha="center", fontsize=7.5)
    ax.text(9.1, 7.0, "c[i][j] +=\n a[i][k] * b[k][j]\n\nkc steps,\nthen one store\nof the tile", fontsize=7.5,
            va="center")
    save(fig, out, "microkernel_tile.svg")


def im2col_vs_implicit(out):
    """A 3x3 convolution as a GEMM: the B operand copied (im2col) or read in place."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    for ax in (a1, a2):
        ax.set_aspect("equal"), ax.axis("off")
    H = W = 5
    # Left: im2col.
    a1.set_xlim(-0.5, 17), a1.set_ylim(-3.5, 9.5)
    a1.set_title("im2col: copy every tap (K x P matrix)", fontsize=9)
    for r in range(H):
        for c in range(W):
            box(a1, c, 4 + (H - 1 - r), 1, 1, COL["B"], None, alpha=0.1, lw=0.5)
    box(a1, 0, 6, 3, 3, COL["A"], None, alpha=0.35)
    a1.text(2.5, 3.4, "input channel c (H x W)", ha="center", fontsize=7.5)
    K, P = 9, 6
    for k in range(K):
        for p in range(P):
            box(a1, 8 + p, 8 - k, 1, 1, COL["B"], None, alpha=0.08 + 0.25 * (p == 0), lw=0.4)
    a1.text(11, -1.6, f"col: rows k = (c, kh, kw),\ncolumns p = output pixels\n(C*9 x OH*OW floats written)",
            ha="center", fontsize=7.5, va="top")
    arrow(a1, (3.2, 7.5), (7.8, 7.5), None, COL["A"])
    a1.text(5.5, 7.9, "9 taps of\npixel p = 0", ha="center", fontsize=7, color=COL["A"])
    # Right: implicit GEMM.
    a2.set_xlim(-0.5, 17), a2.set_ylim(-3.5, 9.5)
    a2.set_title("implicit GEMM: read padded rows in place", fontsize=9)
    for r in range(H + 2):
        for c in range(W + 2):
            pad = r in (0, H + 1) or c in (0, W + 1)
            box(a2, c, 2 + (H + 1 - r), 1, 1, COL["pad"] if pad else COL["B"], None, alpha=0.25 if pad else 0.1,
                lw=0.5)
    for kh, kw, col in [(0, 0, COL["A"]), (1, 1, COL["C"]), (2, 2, COL["reg"])]:
        box(a2, kw, 2 + (H + 1 - kh) - 0.0, W, 1, col, None, alpha=0.35, lw=1.0)
    a2.text(3.5, 1.4, "zero-padded copy of channel c\n(once per call)", ha="center", fontsize=7.5, va="top")
    for i, (t, col) in enumerate([("k = (c,0,0)", COL["A"]), ("k = (c,1,1)", COL["C"]), ("k = (c,2,2)", COL["reg"])]):
        a2.text(8.3, 8 - 1.4 * i, f"B row {t}: {W} floats at\nbase + k_offset[k] + row", fontsize=7, color=col,
                va="center")
    a2.text(11, -1.6, "the micro-kernel loads each B row\nfrom the padded input: no K x P matrix,\nno B packing",
            ha="center", fontsize=7.5, va="top")
    save(fig, out, "im2col_vs_implicit.svg")


# ---- the 16 x 16 transpose, replayed on (row, col) labels -------------------
def _blocks(v):
    return v.reshape(4, 4)


def unpacklo(a, b):
    return np.stack([np.stack([x[0], y[0], x[1], y[1]]) for x, y in zip(_blocks(a), _blocks(b))]).reshape(16)


def unpackhi(a, b):
    return np.stack([np.stack([x[2], y[2], x[3], y[3]]) for x, y in zip(_blocks(a), _blocks(b))]).reshape(16)


def shuffle_ps(a, b, imm):
    sel = [imm & 3, (imm >> 2) & 3, (imm >> 4) & 3, (imm >> 6) & 3]
    return np.stack([np.stack([x[sel[0]], x[sel[1]], y[sel[2]], y[sel[3]]])
                     for x, y in zip(_blocks(a), _blocks(b))]).reshape(16)


def shuffle_f32x4(a, b, imm):
    A, B = _blocks(a), _blocks(b)
    return np.concatenate([A[imm & 3], A[(imm >> 2) & 3], B[(imm >> 4) & 3], B[(imm >> 6) & 3]])


def transpose_stages():
    """in[r] lane c holds r*16 + c; returns the registers after each stage of transpose16x16."""
    inp = [np.arange(16) + 16 * r for r in range(16)]
    t = [None] * 16
    for i in range(0, 16, 2):
        t[i], t[i + 1] = unpacklo(inp[i], inp[i + 1]), unpackhi(inp[i], inp[i + 1])
    u = [None] * 16
    lo, hi = 0x44, 0xEE  # _MM_SHUFFLE(1, 0, 1, 0), _MM_SHUFFLE(3, 2, 3, 2)
    for g in range(4):
        x = t[4 * g:4 * g + 4]
        u[4 * g:4 * g + 4] = [shuffle_ps(x[0], x[2], lo), shuffle_ps(x[0], x[2], hi), shuffle_ps(x[1], x[3], lo),
                              shuffle_ps(x[1], x[3], hi)]
    o = [None] * 16
    for q in range(4):
        w0, w1 = shuffle_f32x4(u[q], u[4 + q], 0x88), shuffle_f32x4(u[q], u[4 + q], 0xDD)
        w2, w3 = shuffle_f32x4(u[8 + q], u[12 + q], 0x88), shuffle_f32x4(u[8 + q], u[12 + q], 0xDD)
        o[q], o[4 + q] = shuffle_f32x4(w0, w2, 0x88), shuffle_f32x4(w1, w3, 0x88)
        o[8 + q], o[12 + q] = shuffle_f32x4(w0, w2, 0xDD), shuffle_f32x4(w1, w3, 0xDD)
    stages = [np.array(s) for s in (inp, t, u, o)]
    if not np.array_equal(stages[-1], stages[0].T):
        raise SystemExit("transpose16x16 replay does not transpose: the picture would be wrong")
    return stages


def transpose16(out):
    titles = ["in: register r = row r", "1. unpacklo/hi_ps\n(32-bit pairs)", "2. shuffle_ps\n(64-bit pairs)",
              "3. shuffle_f32x4 x2\nout: register c = column c"]
    fig, axes = plt.subplots(1, 4, figsize=(11, 3.4))
    cmap = plt.get_cmap("tab20")
    for ax, st, title in zip(axes, transpose_stages(), titles):
        rows = st // 16
        ax.imshow(rows, cmap=cmap, vmin=0, vmax=19, interpolation="nearest")
        for r in range(16):
            for c in range(16):
                ax.text(c, r, str(st[r, c] % 16), ha="center", va="center", fontsize=4.2)
        ax.set_title(title, fontsize=8)
        ax.set_xticks([0, 4, 8, 12, 15]), ax.set_yticks([0, 4, 8, 12, 15])
        ax.tick_params(labelsize=6)
        ax.set_xlabel("lane", fontsize=7)
    axes[0].set_ylabel("zmm register", fontsize=7)
    fig.text(0.5, -0.04, "colour = source row, number = source column; 48 shuffles, no memory traffic "
             "(kernels/simd/transpose16_avx512.h)", ha="center", fontsize=8)
    save(fig, out, "transpose16.svg")


# ---- profile plot -------------------------------------------------------------
def record_profile(cli, model, kernels, tmp, runs=20):
    prefix = os.path.join(tmp, f"cnn_small_{kernels}")
    subprocess.run([cli, "run", model, "--input", "input=random:1x3x32x32", "--kernels", kernels, "--warmup", "5",
                    "--repeat", str(runs), "--profile", prefix, "--profile-skip-runs", "5"], check=True,
                   capture_output=True)
    path = next(p for p in os.listdir(tmp) if p.startswith(os.path.basename(prefix)) and p.endswith(".json"))
    return json.load(open(os.path.join(tmp, path)))


def time_by_op(trace):
    by_op, runs = {}, 0
    for e in trace:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            op = e["args"]["op_name"]
            by_op[op] = by_op.get(op, 0.0) + e["dur"]
        elif e.get("cat") == "Session" and e.get("name") == "model_run":
            runs += 1
    n = max(1, runs)
    return {k: v / n for k, v in by_op.items()}


def profile_by_op(out, cli):
    with tempfile.TemporaryDirectory() as tmp:
        model = str(ROOT / "models" / "cnn_small.onnx")
        ref = time_by_op(record_profile(cli, model, "reference", tmp))
        fast = time_by_op(record_profile(cli, model, "fast", tmp))
    ops = sorted(ref, key=lambda k: -ref[k])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.5, 3.4))
    y = np.arange(len(ops))
    a1.barh(y - 0.2, [ref[o] for o in ops], 0.4, label="--kernels reference", color=COL["B"])
    a1.barh(y + 0.2, [fast.get(o, 0) for o in ops], 0.4, label="fast kernels", color=COL["A"])
    a1.set_yticks(y, ops, fontsize=7), a1.invert_yaxis(), a1.set_xscale("log")
    a1.set_xlabel("kernel time per run (us, log scale)", fontsize=8), a1.legend(fontsize=7)
    a1.set_title("models/cnn_small.onnx, time by op type", fontsize=9)
    speed = [ref[o] / fast[o] if fast.get(o) else 0 for o in ops]
    a2.barh(y, speed, color=COL["C"])
    a2.set_yticks(y, ops, fontsize=7), a2.invert_yaxis(), a2.set_xscale("log")
    a2.set_xlabel("reference / fast (x, log scale)", fontsize=8)
    a2.set_title("speed-up per op type", fontsize=9)
    fig.text(0.5, -0.06, "kernel_time events of two onnxmini profiles (20 runs each after 5 warm-up runs, "
             "1 thread); regenerated by scripts/make_pictures.py, so the bars are this machine's", ha="center",
             fontsize=7)
    save(fig, out, "profile_by_op.svg")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--cli", default=str(ROOT / "build" / "tools" / "onnxmini"))
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    gemm_panels(out)
    microkernel_tile(out)
    im2col_vs_implicit(out)
    transpose16(out)
    if not os.access(a.cli, os.X_OK):
        sys.exit(f"{a.cli}: no onnxmini CLI to record the profiles with (build it: scripts/build.sh onnxmini_cli)")
    profile_by_op(out, a.cli)
    for name in PICTURES:
        print(out / name)


if __name__ == "__main__":
    main()
