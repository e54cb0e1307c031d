"""The graph optimizer as a product (docs/optimizer.md): onnxruntime's levels, saving the optimized
model (SessionOptions.optimized_model_filepath, `onnxmini optimize`), and its accuracy.

* A saved model is run by onnxruntime with the outputs onnxruntime gives on the original.
* Error budget: at every level, onnxmini's outputs are compared with a float64 evaluation of the
  original model (onnx.reference on a float64 copy); the optimized error must stay within twice
  the unoptimized error (plus a few float32 ulps of the output's size, for outputs the
  unoptimized graph happens to reproduce exactly).
* Basic-level rewrites are pure eliminations: outputs equal the level-0 outputs bit for bit.
"""
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxmini
from conftest import REPO

SMALL = (REPO.parent / "shared" / "models" / "small.onnx").resolve()
if not SMALL.exists():
    SMALL = pathlib.Path("/work/shared/models/small.onnx")
LEVELS = [int(level) for level in onnxmini.GraphOptimizationLevel]
sys.path.insert(0, str(REPO / "tests" / "zoo"))
import zoo_lib  # noqa: E402

ZOO = zoo_lib.load_manifest()


def _small_or_skip():
    if not SMALL.exists():
        pytest.skip(f"the seed model {SMALL} is not there")
    return SMALL


def _small_feeds(seed=0):
    return {"input": np.random.default_rng(seed).standard_normal((1, 3, 112, 112)).astype(np.float32)}


def _mini(model, level, **options):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    for k, v in options.items():
        setattr(so, k, v)
    return onnxmini.InferenceSession(model if isinstance(model, (str, bytes)) else str(model), so)


def _ort(model):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(model if isinstance(model, bytes) else str(model), so,
                                providers=["CPUExecutionProvider"])


# ---- models built here: one per family of rules ------------------------------------------------

def _init(name, shape, seed, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32), name)


def _conv_model():
    """Conv -> BN -> Relu -> Identity -> BN -> Conv -> Sigmoid -> Conv -> Clip -> Reshape (no-op). (No Dropout:
    onnxmini has no Dropout kernel, so level 0 could not run it; tests/runtime/test_graph_rules.cc has it.)"""
    nodes = [
        helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "b", "m", "v"], ["n1"], name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Identity", ["r1"], ["i1"], name="id1"),
        helper.make_node("BatchNormalization", ["i1", "g", "b", "m", "v"], ["n2"], name="bn2"),
        helper.make_node("Conv", ["n2", "W2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"], name="sig2"),
        helper.make_node("Conv", ["s2", "W3", "B3"], ["c3"], name="conv3"),
        helper.make_node("Clip", ["c3", "lo", "hi"], ["k3"], name="clip3"),
        helper.make_node("Reshape", ["k3", "shape"], ["Y"], name="noop_reshape"),
    ]
    inits = [_init("W1", (4, 3, 3, 3), 1), _init("B1", (4,), 2), _init("g", (4,), 3, 0.5, 1.5),
             _init("b", (4,), 4), _init("m", (4,), 5), _init("v", (4,), 6, 0.5, 2.0),
             _init("W2", (4, 4, 3, 3), 7), _init("W3", (2, 4, 1, 1), 8), _init("B3", (2,), 9),
             numpy_helper.from_array(np.array(-0.3, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.4, np.float32), "hi"),
             numpy_helper.from_array(np.array([1, 2, 8, 10], np.int64), "shape")]
    graph = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 10])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2, 8, 10])], inits,
                              value_info=[helper.make_tensor_value_info("k3", TensorProto.FLOAT, [1, 2, 8, 10])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        {"X": np.random.default_rng(10).standard_normal((1, 3, 8, 10)).astype(np.float32)}


def _mlp_model():
    """MatMul + Add (-> Gemm) -> Relu -> Transpose pair -> MatMul + Add -> Cast (no-op), Shape folded."""
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "B1"], ["a1"], name="add1"),
        helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
        helper.make_node("Transpose", ["r1"], ["t1"], name="t1", perm=[1, 0]),
        helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=[1, 0]),
        helper.make_node("MatMul", ["t2", "W2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["B2", "m2"], ["a2"], name="add2"),
        helper.make_node("Cast", ["a2"], ["c2"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Shape", ["X"], ["sx"], name="shape"),
        helper.make_node("Reshape", ["c2", "sx"], ["Y"], name="reshape"),
    ]
    inits = [_init("W1", (16, 32), 1), _init("B1", (32,), 2), _init("W2", (32, 16), 3), _init("B2", (1, 16), 4)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 16])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [5, 16])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        {"X": np.random.default_rng(11).standard_normal((5, 16)).astype(np.float32)}


def _layer_norm_model():
    """LayerNorm written out as exporters do (opset 18: ReduceMean's axes as an input), then Identity."""
    nodes = [
        helper.make_node("ReduceMean", ["X", "axes"], ["m"], name="mean"),
        helper.make_node("Sub", ["X", "m"], ["d"], name="sub"),
        helper.make_node("Pow", ["d", "two"], ["sq"], name="sq"),
        helper.make_node("ReduceMean", ["sq", "axes"], ["var"], name="var"),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt"),
        helper.make_node("Div", ["d", "s"], ["n"], name="div"),
        helper.make_node("Mul", ["n", "gamma"], ["ng"], name="mul_gamma"),
        helper.make_node("Add", ["ng", "beta"], ["y"], name="add_beta"),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             _init("gamma", (24,), 5, 0.5, 1.5), _init("beta", (24,), 6)]
    graph = helper.make_graph(nodes, "layer_norm", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 4, 24])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 4, 24])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), \
        {"X": np.random.default_rng(12).uniform(-3.0, 5.0, (3, 4, 24)).astype(np.float32)}


