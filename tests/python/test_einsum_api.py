"""onnxmini.einsum / einsum_plan / einsum_decompose (python/onnxmini/_einsum.py) against
numpy.einsum, the exported graphs under onnxruntime, the plan against the CLI's
`onnxmini einsum` output, and the docs/einsum.md Python example."""
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import onnxmini
from conftest import REPO

# (equation, shapes): matmul, batched, attention, transposes, traces and diagonals,
# sums, outer and Hadamard products, ellipsis with broadcasting, 3 and 4 operands,
# scalars, size-1 and size-0 dims, implicit output, upper-case letters.
CASES = [
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("ij,jk", [(5, 7), (7, 3)]),
    ("ij,kj->ik", [(5, 7), (3, 7)]),
    ("ji,jk->ki", [(7, 5), (7, 3)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bsnh,btnh->bnts", [(2, 5, 3, 4), (2, 6, 3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
    ("abcd,cdef->abef", [(2, 3, 4, 5), (4, 5, 3, 2)]),
    ("ij->ji", [(3, 5)]),
    ("abc->cab", [(2, 3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->ji", [(3, 3, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 5)]),
    ("ij->", [(4, 7)]),
    ("ijk->j", [(3, 4, 5)]),
    ("i,j->ij", [(5,), (7,)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("ij,ij->ij", [(4, 6), (4, 6)]),
    ("ij,ij->", [(4, 6), (4, 6)]),
    ("ij,j->i", [(5, 7), (7,)]),
    ("ij,j->ij", [(4, 6), (6,)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 6)]),
    ("...i->...", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("abc,cd,ad->b", [(2, 3, 4), (4, 5), (2, 5)]),
    (",->", [(), ()]),
    (",ij->ij", [(), (2, 3)]),
    ("i,->i", [(5,), ()]),
    ("ij,jk->ik", [(1, 7), (7, 1)]),
    ("bij,bjk->bik", [(1, 4, 1), (1, 1, 6)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(3, 0), (0, 4)]),
    ("ij->", [(0, 4)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("ba,ab", [(3, 3), (3, 3)]),
]
CASE_IDS = [f"{eq}:{'/'.join('x'.join(map(str, s)) or 'scalar' for s in shapes)}" for eq, shapes in CASES]
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]


def operands(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-3, 4, size=s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def summed_terms(equation, ops):
    """K: how many products each output element sums (the product of the summed letters' sizes)."""
    out = np.einsum(equation, *[np.ones(o.shape) for o in ops])
    return int(np.max(out, initial=1))


def check_close(equation, ops, got):
    """float: |got - exact| <= (K + operands) * eps * sum|products| (first-order rounding bound
    of a K-term sum of products of len(ops) factors); integers: exact."""
    want = np.einsum(equation, *ops)
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
        return
    exact = np.einsum(equation, *[o.astype(np.float64) for o in ops])
    magnitude = np.einsum(equation, *[np.abs(o.astype(np.float64)) for o in ops])
    eps = np.finfo(got.dtype).eps
    bound = (summed_terms(equation, ops) + len(ops)) * eps * magnitude + np.finfo(got.dtype).tiny
    err = np.abs(got.astype(np.float64) - exact)
    assert np.all(err <= bound), f"{equation}: max error {err.max()} over bound {bound.max()}"


@pytest.mark.parametrize("equation,shapes", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("optimize", ["cost", "none"])
def test_matches_numpy(equation, shapes, dtype, optimize):
    ops = operands(shapes, dtype)
    check_close(equation, ops, onnxmini.einsum(equation, *ops, optimize=optimize))


# odd cases only: a timed plan is cached and reused by optimize="cost", and
# test_plan_matches_numpy_and_cli (even cases) compares cost plans with the CLI.
@pytest.mark.parametrize("equation,shapes", CASES[1::4], ids=CASE_IDS[1::4])
def test_optimize_time_matches_numpy(equation, shapes):
    for dtype in (np.float32, np.int64):
        ops = operands(shapes, dtype, seed=1)
        check_close(equation, ops, onnxmini.einsum(equation, *ops, optimize="time", time_candidates=3))


def test_numpy_style_arguments():
    a, b = operands([(4, 5), (5, 6)], np.float64)
    want = np.einsum("ij,jk->ik", a, b)
    for optimize in (True, False, "cost", "none"):
        np.testing.assert_allclose(onnxmini.einsum("ij,jk->ik", a, b, optimize=optimize), want, rtol=1e-12)
    # lists, non-contiguous and big-endian arrays are converted
    np.testing.assert_allclose(onnxmini.einsum("ij,jk->ik", a.tolist(), b), want, rtol=1e-12)
    np.testing.assert_allclose(onnxmini.einsum("ji,jk->ik", a.T, b), want, rtol=1e-12)
    np.testing.assert_allclose(onnxmini.einsum("ij,jk->ik", a.astype(">f8"), b), want, rtol=1e-12)
    # out= receives the result; dtype= converts the operands first (e.g. int8)
    out = np.empty((4, 6))
    assert onnxmini.einsum("ij,jk->ik", a, b, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12)
    i8 = [np.arange(6, dtype=np.int8).reshape(2, 3), np.arange(6, dtype=np.int8).reshape(3, 2)]
    got = onnxmini.einsum("ij,jk->ik", *i8, dtype=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.einsum("ij,jk->ik", *i8).astype(np.int32))
    # threads and the reference kernels give the same result
    c, d = operands([(3, 40, 30), (3, 30, 20)], np.float64)
    want = np.einsum("bij,bjk->bik", c, d)
    np.testing.assert_allclose(onnxmini.einsum("bij,bjk->bik", c, d, threads=2), want, rtol=1e-12)
    np.testing.assert_allclose(onnxmini.einsum("bij,bjk->bik", c, d, kernels="reference"), want, rtol=1e-12)


def test_calls_from_several_threads():
    """The GIL is released during the call: threads run einsum concurrently (and share the
    plan cache); each result must still be its own."""
    import concurrent.futures

    jobs = [CASES[i] for i in (0, 4, 5, 6, 7, 26, 27)] * 3

    def run(job):
        equation, shapes = job
        ops = operands(shapes, np.float64, seed=len(equation))
        return equation, ops, onnxmini.einsum(equation, *ops)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for equation, ops, got in pool.map(run, jobs):
            check_close(equation, ops, got)


def test_errors_name_the_problem():
    f = np.ones((2, 3), np.float32)
    with pytest.raises(onnxmini.InvalidArgument, match=r"output letter 'z'.*position 8"):
        onnxmini.einsum("ij,jk->iz", f, f.T)
    with pytest.raises(onnxmini.InvalidArgument, match=r"inconsistent sizes for 'j'"):
        onnxmini.einsum("ij,jk->ik", f, f)
    with pytest.raises(onnxmini.InvalidArgument, match="operand"):
        onnxmini.einsum("ij,jk->ik", f)
    with pytest.raises(TypeError, match=r"operand 1 has dtype float64 but operand 0 has float32"):
        onnxmini.einsum("ij,jk->ik", f, f.T.astype(np.float64))
    with pytest.raises(TypeError, match=r"operand 0 has dtype int8; supported: float32, float64, int32, int64"):
        onnxmini.einsum("ij->ji", np.ones((2, 2), np.int8))
    with pytest.raises(TypeError, match=r"operand 0 has dtype bool"):
        onnxmini.einsum("ij->ji", np.ones((2, 2), bool))
    with pytest.raises(ValueError, match=r"optimize must be 'cost', 'time', 'none'"):
        onnxmini.einsum("ij->ji", f, optimize="greedy")
    with pytest.raises(ValueError, match=r"out must be an array of dtype float32 and shape \(3, 2\)"):
        onnxmini.einsum("ij->ji", f, out=np.empty((2, 3), np.float32))
    with pytest.raises(ValueError, match="at least one operand"):
        onnxmini.einsum("->")
    with pytest.raises(ValueError, match="threads must be >= 0"):
        onnxmini.einsum("ij->ji", f, threads=-1)
    with pytest.raises(onnxmini.InvalidArgument, match="GEMM backend 'nope'"):
        onnxmini.einsum("ij->ji", f, gemm="nope")
    with pytest.raises(TypeError, match="progress must be"):
        onnxmini.einsum("ij->ji", f, progress=3)
    with pytest.raises(TypeError, match="operand 1 must be an array or a shape"):
        onnxmini.einsum_plan("ij,jk", (2, 3), "3x4")
    with pytest.raises(TypeError, match="einsum_decompose: dtype int8 is not supported"):
        onnxmini.einsum_decompose("ij->ji", [(2, 3)], dtype=np.int8)


# ---- einsum_plan

def cli_plan_text(cli, equation, shapes, optimize):
    shape_arg = ",".join("x".join(map(str, s)) if s else "scalar" for s in shapes)
    res = subprocess.run([str(cli), "einsum", equation, "--shapes", shape_arg, "--optimize", optimize],
                         capture_output=True, text=True, check=True)
    return res.stdout


@pytest.mark.parametrize("equation,shapes", CASES[::2], ids=CASE_IDS[::2])
@pytest.mark.parametrize("optimize", ["cost", "none"])
def test_plan_matches_numpy_and_cli(onnxmini_cli, equation, shapes, optimize):
    plan = onnxmini.einsum_plan(equation, *shapes, optimize=optimize)
    ops = operands(shapes, np.float64)
    assert plan.output_shape == np.einsum(equation, *ops).shape
    assert plan.input_shapes == [tuple(s) for s in shapes]
    assert plan.equation == equation and plan.optimizer == optimize and plan.measured_us is None
    assert plan.candidates == []
    assert all(s.kind in ("gemm", "copy", "sum", "product", "zero") for s in plan.steps)
    assert plan.flops == pytest.approx(sum(s.flops for s in plan.steps))
    assert plan.bytes_copied == pytest.approx(sum(s.bytes_copied for s in plan.steps))
    assert str(plan) == plan.text == cli_plan_text(onnxmini_cli, equation, shapes, optimize)
    assert plan.summary.startswith(f"einsum {plan.canonical} optimize={optimize}")
    # arrays give the same plan as their shapes
    assert onnxmini.einsum_plan(equation, *ops, optimize=optimize) == plan
    assert onnxmini.einsum_output_shape(equation, *shapes) == plan.output_shape


def test_plan_of_a_contraction():
    plan = onnxmini.einsum_plan("bsnh,btnh->bnts", (20, 20, 20, 20), (20, 20, 20, 20))
    assert [s.kind for s in plan.steps] == ["gemm"]  # one batched GEMM, operands read in place
    assert plan.flops == 2 * 20**5 and plan.bytes_copied == 0 and plan.estimated_us > 0
    chain = onnxmini.einsum_plan("ij,jk,kl->il", (3, 4), (4, 5), (5, 6))
    assert len(chain.steps) >= 2 and chain.contraction_order


def test_plan_time_candidates_and_progress():
    calls = []
    shapes = [(9, 13), (13, 11)]  # not planned by any other test: the timing really runs
    plan = onnxmini.einsum_plan("ij,jk->ik", *shapes, optimize="time", time_candidates=4,
                                progress=lambda done, total: calls.append((done, total)))
    total = calls[0][1]
    assert 1 <= total <= 4 and calls[0] == (0, total) and calls[-1] == (total, total)
    assert [d for d, _ in calls] == list(range(total + 1))
    assert plan.optimizer == "time" and plan.measured_us is not None and plan.measured_us > 0
    assert len(plan.candidates) == total
    measured = [c.measured_us for c in plan.candidates]
    assert measured == sorted(measured) and plan.measured_us == measured[0]
    # cached: neither planning nor einsum() times again, and both use the timed plan
    calls.clear()
    assert onnxmini.einsum_plan("ij,jk->ik", *shapes, optimize="time", progress=lambda *a: calls.append(a)) == plan
    a, b = operands(shapes, np.float32)
    check_close("ij,jk->ik", [a, b], onnxmini.einsum("ij,jk->ik", a, b, optimize="time", progress=calls.append))
    assert calls == []


def test_progress_true_draws_a_text_bar_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import fails: the text bar
    a, b = operands([(9, 14), (14, 11)], np.float32)
    onnxmini.einsum("ij,jk->ik", a, b, optimize="time", time_candidates=3, progress=True)
    err = capsys.readouterr().err
    total = int(re.search(r"\] 0/(\d+)", err).group(1))
    assert err.startswith("\reinsum: timing plans [") and err.endswith(f"[{'#' * 30}] {total}/{total}\n")


def test_progress_true_uses_tqdm_when_installed(monkeypatch):
    events = []

    class FakeTqdm:
        def __init__(self, total, **kw):
            self.n, self.total = 0, total
            events.append(("open", total, kw["file"] is sys.stderr))

        def update(self, k):
            self.n += k
            events.append(("update", self.n))

        def close(self):
            events.append(("close", self.n))

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    onnxmini.einsum_plan("ij,jk->ik", (9, 15), (15, 11), optimize="time", time_candidates=3, progress=True)
    total = events[0][1]
    assert events[0] == ("open", total, True) and events[-1] == ("close", total)


def test_progress_exception_stops_timing_and_propagates():
    def stop(done, total):
        if done == 1:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        onnxmini.einsum_plan("ij,jk->ik", (9, 16), (16, 11), optimize="time", time_candidates=3, progress=stop)
    # nothing half-timed was cached: the next call times again
    calls = []
    onnxmini.einsum_plan("ij,jk->ik", (9, 16), (16, 11), optimize="time", time_candidates=3, progress=lambda *a: calls.append(a))
    assert calls and calls[0][0] == 0


# ---- einsum_decompose under onnxruntime

DECOMPOSE_CASES = [
    ("bsnh,btnh->bnts", [(2, 5, 3, 4), (2, 6, 3, 4)]),
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("ii->i", [(4, 4)]),
    ("ij->", [(4, 7)]),
    ("i,j->ij", [(5,), (7,)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("abc,cd,ad->b", [(2, 3, 4), (4, 5), (2, 5)]),
]


@pytest.mark.parametrize("equation,shapes", DECOMPOSE_CASES, ids=[c[0] for c in DECOMPOSE_CASES])
@pytest.mark.parametrize("opset,dtype", [(7, np.float32), (12, np.float64), (13, np.float32), (17, np.float64),
                                         (13, np.int32), (17, np.int64)], ids=lambda v: str(v) if isinstance(v, int) else np.dtype(v).name)
def test_decompose_runs_on_onnxruntime(equation, shapes, opset, dtype):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    model_bytes = onnxmini.einsum_decompose(equation, shapes, opset=opset, dtype=dtype)
    assert isinstance(model_bytes, bytes)
    model = onnx.load_from_string(model_bytes)
    onnx.checker.check_model(model, full_check=True)
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) == opset
    assert "Einsum" not in {n.op_type for n in model.graph.node}
    ops = operands(shapes, dtype, seed=2)
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {f"in{i}": o for i, o in enumerate(ops)})
    check_close(equation, ops, got)
    # the same graph on onnxmini
    (mine,) = onnxmini.InferenceSession(model_bytes).run(None, {f"in{i}": o for i, o in enumerate(ops)})
    check_close(equation, ops, mine)


def test_decompose_accepts_arrays_and_optimize_modes():
    onnx = pytest.importorskip("onnx")
    a, b = operands([(3, 4), (4, 5)], np.float32)
    for optimize in ("none", "cost", True, False):
        m = onnx.load_from_string(onnxmini.einsum_decompose("ij,jk->ik", [a, b], optimize=optimize))
        assert [i.name for i in m.graph.input] == ["in0", "in1"] and [o.name for o in m.graph.output] == ["out"]
    with pytest.raises(TypeError, match="shapes must be a list"):
        onnxmini.einsum_decompose("ij->ji", (2, 3)[0])


# ---- the documented example

def test_einsum_md_python_example_runs(monkeypatch, tmp_path):
    pytest.importorskip("onnxruntime")
    doc = REPO / "docs" / "einsum.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)
    assert blocks, "docs/einsum.md has no python example"
    monkeypatch.chdir(tmp_path)
    ns = {}
    for code in blocks:
        exec(compile(code, str(doc), "exec"), ns)
    assert ns["y"].shape == (2, 12, 32, 32)
