"""Compare onnxmini with onnxruntime on one model.

    python -m onnxmini.compare MODEL [--input NAME=SPEC]... [--dim NAME=N]... [--seed S]
                               [--per-node] [--repro DIR] [--profile] [--repeat N]
                               [--atol A] [--rtol R] [--reference OTHER.onnx]

Both runtimes get the same inputs. For each output it prints the largest
absolute error, the largest relative error, the largest ULP distance and a
verdict: an element passes when |mini - ort| <= atol + rtol * |ort| (defaults
for float32: atol 1e-5, rtol 1e-4; float16 1e-3 / 1e-3; float64 1e-7 / 1e-6;
integers, bools and strings must be equal). ZipMap outputs are compared key by
key. Exit status: 0 when everything passes, 1 otherwise.

``--per-node`` runs every intermediate value through both runtimes
(onnxruntime: a copy of the model with every node output added as a graph
output, graph optimizations off; onnxmini: the intermediates requested by name)
and reports the first node in topological order whose output diverges, with
the errors of its inputs. ``--repro DIR`` then writes that node as an ONNX
backend-test folder (model.onnx, test_data_set_0/input_*.pb from onnxruntime's
values, output_*.pb = onnxruntime's outputs) that ``onnxmini run DIR/model.onnx
--inputs DIR/test_data_set_0`` replays.

``--reference OTHER.onnx`` runs onnxruntime on another model with the same
value names (an original before a rewrite; the tests plant a divergence this way).
See docs/compare.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

TOLERANCES = {  # dtype -> (atol, rtol)
    np.dtype(np.float32): (1e-5, 1e-4),
    np.dtype(np.float16): (1e-3, 1e-3),
    np.dtype(np.float64): (1e-7, 1e-6),
}


# ---------------------------------------------------------------- metrics
@dataclass
class Diff:
    """How far one value of onnxmini is from onnxruntime's."""

    name: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: Optional[int] = None  # floats only
    mismatches: int = 0  # elements beyond tolerance
    size: int = 0
    ok: bool = True
    note: str = ""

    def line(self) -> str:
        ulp = "-" if self.max_ulp is None else str(self.max_ulp)
        verdict = "PASS" if self.ok else f"FAIL ({self.mismatches}/{self.size} beyond tolerance)"
        note = f"  {self.note}" if self.note else ""
        return f"{self.name:<32} max_abs {self.max_abs:<11.4g} max_rel {self.max_rel:<11.4g} ulp {ulp:<10} {verdict}{note}"


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable floats between a and b (same dtype), elementwise; 0 for -0 vs +0."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(itype).astype(np.int64)
    ib = b.view(itype).astype(np.int64)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)
    # Map the sign-magnitude bit patterns onto a monotonic integer line.
    oa = np.where(ia < 0, -sign - ia, ia) if a.dtype.itemsize < 8 else np.where(ia < 0, np.iinfo(np.int64).min - ia, ia)
    ob = np.where(ib < 0, -sign - ib, ib) if a.dtype.itemsize < 8 else np.where(ib < 0, np.iinfo(np.int64).min - ib, ib)
    with np.errstate(over="ignore"):
        return np.abs(oa - ob)


def diff_arrays(name: str, got: Any, ref: Any, atol: Optional[float] = None, rtol: Optional[float] = None) -> Diff:
    """Compares onnxmini's value `got` with onnxruntime's `ref` (arrays, lists of dicts)."""
    d = Diff(name)
    if isinstance(ref, list) or isinstance(got, list):
        return _diff_sequences(name, got, ref, atol, rtol)
    got = np.asarray(got)
    ref = np.asarray(ref)
    d.size = int(ref.size)
    if got.shape != ref.shape:
        d.ok, d.note, d.mismatches = False, f"shape {list(got.shape)} vs onnxruntime {list(ref.shape)}", d.size
        return d
    if got.dtype != ref.dtype:
        d.ok, d.note, d.mismatches = False, f"dtype {got.dtype} vs onnxruntime {ref.dtype}", d.size
        return d
    if ref.dtype.kind not in "fc":
        neq = got != ref
        d.mismatches = int(np.count_nonzero(neq))
        d.ok = d.mismatches == 0
        if ref.dtype.kind in "iub" and ref.size:
            err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
            d.max_abs = float(err.max())
        return d
    a_tol, r_tol = TOLERANCES.get(ref.dtype, (1e-5, 1e-4))
    a_tol = a_tol if atol is None else atol
    r_tol = r_tol if rtol is None else rtol
    g64 = got.astype(np.float64)
    r64 = ref.astype(np.float64)
    both_nan = np.isnan(g64) & np.isnan(r64)
    same_inf = np.isinf(r64) & (g64 == r64)
    with np.errstate(invalid="ignore"):
        err = np.where(both_nan | same_inf, 0.0, np.abs(g64 - r64))
    err = np.where(np.isnan(err), np.inf, err)
    bad = err > a_tol + r_tol * np.abs(np.where(np.isfinite(r64), r64, 0))
    d.mismatches = int(np.count_nonzero(bad))
    d.ok = d.mismatches == 0
    if ref.size:
        d.max_abs = float(err.max())
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(err == 0, 0.0, err / np.maximum(np.abs(r64), np.finfo(ref.dtype).tiny))
        d.max_rel = float(rel.max())
        finite = np.isfinite(got) & np.isfinite(ref)
        d.max_ulp = int(ulp_distance(got[finite], ref[finite]).max()) if finite.any() else 0
    return d