def _gelu_model():
    """Gelu's erf form as exporters write it (opset 20): (x * (1 + erf(x / sqrt 2))) * 0.5, then Identity."""
    nodes = [
        helper.make_node("Div", ["X", "root2"], ["u"], name="scale"),
        helper.make_node("Erf", ["u"], ["e"], name="erf"),
        helper.make_node("Add", ["e", "one"], ["a"], name="add_one"),
        helper.make_node("Mul", ["X", "a"], ["m"], name="mul_x"),
        helper.make_node("Mul", ["m", "half"], ["y"], name="mul_half"),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "root2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 32])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), \
        {"X": np.random.default_rng(13).uniform(-6.0, 6.0, (4, 32)).astype(np.float32)}


def _residual_model():
    """A ResNet basic block: Conv -> Relu -> Conv (no bias) -> BN -> Add(X, .) -> Relu -> Identity. At level 2
    conv_bn folds BN, conv_add takes the Add (Z = X) and conv_activation the Relus: FusedConv, FusedConv with Z."""
    nodes = [
        helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "g", "b", "m", "v"], ["n2"], name="bn2"),
        helper.make_node("Add", ["X", "n2"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("Identity", ["r2"], ["Y"], name="id"),
    ]
    inits = [_init("W1", (4, 4, 3, 3), 1), _init("B1", (4,), 2), _init("W2", (4, 4, 3, 3), 3),
             _init("g", (4,), 4, 0.5, 1.5), _init("b", (4,), 5), _init("m", (4,), 6), _init("v", (4,), 7, 0.5, 2.0)]
    graph = helper.make_graph(nodes, "residual",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, "h", "w"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), \
        {"X": np.random.default_rng(12).standard_normal((1, 4, 9, 11)).astype(np.float32)}


def _affine_block_model():
    """PP-LCNetV3's learnable affine block as Paddle2ONNX writes it (ppocr_v4_rec): Conv -> Mul(s) ->
    Add(b) -> HardSwish as x * Clip(x + 3, 0, 6) / 6 -> Mul(s2) -> Add(b2) -> Conv 1x1 -> Identity. At
    level 2 conv_scale_shift folds s and b into the first Conv, hard_swish makes one HardSwish, and
    scale_shift_conv folds s2 and b2 into the unpadded 1x1 Conv."""
    nodes = [
        helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["s", "c1"], ["m1"], name="lab_mul"),
        helper.make_node("Add", ["m1", "b"], ["x1"], name="lab_add"),
        helper.make_node("Add", ["x1", "three"], ["a"], name="hs_add"),
        helper.make_node("Clip", ["a", "zero", "six"], ["k"], name="hs_clip"),
        helper.make_node("Mul", ["x1", "k"], ["p"], name="hs_mul"),
        helper.make_node("Div", ["p", "six"], ["h"], name="hs_div"),
        helper.make_node("Mul", ["s2", "h"], ["m2"], name="lab2_mul"),
        helper.make_node("Add", ["m2", "b2"], ["x2"], name="lab2_add"),
        helper.make_node("Conv", ["x2", "W2", "B2"], ["c2"], name="conv2"),
        helper.make_node("Identity", ["c2"], ["Y"], name="id"),
    ]
    scalars = {"s": 1.38, "b": 0.59, "s2": 0.17, "b2": -0.21, "three": 3.0}
    inits = [_init("W1", (8, 3, 3, 3), 1), _init("B1", (8,), 2), _init("W2", (16, 8, 1, 1), 3), _init("B2", (16,), 4)]
    inits += [numpy_helper.from_array(np.array([v], np.float32), k) for k, v in scalars.items()]
    inits += [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("zero", 0.0), ("six", 6.0))]
    graph = helper.make_graph(nodes, "affine_block",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 16, "h", "w"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), \
        {"X": np.random.default_rng(13).uniform(-3.0, 3.0, (1, 3, 10, 12)).astype(np.float32)}


