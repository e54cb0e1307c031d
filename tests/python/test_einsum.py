"""Einsum vs numpy.einsum, through the CLI (`onnxmini einsum --input ... --output ...`),
and the exported graphs (`--export`) under onnxruntime.

The CLI is found through $ONNXMINI_CLI, else the newest build*/tools/onnxmini.
"""
import glob
import os
import subprocess

import numpy as np
import pytest

onnxruntime = pytest.importorskip("onnxruntime")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_cli():
    if os.environ.get("ONNXMINI_CLI"):
        return os.environ["ONNXMINI_CLI"]
    found = glob.glob(os.path.join(ROOT, "build*", "tools", "onnxmini"))
    if not found:
        pytest.skip("onnxmini CLI not built (set ONNXMINI_CLI)")
    return max(found, key=os.path.getmtime)


CLI = None

# transposes, reductions, outer products, batched matmul, tensordot over several
# axes, chains of 3 to 5 operands, diagonals, ellipsis, implicit and scalar output
CASES = [
    ("ij->ji", [(3, 5)]),
    ("abcd->dbca", [(2, 3, 4, 5)]),
    ("ij->", [(4, 7)]),
    ("ijk->j", [(3, 4, 5)]),
    ("ijk->ki", [(3, 4, 5)]),
    ("i,j->ij", [(5,), (7,)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("ij,ij->ij", [(4, 6), (4, 6)]),
    ("ij,j->ij", [(4, 6), (6,)]),
    ("ij,ij->", [(4, 6), (4, 6)]),
    ("ij,j->i", [(5, 7), (7,)]),
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("ij,kj->ik", [(5, 7), (3, 7)]),
    ("ji,jk->ki", [(7, 5), (7, 3)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bsnh,btnh->bnts", [(3, 5, 4, 6), (3, 7, 4, 6)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    ("abcd,cdef->abef", [(2, 3, 4, 5), (4, 5, 3, 2)]),
    ("abcd,dcef->fbea", [(2, 3, 4, 5), (5, 4, 3, 2)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
    ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 6), (6, 2)]),
    ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 3), (3, 2)]),
    ("ijk,jl,kl->il", [(3, 4, 5), (4, 6), (5, 6)]),
    ("i,i,i->", [(7,), (7,), (7,)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("iij->j", [(3, 3, 5)]),
    ("bii,bi->b", [(2, 4, 4), (2, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 6)]),
    ("...i,...i->...", [(3, 1, 4), (2, 4)]),
    ("i...->...i", [(3, 2, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba,ca", [(3, 4), (5, 4)]),
    ("ij,ij->ij", [(1, 5), (4, 5)]),
    ("i,i->", [(9,), (9,)]),
    ("abc,abc->", [(2, 3, 4), (2, 3, 4)]),
    ("ijkl,jk->il", [(2, 3, 4, 5), (3, 4)]),
]


def random_shapes(rng):
    """A few random-shape variants of common patterns."""
    out = []
    for _ in range(6):
        b, m, n, k, h = (int(x) for x in rng.integers(1, 9, size=5))
        out.append(("bmk,bkn->bmn", [(b, m, k), (b, k, n)]))
        out.append(("bshd,bthd->bhst", [(b, m, h, k), (b, n, h, k)]))
        out.append(("ab,bc,ca->", [(m, n), (n, k), (k, m)]))
    return out


ALL_CASES = CASES + random_shapes(np.random.default_rng(2024))


def tolerances(eq, shapes, dtype, out_size):
    terms = np.prod([max(1, s) for shape in shapes for s in shape]) ** 0.5  # loose bound on terms per output
    if dtype == np.float32:
        return 1e-4, 1e-5 * max(1.0, np.sqrt(terms / max(1, out_size)))
    return 1e-10, 1e-12 * max(1.0, terms)


def run_case(tmp_path, eq, shapes, dtype, opset=13, optimize="cost"):
    global CLI
    CLI = CLI or find_cli()
    rng = np.random.default_rng(abs(hash((eq, tuple(shapes)))) % 2**32)
    arrays = [rng.uniform(-2, 2, size=s).astype(dtype) for s in shapes]
    args = [CLI, "einsum", eq, "--quiet", "--optimize", optimize, "--output", str(tmp_path / "y.npy"),
            "--export", str(tmp_path / "g.onnx"), "--opset", str(opset),
            "--dtype", "float32" if dtype == np.float32 else "float64"]
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"in{i}.npy", a)
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    res = subprocess.run(args, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    expected = np.einsum(eq, *[a.astype(np.float64) for a in arrays])
    rtol, atol = tolerances(eq, shapes, dtype, expected.size)
    got = np.load(tmp_path / "y.npy")
    assert got.dtype == dtype
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    sess = onnxruntime.InferenceSession(str(tmp_path / "g.onnx"), providers=["CPUExecutionProvider"])
    ort_out = sess.run(None, {f"in{i}": a for i, a in enumerate(arrays)})[0]
    assert ort_out.shape == expected.shape
    np.testing.assert_allclose(ort_out, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("eq,shapes", ALL_CASES, ids=[f"{e}:{s}" for e, s in ALL_CASES])
def test_einsum_matches_numpy_and_export_runs_on_onnxruntime(tmp_path, eq, shapes, dtype):
    run_case(tmp_path, eq, shapes, dtype)


@pytest.mark.parametrize("opset", [7, 11, 12, 17, 21])
@pytest.mark.parametrize("eq,shapes", [("bsnh,btnh->bnts", [(2, 3, 4, 5), (2, 6, 4, 5)]),
                                       ("iij->j", [(3, 3, 5)]),
                                       ("ijk,jl,kl->il", [(3, 4, 5), (4, 6), (5, 6)]),
                                       ("i,j->ij", [(5,), (7,)])])
def test_export_opsets(tmp_path, eq, shapes, opset):
    run_case(tmp_path, eq, shapes, np.float32, opset=opset)


@pytest.mark.parametrize("optimize", ["none", "time"])
def test_other_optimizers(tmp_path, optimize):
    run_case(tmp_path, "abc,cbd,de->ae", [(4, 3, 5), (5, 3, 6), (6, 2)], np.float32, optimize=optimize)


def test_bad_equation_reports_position(tmp_path):
    global CLI
    CLI = CLI or find_cli()
    res = subprocess.run([CLI, "einsum", "ab,bc->az", "--shapes", "2x3,3x4"], capture_output=True, text=True)
    assert res.returncode != 0
    assert "output letter 'z' does not appear in any input (position 8)" in res.stderr
    assert "\n          ^" in res.stderr or "^" in res.stderr