def _diff_sequences(name: str, got: Any, ref: Any, atol, rtol) -> Diff:
    d = Diff(name)
    if not isinstance(got, list) or not isinstance(ref, list) or len(got) != len(ref):
        d.ok, d.note = False, "sequence length or kind differs"
        return d
    for i, (g, r) in enumerate(zip(got, ref)):
        if isinstance(r, dict):
            if not isinstance(g, dict) or set(g) != set(r):
                d.ok, d.note = False, f"item {i}: keys differ"
                d.mismatches += 1
                continue
            keys = sorted(r, key=str)
            sub = diff_arrays(name, np.array([g[k] for k in keys], np.float32), np.array([r[k] for k in keys], np.float32), atol, rtol)
        else:
            sub = diff_arrays(name, g, r, atol, rtol)
        d.size += max(1, sub.size)
        d.mismatches += sub.mismatches
        d.ok = d.ok and sub.ok
        d.max_abs = max(d.max_abs, sub.max_abs)
        d.max_rel = max(d.max_rel, sub.max_rel)
        if sub.max_ulp is not None:
            d.max_ulp = max(d.max_ulp or 0, sub.max_ulp)
        if sub.note and not d.note:
            d.note = f"item {i}: {sub.note}"
    return d


# ---------------------------------------------------------------- inputs
_ONNX_TO_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
               9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def _parse_shape(text: str) -> Tuple[int, ...]:
    if text in ("", "scalar"):
        return ()
    try:
        return tuple(int(t) for t in text.replace(",", "x").split("x"))
    except ValueError:
        raise ValueError(f"invalid shape '{text}' (expected dims like 1x3x224x224)") from None