def _layer_norm_tf_model(opset=17):
    """LayerNorm as TF / Keras exports it (g2p_id_bert_mlm's form: GlobalAveragePool means over
    [batch, seq, C], Reciprocal(Sqrt(var + eps)), X * sg + (beta - mean * sg)), then Identity."""
    nodes = [
        helper.make_node("GlobalAveragePool", ["X"], ["m"], name="moments/mean"),
        helper.make_node("Sub", ["X", "m"], ["d"], name="moments/SquaredDifference"),
        helper.make_node("Mul", ["d", "d"], ["sq"], name="moments/SquaredDifference__6"),
        helper.make_node("GlobalAveragePool", ["sq"], ["var"], name="moments/variance"),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="batchnorm/add"),
        helper.make_node("Sqrt", ["ve"], ["s"], name="batchnorm/Rsqrt"),
        helper.make_node("Reciprocal", ["s"], ["r"], name="batchnorm/Rsqrt__9"),
        helper.make_node("Mul", ["r", "gamma"], ["sg"], name="batchnorm/mul"),
        helper.make_node("Mul", ["m", "sg"], ["mm"], name="batchnorm/mul_2"),
        helper.make_node("Sub", ["beta", "mm"], ["shift"], name="batchnorm/sub"),
        helper.make_node("Mul", ["X", "sg"], ["xs"], name="batchnorm/mul_1"),
        helper.make_node("Add", ["xs", "shift"], ["y"], name="batchnorm/add_1"),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
             _init("gamma", (32,), 5, 0.5, 1.5), _init("beta", (32,), 6)]
    graph = helper.make_graph(nodes, "layer_norm_tf", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 6, 32])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 6, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), \
        {"X": np.random.default_rng(14).uniform(-3.0, 5.0, (2, 6, 32)).astype(np.float32)}


def _rms_norm_model(opset=23):
    """RMSNorm as PyTorch exports Llama's (x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2)) + eps)) * weight)."""
    nodes = [
        helper.make_node("Pow", ["X", "two"], ["sq"], name="pow"),
        helper.make_node("ReduceMean", ["sq", "axes"], ["ms"], name="mean"),
        helper.make_node("Add", ["ms", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["r"], name="sqrt"),
        helper.make_node("Reciprocal", ["r"], ["inv"], name="rsqrt"),
        helper.make_node("Mul", ["X", "inv"], ["n"], name="mul_x"),
        helper.make_node("Mul", ["weight", "n"], ["y"], name="mul_weight"),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps"), _init("weight", (48,), 7, 0.5, 1.5)]
    graph = helper.make_graph(nodes, "rms_norm", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 5, 48])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 5, 48])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), \
        {"X": np.random.default_rng(15).uniform(-3.0, 5.0, (2, 5, 48)).astype(np.float32)}


