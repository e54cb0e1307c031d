"""sink_reshape_bias (docs/optimizer.md): Keras Dense layers as tf2onnx exports them (Reshape to
rows -> MatMul -> Reshape back through Cast(Concat(Gather(Shape(x)), [N])) -> Add(bias) [-> Relu]).
The Reshape moves below the bias Add (and the Relu), so MatMul + Add become a Gemm: the model saved
at ORT_ENABLE_ALL is plain ONNX that onnxruntime runs with the original's outputs, and the basic
level equals level 0 bit for bit."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import onnxmini


def _dense(nodes, inits, x, name, k, n, act, rng):
    """Appends one Keras Dense layer [batch, 7, k] -> [batch, 7, n]; returns its output name."""
    inits += [numpy_helper.from_array(np.array([-1, k], np.int64), f"{name}_rows"),
              numpy_helper.from_array(rng.uniform(-0.5, 0.5, (k, n)).astype(np.float32), f"{name}_W"),
              numpy_helper.from_array(rng.uniform(-0.5, 0.5, n).astype(np.float32), f"{name}_b"),
              numpy_helper.from_array(np.array([0, 1], np.int64), f"{name}_lead"),
              numpy_helper.from_array(np.array([n], np.int32), f"{name}_n")]
    mk = helper.make_node
    nodes += [mk("Reshape", [x, f"{name}_rows"], [f"{name}_r"], name=f"{name}_to_rows"),
              mk("MatMul", [f"{name}_r", f"{name}_W"], [f"{name}_m"], name=f"{name}_matmul"),
              mk("Shape", [x], [f"{name}_sh"], name=f"{name}_shape"),
              mk("Cast", [f"{name}_sh"], [f"{name}_sh32"], name=f"{name}_cast32", to=TensorProto.INT32),
              mk("Gather", [f"{name}_sh32", f"{name}_lead"], [f"{name}_bs"], name=f"{name}_gather"),
              mk("Concat", [f"{name}_bs", f"{name}_n"], [f"{name}_s32"], name=f"{name}_concat", axis=0),
              mk("Cast", [f"{name}_s32"], [f"{name}_s"], name=f"{name}_cast64", to=TensorProto.INT64),
              mk("Reshape", [f"{name}_m", f"{name}_s"], [f"{name}_t"], name=f"{name}_back"),
              mk("Add", [f"{name}_t", f"{name}_b"], [f"{name}_a"], name=f"{name}_bias")]
    if act:
        nodes.append(mk(act, [f"{name}_a"], [f"{name}_y"], name=f"{name}_act"))
        return f"{name}_y"
    return f"{name}_a"


def _ffn_model():
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    h = _dense(nodes, inits, "X", "dense", 32, 48, "Relu", rng)
    y = _dense(nodes, inits, h, "dense_1", 48, 32, None, rng)
    nodes.append(helper.make_node("Add", [y, "X"], ["Y"], name="residual"))
    graph = helper.make_graph(nodes, "keras_ffn", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 7, 32])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 7, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()


def _mini(model, level, **options):
    so = onnxmini.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    for k, v in options.items():
        setattr(so, k, v)
    return onnxmini.InferenceSession(model, so)


def _ort(model):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def test_keras_dense_saved_model_runs_in_onnxruntime(tmp_path):
    model = _ffn_model()
    feeds = {"X": np.random.default_rng(1).uniform(-2, 2, (3, 7, 32)).astype(np.float32)}
    out = tmp_path / "ffn.onnx"
    sess = _mini(model, 99, optimized_model_filepath=str(out))
    rules = [rule for rule, _ in sess.graph_rewrites()]
    assert rules.count("sink_reshape_bias") == 2, rules
    assert rules.count("matmul_add_gemm") == 2, rules
    saved = onnx.load(str(out))
    onnx.checker.check_model(saved)
    ops = [n.op_type for n in saved.graph.node]
    assert ops.count("Gemm") == 2 and "MatMul" not in ops and ops.count("Add") == 1, ops  # the residual Add stays
    expected = _ort(model).run(None, feeds)[0]
    # A K-term dot product plus bias, reordered: a few float32 ulps of the sum of |terms|.
    for got in (_ort(str(out)).run(None, feeds)[0], sess.run(None, feeds)[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_keras_dense_basic_level_is_bit_exact():
    model = _ffn_model()
    feeds = {"X": np.random.default_rng(2).uniform(-2, 2, (2, 7, 32)).astype(np.float32)}
    basic = _mini(model, 1)
    assert [rule for rule, _ in basic.graph_rewrites()].count("sink_reshape_bias") == 2
    np.testing.assert_array_equal(basic.run(None, feeds)[0], _mini(model, 0).run(None, feeds)[0])