def _random(dtype: np.dtype, shape: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """Floats uniform in [-1, 1), integers in [0, 10), bools fair (as `onnxmini run`)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-1, 1, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(0, 10, size=shape).astype(dtype)


def tensor_from_spec(spec: str, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """SPEC: random:SHAPE | zeros:SHAPE | ones:SHAPE | FILE.npy | FILE.pb"""
    kind, _, rest = spec.partition(":")
    if kind == "random" and _:
        return _random(dtype, _parse_shape(rest), rng)
    if kind in ("zeros", "ones") and _:
        return (np.zeros if kind == "zeros" else np.ones)(_parse_shape(rest), dtype=dtype)
    if spec.endswith(".npy"):
        return np.load(spec)
    if spec.endswith(".pb"):
        import onnx
        from onnx import numpy_helper

        t = onnx.TensorProto()
        with open(spec, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)
    raise ValueError(f"invalid input spec '{spec}' (random:SHAPE, zeros:SHAPE, ones:SHAPE, FILE.npy, FILE.pb)")


def make_feeds(model, specs: Sequence[str] = (), dims: Optional[Dict[str, int]] = None, seed: int = 0) -> Dict[str, np.ndarray]:
    """Feeds for every graph input of an onnx.ModelProto: NAME=SPEC first, generated otherwise
    (symbolic dims from `dims` by name, else 1)."""
    rng = np.random.default_rng(seed)
    dims = dims or {}
    given = {}
    for s in specs:
        name, eq, spec = s.partition("=")
        if not eq or not name:
            raise ValueError(f"--input expects NAME=SPEC, got '{s}'")
        given[name] = spec
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dtype = _ONNX_TO_NP.get(tt.elem_type)
        if dtype is None:
            raise ValueError(f"input '{vi.name}': cannot generate values of ONNX type {tt.elem_type}")
        if vi.name in given:
            feeds[vi.name] = tensor_from_spec(given.pop(vi.name), dtype, rng)
            continue
        shape = [d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 1) for d in tt.shape.dim]
        feeds[vi.name] = _random(dtype, shape, rng)
    if given:
        raise ValueError(f"--input names unknown inputs: {sorted(given)}")
    return feeds


# ---------------------------------------------------------------- runs
def _ort_session(model_bytes: bytes, profile_prefix: Optional[str] = None, threads: int = 1):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def _mini_session(model_bytes: bytes, profile_prefix: Optional[str] = None, threads: int = 1):
    import onnxmini

    so = onnxmini.SessionOptions()
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_DISABLE_ALL  # node for node, as onnxruntime's side
    so.intra_op_num_threads = threads
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return onnxmini.InferenceSession(model_bytes, so)


def node_output_names(model) -> List[str]:
    """Every non-empty node output of the main graph, in node (topological) order."""
    return [o for n in model.graph.node for o in n.output if o]


def expose_intermediates(model):
    """A copy of `model` whose graph outputs also list every node output (untyped
    value infos, which onnxruntime accepts), so onnxruntime returns them all."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    present = {o.name for o in m.graph.output}
    for name in node_output_names(m):
        if name not in present:
            m.graph.output.append(onnx.ValueInfoProto(name=name))
            present.add(name)
    return m


@dataclass
class NodeReport:
    index: int
    name: str
    op_type: str
    outputs: List[Diff] = field(default_factory=list)
    inputs: List[Diff] = field(default_factory=list)


def first_divergence(model, mini: Dict[str, Any], ref: Dict[str, Any], atol=None, rtol=None) -> Optional[NodeReport]:
    """The first node (graph order) with an output beyond tolerance, or None."""
    for i, node in enumerate(model.graph.node):
        outs = [diff_arrays(o, mini[o], ref[o], atol, rtol) for o in node.output if o and o in ref and o in mini]
        if all(d.ok for d in outs):
            continue
        ins = [diff_arrays(x, mini[x], ref[x], atol, rtol) for x in node.input if x and x in ref and x in mini]
        return NodeReport(i, node.name, node.op_type, outs, ins)
    return None


def write_repro(model, node_index: int, values: Dict[str, Any], directory: str) -> str:
    """Writes node `node_index` of `model` as a backend-test folder; `values` = onnxruntime's
    values by name (its inputs become input_K.pb, its outputs output_K.pb). Initializers the
    node reads stay initializers. Returns the model path."""
    import onnx
    from onnx import helper, numpy_helper

    node = model.graph.node[node_index]
    inits = {t.name: t for t in model.graph.initializer}
    graph_inputs, initializers, data_in = [], [], []
    seen = set()
    for name in node.input:
        if not name or name in seen:
            continue
        seen.add(name)
        if name in inits and name not in values:
            initializers.append(inits[name])
            continue
        arr = np.asarray(values[name])
        graph_inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), list(arr.shape)))
        data_in.append((name, arr))
    graph_outputs, data_out = [], []
    for name in node.output:
        if not name:
            continue
        arr = np.asarray(values[name])
        graph_outputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), list(arr.shape)))
        data_out.append((name, arr))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    if not n.name:
        n.name = f"{node.op_type}_{node_index}"
    graph = helper.make_graph([n], f"repro_{n.name}", graph_inputs, graph_outputs, initializers)
    used = {node.domain or ""}
    opsets = [o for o in model.opset_import if (o.domain or "") in used] or list(model.opset_import)
    repro = helper.make_model(graph, opset_imports=opsets, ir_version=model.ir_version, producer_name="onnxmini.compare")
    data_dir = os.path.join(directory, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    path = os.path.join(directory, "model.onnx")
    onnx.save(repro, path)
    for k, (name, arr) in enumerate(data_in):
        with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for k, (name, arr) in enumerate(data_out):
        with open(os.path.join(data_dir, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    return path


@dataclass
class Result:
    outputs: List[Diff]
    divergence: Optional[NodeReport] = None
    repro: Optional[str] = None
    profile: Any = None

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.outputs) and self.divergence is None


def compare_model(
    model_path: str,
    specs: Sequence[str] = (),
    dims: Optional[Dict[str, int]] = None,
    seed: int = 0,
    per_node: bool = False,
    repro_dir: Optional[str] = None,
    profile: bool = False,
    repeat: int = 10,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
    reference: Optional[str] = None,
) -> Result:
    """Programmatic form of the command (see the module docstring)."""
    import onnx

    model = onnx.load(model_path)
    ref_model = onnx.load(reference) if reference else model
    feeds = make_feeds(model, specs, dims, seed)
    out_names = [o.name for o in model.graph.output]

    mini_sess = _mini_session(model.SerializeToString())
    ort_sess = _ort_session(ref_model.SerializeToString())
    mini_out = mini_sess.run(out_names, feeds)
    ort_out = ort_sess.run(out_names, feeds)
    result = Result([diff_arrays(n, m, r, atol, rtol) for n, m, r in zip(out_names, mini_out, ort_out)])

    if per_node or repro_dir:
        names = [n for n in node_output_names(model) if n in set(node_output_names(ref_model))]
        full = expose_intermediates(ref_model)
        ort_all = _ort_session(full.SerializeToString())
        ort_names = [o.name for o in full.graph.output]
        ref_vals = dict(zip(ort_names, ort_all.run(ort_names, feeds)))
        ref_vals.update(feeds)
        mini_vals = dict(zip(names, mini_sess.run(names, feeds)))
        mini_vals.update(feeds)
        result.divergence = first_divergence(model, mini_vals, ref_vals, atol, rtol)
        if repro_dir and result.divergence is not None:
            result.repro = write_repro(model, result.divergence.index, ref_vals, repro_dir)

    if profile:
        from . import profiling

        tmp = tempfile.mkdtemp(prefix="onnxmini_compare_")
        s_ort = _ort_session(ref_model.SerializeToString(), os.path.join(tmp, "ort"))
        s_mini = _mini_session(model.SerializeToString(), os.path.join(tmp, "mini"))
        for _ in range(repeat):
            s_ort.run(out_names, feeds)
            s_mini.run(out_names, feeds)
        t_ort, t_mini = s_ort.end_profiling(), s_mini.end_profiling()
        result.profile = profiling.compare(t_ort, t_mini, by="op", skip_runs=1 if repeat > 1 else 0)
        result.profile.attrs["traces"] = (t_ort, t_mini)
    return result


def format_result(r: Result) -> str:
    lines = ["outputs (onnxmini vs onnxruntime):"]
    lines += ["  " + d.line() for d in r.outputs]
    if r.divergence is not None:
        dv = r.divergence
        lines.append(f"first diverging node: #{dv.index} '{dv.name}' ({dv.op_type})")
        lines += ["  output " + d.line() for d in dv.outputs]
        if dv.inputs:
            lines += ["  input  " + d.line() for d in dv.inputs]
        if all(d.ok for d in dv.inputs):
            lines.append("  its inputs agree: the divergence starts in this node")
    elif r.outputs and any(not d.ok for d in r.outputs):
        lines.append("per-node: no intermediate diverges (run with --per-node)")
    if r.repro:
        folder = os.path.dirname(r.repro)
        lines.append(f"repro: {folder}  (replay: onnxmini run {r.repro} --inputs {os.path.join(folder, 'test_data_set_0')})")
    if r.profile is not None:
        p = r.profile.rename(columns={"base_us": "ort_us", "other_us": "onnxmini_us", "base_count": "ort_calls",
                                      "other_count": "onnxmini_calls", "ratio": "onnxmini/ort"})
        lines.append("kernel time per run by op (us), onnxruntime vs onnxmini:")
        lines.append(p.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        lines.append("traces: " + ", ".join(r.profile.attrs["traces"]))
    lines.append("verdict: " + ("PASS" if r.ok else "FAIL"))
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m onnxmini.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--input", action="append", default=[], metavar="NAME=SPEC",
                   help="random:SHAPE, zeros:SHAPE, ones:SHAPE, FILE.npy or FILE.pb")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N", help="symbolic dimension of generated inputs (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-node", action="store_true", help="find the first node whose output diverges")
    p.add_argument("--repro", metavar="DIR", help="write the diverging node as an ONNX test folder (implies --per-node)")
    p.add_argument("--profile", action="store_true", help="profile both runtimes and compare kernel time per op")
    p.add_argument("--repeat", type=int, default=10, help="runs profiled with --profile, the first one not counted (default 10)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default by dtype, float32 1e-5)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default by dtype, float32 1e-4)")
    p.add_argument("--reference", metavar="MODEL", help="run onnxruntime on this model instead (same value names)")
    a = p.parse_args(argv)
    dims = {}
    for d in a.dim:
        name, _, v = d.partition("=")
        dims[name] = int(v)
    import onnxmini

    try:
        r = compare_model(a.model, a.input, dims, a.seed, a.per_node, a.repro, a.profile, a.repeat, a.atol, a.rtol, a.reference)
    except Exception as e:  # onnxmini, onnxruntime and argument errors alike: one line, exit 2
        side = "onnxmini" if isinstance(e, onnxmini.OnnxMiniError) else type(e).__module__.split(".")[0]
        print(f"onnxmini.compare: error ({side}): {e}", file=sys.stderr)
        return 2
    print(format_result(r))
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