def _gelu_tanh_model():
    """Gelu's tanh form as torch.onnx writes it (opset 20): 0.5 * (x * (1 + tanh(k * (x + 0.044715 * x * (x * x)))))."""
    nodes = [
        helper.make_node("Mul", ["X", "X"], ["x2"], name="square"),
        helper.make_node("Mul", ["X", "x2"], ["x3"], name="cube"),
        helper.make_node("Mul", ["cubic", "x3"], ["c"], name="mul_cubic"),
        helper.make_node("Add", ["X", "c"], ["inner"], name="add_x"),
        helper.make_node("Mul", ["k", "inner"], ["u"], name="mul_k"),
        helper.make_node("Tanh", ["u"], ["t"], name="tanh"),
        helper.make_node("Add", ["one", "t"], ["a"], name="add_one"),
        helper.make_node("Mul", ["X", "a"], ["m"], name="mul_x"),
        helper.make_node("Mul", ["half", "m"], ["y"], name="mul_half"),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [numpy_helper.from_array(np.array(np.sqrt(2.0 / np.pi), np.float32), "k"),
             numpy_helper.from_array(np.array(0.044715, np.float32), "cubic"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    graph = helper.make_graph(nodes, "gelu_tanh", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 32])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), \
        {"X": np.random.default_rng(16).uniform(-6.0, 6.0, (4, 32)).astype(np.float32)}


def _matmul_gelu_model(approximate="tanh"):
    """A transformer MLP's first half: MatMul([2, 5, 16] x W [16, 24]) -> Add(b) -> Gelu -> Identity. At level 2
    gemm_activation puts the bias and the Gelu into MatMul's epilogue (onnxmini only: saved unfused)."""
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["m"], name="mm"),
        helper.make_node("Add", ["m", "b"], ["a"], name="add_bias"),
        helper.make_node("Gelu", ["a"], ["y"], name="gelu", approximate=approximate),
        helper.make_node("Identity", ["y"], ["Y"], name="id"),
    ]
    inits = [_init("W", (16, 24), 17), _init("b", (24,), 18)]
    graph = helper.make_graph(nodes, "matmul_gelu", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 5, 16])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 5, 24])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), \
        {"X": np.random.default_rng(19).uniform(-3.0, 3.0, (2, 5, 16)).astype(np.float32)}


BUILT = {"convs": _conv_model, "mlp": _mlp_model, "layer_norm": _layer_norm_model, "gelu": _gelu_model,
         "layer_norm_tf": _layer_norm_tf_model, "layer_norm_tf_opset14": lambda: _layer_norm_tf_model(14),
         "rms_norm": _rms_norm_model, "rms_norm_opset18": lambda: _rms_norm_model(18), "gelu_tanh": _gelu_tanh_model,
         "residual": _residual_model, "matmul_gelu": _matmul_gelu_model,
         "matmul_gelu_erf": lambda: _matmul_gelu_model("none"), "affine_block": _affine_block_model}
# What each built model becomes at level 2: the rule applied and the saved model's op types
# (a rule for an op newer than the model's opset runs in onnxmini only: saved as the original nodes).
FUSED = {"layer_norm": ("layer_norm", ["LayerNormalization"]), "gelu": ("gelu", ["Gelu"]),
         "layer_norm_tf": ("layer_norm_tf", ["LayerNormalization"]),
         "layer_norm_tf_opset14": ("layer_norm_tf_before_opset17", None),
         "rms_norm": ("rms_norm", ["RMSNormalization"]), "rms_norm_opset18": ("rms_norm_before_opset23", None),
         "gelu_tanh": ("gelu_tanh", ["Gelu"]), "matmul_gelu": ("gemm_activation", None),
         "matmul_gelu_erf": ("gemm_activation", None), "affine_block": ("hard_swish", ["Conv", "HardSwish", "Conv"])}


