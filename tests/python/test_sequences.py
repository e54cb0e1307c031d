"""Sequence and optional models run by onnxmini and by onnxruntime, compared.

Built with onnx.helper: sequences fed as lists of arrays and returned as lists
(SequenceInsert, SequenceAt, SequenceErase, SplitToSequence, ConcatFromSequence,
SequenceMap), optionals fed as None or an element and returned the same way,
and a SequenceProto written by onnxmini read by onnx's numpy_helper. Results are
exact (the ops only move data, or run the same float32 Add on both sides).
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as onh

import onnxmini


def _model(nodes, inputs, outputs, opset=17):
    g = oh.make_graph(nodes, "main", inputs, outputs)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def _seq(name, elem=TP.FLOAT):
    return oh.make_tensor_sequence_value_info(name, elem, None)


def _opt_tensor(name, elem=TP.FLOAT):
    return oh.make_value_info(name, oh.make_optional_type_proto(oh.make_tensor_type_proto(elem, None)))


def _both(model, feeds):
    ours = onnxmini.InferenceSession(model).run(None, feeds)
    theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, theirs


def _same(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif b is None:
        assert a is None
    else:
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_sequence_ops_lists_in_lists_out():
    nodes = [
        oh.make_node("SequenceInsert", ["S", "X", "P"], ["Inserted"]),
        oh.make_node("SequenceAt", ["Inserted", "P"], ["At"]),
        oh.make_node("SequenceErase", ["Inserted"], ["Erased"]),
        oh.make_node("SequenceLength", ["Inserted"], ["N"]),
    ]
    model = _model(nodes, [_seq("S"), oh.make_tensor_value_info("X", TP.FLOAT, None),
                           oh.make_tensor_value_info("P", TP.INT64, [])],
                   [_seq("Inserted"), oh.make_tensor_value_info("At", TP.FLOAT, None), _seq("Erased"),
                    oh.make_tensor_value_info("N", TP.INT64, [])])
    rng = np.random.default_rng(0)
    s = [rng.standard_normal((2, k)).astype(np.float32) for k in (1, 3, 2)]
    for p in (0, 1, -1, 3):
        feeds = {"S": s, "X": np.full((2, 2), 7, np.float32), "P": np.array(p, np.int64)}
        ours, theirs = _both(model, feeds)
        assert isinstance(ours[0], list) and len(ours[0]) == 4
        _same(ours, theirs)


@pytest.mark.parametrize("axis,keepdims,split", [(0, 1, None), (1, 0, None), (1, 1, np.array(2, np.int64)),
                                                 (0, 1, np.array([1, 3], np.int64))])
def test_split_to_sequence_then_concat(axis, keepdims, split):
    inputs = [oh.make_tensor_value_info("X", TP.FLOAT, [4, 5])]
    split_in = ["X"]
    feeds = {"X": np.arange(20, dtype=np.float32).reshape(4, 5)}
    if split is not None:
        inputs.append(oh.make_tensor_value_info("split", TP.INT64, list(split.shape)))
        split_in.append("split")
        feeds["split"] = split
    nodes = [oh.make_node("SplitToSequence", split_in, ["S"], axis=axis, keepdims=keepdims),
             oh.make_node("ConcatFromSequence", ["S"], ["Y"], axis=axis, new_axis=0 if keepdims or split is not None else 1)]
    model = _model(nodes, inputs, [_seq("S"), oh.make_tensor_value_info("Y", TP.FLOAT, None)])
    ours, theirs = _both(model, feeds)
    _same(ours, theirs)
    np.testing.assert_array_equal(ours[1], feeds["X"])


def test_sequence_map_with_a_tensor_input():
    body = oh.make_graph([oh.make_node("Add", ["x", "b"], ["y"])], "body",
                         [oh.make_tensor_value_info("x", TP.FLOAT, None), oh.make_tensor_value_info("b", TP.FLOAT, None)],
                         [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    model = _model([oh.make_node("SequenceMap", ["S", "B"], ["Out"], body=body)],
                   [_seq("S"), oh.make_tensor_value_info("B", TP.FLOAT, [1])], [_seq("Out")])
    s = [np.arange(k, dtype=np.float32) for k in (1, 4, 2)]
    ours, theirs = _both(model, {"S": s, "B": np.array([0.5], np.float32)})
    _same(ours, theirs)


@pytest.mark.parametrize("element", [None, np.array([1.5, 2.5], np.float32)])
def test_optional_none_or_element(element):
    nodes = [oh.make_node("OptionalHasElement", ["O"], ["Has"]), oh.make_node("Identity", ["O"], ["Same"])]
    model = _model(nodes, [_opt_tensor("O")], [oh.make_tensor_value_info("Has", TP.BOOL, []), _opt_tensor("Same")],
                   opset=16)
    ours, theirs = _both(model, {"O": element})
    _same(ours, theirs)
    assert bool(ours[0]) == (element is not None)


def test_saved_sequence_reads_with_numpy_helper(tmp_path):
    # The CLI's --save-outputs writes a SequenceProto; onnx reads it back.
    from onnx import SequenceProto
    model = _model([oh.make_node("SplitToSequence", ["X"], ["S"], axis=0)],
                   [oh.make_tensor_value_info("X", TP.FLOAT, [3, 2])], [_seq("S")])
    path = tmp_path / "model.onnx"
    path.write_bytes(model)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.save(tmp_path / "x.npy", x)
    import subprocess
    import pathlib
    cli = pathlib.Path(__file__).resolve().parents[2] / "build" / "tools" / "onnxmini"
    if not cli.exists():
        pytest.skip("build/tools/onnxmini is not built")
    subprocess.run([str(cli), "run", str(path), "--input", f"X={tmp_path / 'x.npy'}", "--save-outputs",
                    str(tmp_path / "out")], check=True, capture_output=True)
    seq = SequenceProto()
    seq.ParseFromString((tmp_path / "out" / "output_0.pb").read_bytes())
    assert seq.name == "S"
    items = onh.to_list(seq)
    assert len(items) == 3
    for k in range(3):
        np.testing.assert_array_equal(items[k], x[k:k + 1])
