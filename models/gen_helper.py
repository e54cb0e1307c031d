"""Models built directly with onnx.helper (seeded random weights).

- cnn_small: the layer pattern of small.onnx, a 112x112 CNN not in this repository (Conv 3x3 + PRelu,
  a spatial-attention block ReduceMean/ReduceMax/Concat/Conv 7x7/Sigmoid/Mul,
  BatchNormalization, a strided 3x3 branch and a strided 1x1 shortcut joined by Add),
  with fewer channels and a smaller image so the file stays small.
- mlp_gemm: Gemm/Relu stack with a Softmax head.
- ml_*: ai.onnx.ml classifiers covering attribute combinations that skl2onnx does not
  emit (post_transform NONE/SOFTMAX_ZERO/PROBIT, multi_class=0, string ZipMap keys).
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET_DEFAULT = 13
ML = "ai.onnx.ml"


def _model(graph, ml_opset=None, opset=OPSET_DEFAULT):
    imports = [helper.make_opsetid("", opset)]
    if ml_opset:
        imports.append(helper.make_opsetid(ML, ml_opset))
    m = helper.make_model(graph, opset_imports=imports, producer_name="onnxmini/models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def cnn_small(channels=32, image=32):
    rng = np.random.default_rng(1234)
    c = channels

    def w(*shape, fan_in):
        return rng.standard_normal(shape).astype(np.float32) * np.float32(np.sqrt(2.0 / fan_in))

    inits = [
        _init("conv0_w", w(c, 3, 3, 3, fan_in=27)), _init("conv0_b", rng.uniform(-0.1, 0.1, c)),
        _init("prelu0_slope", rng.uniform(0.05, 0.3, (c, 1, 1))),
        _init("attn_w", w(1, 2, 7, 7, fan_in=98)),
        _init("bn_scale", rng.uniform(0.5, 1.5, c)), _init("bn_bias", rng.uniform(-0.2, 0.2, c)),
        _init("bn_mean", rng.uniform(-0.2, 0.2, c)), _init("bn_var", rng.uniform(0.5, 2.0, c)),
        _init("conv1_w", w(c, c, 3, 3, fan_in=9 * c)), _init("conv1_b", rng.uniform(-0.1, 0.1, c)),
        _init("prelu1_slope", rng.uniform(0.05, 0.3, (c, 1, 1))),
        _init("conv2_w", w(c, c, 3, 3, fan_in=9 * c)), _init("conv2_b", rng.uniform(-0.1, 0.1, c)),
        _init("short_w", w(c, c, 1, 1, fan_in=c)), _init("short_b", rng.uniform(-0.1, 0.1, c)),
    ]
    N = helper.make_node
    nodes = [
        N("Conv", ["input", "conv0_w", "conv0_b"], ["r0"], name="conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("PRelu", ["r0", "prelu0_slope"], ["r1"], name="prelu0"),
        N("ReduceMean", ["r1"], ["r2"], name="channel_mean", axes=[1], keepdims=1),
        N("ReduceMax", ["r1"], ["r3"], name="channel_max", axes=[1], keepdims=1),
        N("Concat", ["r2", "r3"], ["r4"], name="attn_concat", axis=1),
        N("Conv", ["r4", "attn_w"], ["r5"], name="attn_conv", kernel_shape=[7, 7], pads=[3, 3, 3, 3]),
        N("Sigmoid", ["r5"], ["r6"], name="attn_sigmoid"),
        N("Mul", ["r6", "r1"], ["r7"], name="attn_mul"),
        N("BatchNormalization", ["r7", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["r8"], name="bn", epsilon=1e-5),
        N("Conv", ["r8", "conv1_w", "conv1_b"], ["r9"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("PRelu", ["r9", "prelu1_slope"], ["r10"], name="prelu1"),
        N("Conv", ["r10", "conv2_w", "conv2_b"], ["r11"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        N("Conv", ["r7", "short_w", "short_b"], ["r12"], name="shortcut", kernel_shape=[1, 1], strides=[2, 2]),
        N("Add", ["r11", "r12"], ["output"], name="residual_add"),
    ]
    g = helper.make_graph(
        nodes, "cnn_small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, image, image])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", c, image // 2, image // 2])],
        inits)
    return _model(g), f"the layers of small.onnx, not in this repository ({c} channels, {image}x{image} input), seeded random weights"


def mlp_gemm():
    rng = np.random.default_rng(7)
    sizes = [32, 64, 64, 10]
    inits, nodes, prev = [], [], "input"
    for i in range(len(sizes) - 1):
        inits.append(_init(f"fc{i}_w", rng.standard_normal((sizes[i + 1], sizes[i])) / np.sqrt(sizes[i])))
        inits.append(_init(f"fc{i}_b", rng.uniform(-0.1, 0.1, sizes[i + 1])))
        out = f"fc{i}"
        nodes.append(helper.make_node("Gemm", [prev, f"fc{i}_w", f"fc{i}_b"], [out], name=out, transB=1))
        prev = out
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [out], [f"relu{i}"], name=f"relu{i}"))
            prev = f"relu{i}"
    nodes.append(helper.make_node("Softmax", [prev], ["probabilities"], name="softmax", axis=1))
    g = helper.make_graph(
        nodes, "mlp_gemm",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10])], inits)
    return _model(g), "Gemm(transB)/Relu stack 32-64-64-10 with Softmax"


def _linear_classifier(name, n_classes, post_transform, multi_class=0, string_labels=False, zipmap=False, seed=0):
    rng = np.random.default_rng(seed)
    n_features = 5
    rows = 1 if n_classes == 2 and multi_class == 0 and seed % 2 else n_classes
    coef, bias = rng.standard_normal(rows * n_features), rng.uniform(-0.5, 0.5, rows)
    if post_transform == "PROBIT":  # keep scores inside (0, 1), where probit is defined
        coef, bias = coef * 0.04, bias * 0.4 + 0.5
    attrs = dict(coefficients=coef.astype(np.float32).tolist(), intercepts=bias.astype(np.float32).tolist(),
                 post_transform=post_transform, multi_class=multi_class)
    if string_labels:
        labels = [f"class_{chr(ord('a') + i)}" for i in range(n_classes)]
        attrs["classlabels_strings"] = labels
        label_type = TensorProto.STRING
    else:
        labels = [10 * i + 3 for i in range(n_classes)]
        attrs["classlabels_ints"] = labels
        label_type = TensorProto.INT64
    nodes = [helper.make_node("LinearClassifier", ["input"], ["label", "scores"], name="linear_classifier", domain=ML, **attrs)]
    score_cols = rows if rows > 1 else 2
    outputs = [helper.make_tensor_value_info("label", label_type, ["N"])]
    if zipmap:
        key = "classlabels_strings" if string_labels else "classlabels_int64s"
        nodes.append(helper.make_node("ZipMap", ["scores"], ["scores_map"], name="zipmap", domain=ML, **{key: labels}))
        key_type = TensorProto.STRING if string_labels else TensorProto.INT64
        outputs.append(helper.make_value_info(
            "scores_map", helper.make_sequence_type_proto(helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(TensorProto.FLOAT, [])))))
    else:
        outputs.append(helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", score_cols]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", n_features])], outputs)
    return _model(g, ml_opset=1)


def ml_linear_classifier_none():
    return _linear_classifier("lc_none", 4, "NONE", seed=1), "LinearClassifier 4 classes, post_transform NONE, int labels"


def ml_linear_classifier_softmax_zero():
    return _linear_classifier("lc_smz", 3, "SOFTMAX_ZERO", seed=2), "LinearClassifier 3 classes, SOFTMAX_ZERO"


def ml_linear_classifier_probit():
    return _linear_classifier("lc_probit", 3, "PROBIT", seed=4), "LinearClassifier 3 classes, PROBIT"


def ml_linear_classifier_logistic_strings():
    return (_linear_classifier("lc_logistic_str", 3, "LOGISTIC", string_labels=True, seed=6),
            "LinearClassifier 3 classes, LOGISTIC, string labels")


def ml_linear_classifier_binary_one_row():
    return (_linear_classifier("lc_binary", 2, "NONE", seed=3),
            "LinearClassifier with a single coefficient row for 2 classes (score and -score)")


def ml_linear_classifier_binary_logistic():
    return (_linear_classifier("lc_binary_logistic", 2, "LOGISTIC", seed=5),
            "LinearClassifier with a single coefficient row, two labels, LOGISTIC: scores [1 - p, p]")


def ml_linear_classifier_zipmap_strings():
    return (_linear_classifier("lc_zipmap_str", 3, "SOFTMAX", string_labels=True, zipmap=True, seed=8),
            "LinearClassifier SOFTMAX with string labels and a string-keyed ZipMap")


BUILDERS = [
    ("cnn_small", cnn_small),
    ("mlp_gemm", mlp_gemm),
    ("ml_linear_classifier_none", ml_linear_classifier_none),
    ("ml_linear_classifier_softmax_zero", ml_linear_classifier_softmax_zero),
    ("ml_linear_classifier_probit", ml_linear_classifier_probit),
    ("ml_linear_classifier_logistic_strings", ml_linear_classifier_logistic_strings),
    ("ml_linear_classifier_binary_one_row", ml_linear_classifier_binary_one_row),
    ("ml_linear_classifier_binary_logistic", ml_linear_classifier_binary_logistic),
    ("ml_linear_classifier_zipmap_strings", ml_linear_classifier_zipmap_strings),
]