# ---- float64 reference ------------------------------------------------------------------------

def _to_float64(model):
    """A copy computing in float64: float initializers, declared types, Cast targets and Constant values."""
    m = onnx.ModelProto()
    m.CopyFrom(model)

    def tensor64(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))

    def graph64(g):
        for t in g.initializer:
            tensor64(t)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                vi.type.tensor_type.elem_type = TensorProto.DOUBLE
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                    a.i = TensorProto.DOUBLE
                if a.type == onnx.AttributeProto.TENSOR:
                    tensor64(a.t)
                if a.type == onnx.AttributeProto.GRAPH:
                    graph64(a.g)
    graph64(m.graph)
    return m


def _reference64(model, feeds):
    ref = ReferenceEvaluator(_to_float64(model))
    return ref.run(None, {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()})


def _max_error(ours, ref):
    return max(float(np.abs(np.asarray(o, np.float64) - np.asarray(r, np.float64)).max(initial=0.0))
               for o, r in zip(ours, ref))


def _models():
    out = [(name, *make()) for name, make in BUILT.items()]
    if SMALL.exists():
        out.append(("small", onnx.load(str(SMALL)), _small_feeds()))
    return out


@pytest.mark.parametrize("name,model,feeds", _models(), ids=lambda x: x if isinstance(x, str) else "")
def test_error_budget_against_float64(name, model, feeds):
    _check_budget(name, model, feeds, _reference64(model, feeds))


def _check_budget(name, model, feeds, ref):
    bytes_ = model.SerializeToString()
    plain = _mini(bytes_, 0).run(None, feeds)
    err0 = _max_error(plain, ref)
    scale = max(float(np.abs(np.asarray(r, np.float64)).max(initial=0.0)) for r in ref)
    floor = 4 * np.finfo(np.float32).eps * scale  # a few ulps: the unoptimized graph may be exact
    for level in LEVELS[1:]:
        ours = _mini(bytes_, level).run(None, feeds)
        err = _max_error(ours, ref)
        assert err <= 2 * err0 + floor, f"{name} level {level}: error {err:.3g} vs unoptimized {err0:.3g}"
    # Basic rewrites are eliminations and folding: bit for bit.
    basic = _mini(bytes_, 1).run(None, feeds)
    for a, b in zip(plain, basic):
        assert np.array_equal(np.asarray(a), np.asarray(b)), f"{name}: level 1 is not bit-exact"


@pytest.mark.parametrize("entry", ZOO, ids=[e["name"] for e in ZOO])
def test_zoo_error_budget_against_float64(entry):
    """The same budget on the zoo models (tests/zoo), seed 0's inputs."""
    path = zoo_lib.model_path(entry)
    if not path.exists():
        pytest.skip(f"zoo model {entry['name']} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    model, feeds = onnx.load(str(path)), zoo_lib.make_feeds(entry, 0)
    try:
        ref = _reference64(model, feeds)
    except Exception as e:  # onnx.reference lacks a case the model needs (magika: an axis form)
        pytest.skip(f"onnx.reference cannot evaluate {entry['name']} in float64: {type(e).__name__}: {e}")
    _check_budget(entry["name"], model, feeds, ref)


@pytest.mark.parametrize("entry", ZOO, ids=[e["name"] for e in ZOO])
def test_zoo_saved_model_runs_in_onnxruntime(entry, tmp_path):
    """Each zoo model optimized at ORT_ENABLE_ALL and saved: onnxruntime runs the saved file with
    its outputs on the original, within the manifest's tolerance (fusions reorder rounding)."""
    path = zoo_lib.model_path(entry)
    if not path.exists():
        pytest.skip(f"zoo model {entry['name']} is not in {zoo_lib.cache_dir()}: run `{zoo_lib.FETCH_COMMAND}`")
    out = tmp_path / "opt.onnx"
    _mini(str(path), 99, optimized_model_filepath=str(out))
    assert len(onnx.load(str(out)).graph.node) <= len(onnx.load(str(path)).graph.node)
    feeds, tol = zoo_lib.make_feeds(entry, 0), entry["tolerance"]
    for r, o in zip(_ort(str(path)).run(None, feeds), _ort(str(out)).run(None, feeds)):
        ok, max_err, _ = zoo_lib.within_tolerance(np.asarray(o), np.asarray(r), tol["atol"], tol["rtol"])
        assert ok, f"{entry['name']}: saved model differs by {max_err:.3g} in onnxruntime"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", list(BUILT))
def test_saved_model_runs_in_onnxruntime(tmp_path, name, level):
    model, feeds = BUILT[name]()
    out = tmp_path / f"{name}_{level}.onnx"
    sess = _mini(model.SerializeToString(), level, optimized_model_filepath=str(out))
    saved = onnx.load(str(out))
    onnx.checker.check_model(saved)
    if level >= 2:
        assert len(saved.graph.node) < len(model.graph.node), [n.op_type for n in saved.graph.node]
    expected = _ort(model.SerializeToString()).run(None, feeds)
    for got in (_ort(str(out)).run(None, feeds), sess.run(None, feeds), _mini(str(out), 0).run(None, feeds)):
        for e, g in zip(expected, got):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-5)
    if level == 0:
        # The same nodes (written in onnxruntime's execution order, which may differ from the file's).
        assert sorted(n.name for n in saved.graph.node) == sorted(n.name for n in model.graph.node)
    rules = {rule for rule, _ in sess.graph_rewrites()}
    if level >= 1:
        assert "eliminate_identity" in rules or "cancel_transposes" in rules
    if level >= 2 and name == "mlp":
        assert "matmul_add_gemm" in rules
    if level >= 2 and name == "residual":
        assert {"conv_bn", "conv_add", "conv_activation"} <= rules
        # conv1 + relu1, and conv2 + bn2 + add + relu2 with Z = X as the 4th input.
        assert [n.op_type for n in saved.graph.node] == ["FusedConv", "FusedConv"]
        assert [len(n.input) for n in saved.graph.node] == [3, 4] and saved.graph.node[1].input[3] == "X"
    if level >= 2 and name in FUSED:
        rule, saved_ops = FUSED[name]
        assert rule in rules
        if saved_ops is None:  # onnxmini-only: the original nodes less the Identity
            assert sorted(n.name for n in saved.graph.node) == sorted(n.name for n in model.graph.node if n.name != "id")
            assert len(sess.graph_rewrites()) == 2  # eliminate_identity + the fusion
        else:
            assert [n.op_type for n in saved.graph.node] == saved_ops


def test_rms_norm_float16_casts_become_one_node_onnxruntime_runs(tmp_path):
    """Llama's mixed-precision RMSNorm (X float16 -> Cast float32 -> statistics -> Cast float16 ->
    weight float16): rms_norm absorbs both Casts into one RMSNormalization reading and writing
    float16; the saved model runs in onnxruntime. The two sides round x / rms to float16 at
    different points (before the weight product, or once after it): within 3 float16 unit
    roundoffs (2^-11 each) of the output."""
    n = helper.make_node
    nodes = [n("Cast", ["X"], ["x"], to=TensorProto.FLOAT), n("Pow", ["x", "two"], ["sq"]),
             n("ReduceMean", ["sq", "axes"], ["ms"]), n("Add", ["ms", "eps"], ["ve"]), n("Sqrt", ["ve"], ["r"]),
             n("Reciprocal", ["r"], ["inv"]), n("Mul", ["x", "inv"], ["nx"]),
             n("Cast", ["nx"], ["n16"], to=TensorProto.FLOAT16), n("Mul", ["w", "n16"], ["Y"])]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
             numpy_helper.from_array(np.random.default_rng(1).uniform(0.5, 1.5, 64).astype(np.float16), "w")]
    graph = helper.make_graph(nodes, "rms16", [helper.make_tensor_value_info("X", TensorProto.FLOAT16, [2, 3, 64])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT16, [2, 3, 64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]).SerializeToString()
    x = np.random.default_rng(0).uniform(-3.0, 3.0, (2, 3, 64)).astype(np.float16)
    out = tmp_path / "rms16.onnx"
    sess = _mini(model, 99, optimized_model_filepath=str(out))
    assert [rule for rule, _ in sess.graph_rewrites()] == ["rms_norm"]
    assert [nd.op_type for nd in onnx.load(str(out)).graph.node] == ["RMSNormalization"]
    expected = _ort(model).run(None, {"X": x})[0].astype(np.float32)
    tol = 3 * 2.0 ** -11 * np.abs(expected) + 1e-6
    for got in (sess.run(None, {"X": x})[0], _ort(str(out)).run(None, {"X": x})[0], _mini(model, 0).run(None, {"X": x})[0]):
        assert got.dtype == np.float16
        assert (np.abs(got.astype(np.float32) - expected) <= tol).all()


def test_optimize_command_on_small(onnxmini_cli, tmp_path):
    small = _small_or_skip()
    out = tmp_path / "small_opt.onnx"
    r = subprocess.run([str(onnxmini_cli), "optimize", str(small), "-o", str(out), "--report"],
                       capture_output=True, text=True, check=True)
    original, saved = onnx.load(str(small)), onnx.load(str(out))
    assert len(saved.graph.node) < len(original.graph.node), r.stdout
    assert "per rule:" in r.stdout and "conv_activation" in r.stdout
    # Every rewrite line names the nodes it touched, as they are named in the model.
    names = {n.name for n in original.graph.node}
    for line in r.stdout.split("rewrites")[1].split("per rule:")[0].strip().splitlines()[1:]:
        assert any(f"'{n}'" in line for n in names), line
    feeds = _small_feeds(1)
    expected = _ort(str(small)).run(None, feeds)
    for got in (_ort(str(out)).run(None, feeds), _mini(str(out), 99).run(None, feeds)):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)


def test_optimize_command_errors(onnxmini_cli, tmp_path):
    small = _small_or_skip()
    r = subprocess.run([str(onnxmini_cli), "optimize", str(small), "-o", str(tmp_path / "no" / "x.onnx")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no/x.onnx" in r.stderr, r.stderr
    r = subprocess.run([str(onnxmini_cli), "optimize", str(small)], capture_output=True, text=True)
    assert r.returncode == 2 and "--output" in r.stderr, r.stderr


def test_levels_mirror_onnxruntime():
    assert {k: int(v) for k, v in onnxmini.GraphOptimizationLevel.__members__.items()} == \
        {k: int(v) for k, v in ort.GraphOptimizationLevel.__members__.items()}
    assert onnxmini.SessionOptions().graph_optimization_level == ort.SessionOptions().graph_optimization_level
    assert onnxmini.SessionOptions().optimized_model_filepath == ort.SessionOptions().optimized_model_filepath == ""


def test_magika_matmul_gelu_epilogue_matches_unfused():
    """magika_standard_v3_3's MatMul([1, 2048, 257] x W) + Add(b [1, 1, 64]) + tanh-Gelu (opset 15, the Gelu
    made by gelu_tanh_before_opset20) runs as one MatMul with bias and Gelu in its epilogue: the whole model's
    outputs equal level 0's within float32 rounding of the reordered bias add / Gelu."""
    entry = next((e for e in ZOO if e["name"] == "magika_standard_v3_3"), None)
    path = zoo_lib.model_path(entry) if entry else None
    if not path or not path.exists():
        pytest.skip("magika_standard_v3_3 is not in the zoo cache")
    feeds = zoo_lib.make_feeds(entry, 0)
    fused = _mini(str(path), 99)
    assert any(rule == "gemm_activation" and "MatMul" in nodes and "Gelu" in nodes
               for rule, nodes in fused.graph_rewrites())
    for a, b in zip(_mini(str(path), 0).run(None, feeds), fused.run(None, feeds)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)
