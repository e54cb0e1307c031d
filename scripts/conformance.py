#!/usr/bin/env python3
"""Runs every ONNX backend node test through onnxmini (and, with --write, through onnxruntime),
proposes the statuses of the manifests and writes docs/conformance.md, for two sets of node tests:

  debian  Debian's libonnx-testdata (onnx 1.12): /usr/share/libonnx-testdata/data/node,
          statuses in tests/conformance/manifest.txt;
  pip     the node tests of the onnx package in the venv (1.23), exported by
          scripts/export_node_tests.py into BUILD_DIR/onnx_node_tests (never checked in),
          statuses in tests/conformance/manifest_onnx123.txt.

    .venv/bin/python scripts/conformance.py [--set debian|pip|both] [--build-dir build] [--write]
                                            [--node-root DIR]

The tests run inside the gtest binary (ConformanceSweep.RunList), so the comparison is
exactly the one CI applies (tests/conformance/conformance_runner.cc: onnx's backend-test
tolerances rtol 1e-3, atol 1e-7; exact results for ops that only move data; rtol 1e-4 too
for the reductions), with the fast and with the reference kernels: a test passes when both
do. Without --write it only prints the proposal.

Status rules: a test that passes is `pass`. A failing test becomes `skip: <reason>`; the
reason is derived from the model (float8/int4/string types) or from onnxmini's error (an unimplemented op or attribute), and a
wrong numeric result is written as "skip: WRONG RESULT ..." so that it stands out as a
bug to fix, never as an accepted limitation. A hand-written reason already in the
manifest is kept while the test still fails.
"""
import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import onnx

REPO = pathlib.Path(__file__).resolve().parents[1]
MANIFEST = REPO / "tests" / "conformance" / "manifest.txt"
PIP_MANIFEST = REPO / "tests" / "conformance" / "manifest_onnx123.txt"
DOC = REPO / "docs" / "conformance.md"
# docs/conformance.md holds the Debian section, then from this line on the pip set's section;
# --write for one set rewrites its own section and keeps the other.
PIP_DOC_MARKER = "<!-- pip set: scripts/conformance.py --set pip --write -->"

P = onnx.TensorProto
NARROW_TYPES = {P.FLOAT8E4M3FN: "float8", P.FLOAT8E4M3FNUZ: "float8", P.FLOAT8E5M2: "float8",
                P.FLOAT8E5M2FNUZ: "float8", P.UINT4: "int4", P.INT4: "int4"}
for _name in ("FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"):
    if hasattr(P, _name):
        NARROW_TYPES[getattr(P, _name)] = _name.lower()


def _elem_types(model):
    types = set()
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.type.HasField("tensor_type"):
            types.add(vi.type.tensor_type.elem_type)
    for node in model.graph.node:
        for a in node.attribute:
            if a.name in ("to", "value") and a.type == onnx.AttributeProto.INT:
                types.add(a.i)
            if a.type == onnx.AttributeProto.TENSOR:
                types.add(a.t.data_type)
    return types


def scope(node_root):
    """{test folder: (op, model)} for every node test of the set. A test's op is its single node's
    op, the base test's for `_expanded*` variants (the op's function body), else its first node's
    that is not a Constant."""
    models, single_op = {}, {}
    for d in sorted(node_root.iterdir()):
        if not (d / "model.onnx").exists():
            continue
        m = onnx.load(str(d / "model.onnx"), load_external_data=False)
        models[d.name] = m
        if len(m.graph.node) == 1:
            single_op[d.name] = m.graph.node[0].op_type
    out = {}
    for name, m in models.items():
        op = single_op.get(name)
        if op is None and "_expanded" in name:
            op = single_op.get(name.split("_expanded")[0])
        if op is None:
            ops = [n.op_type for n in m.graph.node if n.op_type != "Constant"] or ["Constant"]
            op = ops[0]
        out[name] = (op, m)
    return out


def sweep(tests, binary, node_root):
    """Runs `tests` in the gtest binary; {test: (passed, max_err, message)}. Survives crashes."""
    if not binary.exists():
        sys.exit(f"{binary} not found: build the onnxmini_tests target")
    results, remaining = {}, list(tests)
    with tempfile.TemporaryDirectory() as tmp:
        while remaining:
            lst, report = pathlib.Path(tmp) / "list.txt", pathlib.Path(tmp) / "report.txt"
            lst.write_text("\n".join(remaining) + "\n")
            report.unlink(missing_ok=True)
            env = dict(os.environ, ONNXMINI_CONFORMANCE_LIST=str(lst), ONNXMINI_CONFORMANCE_REPORT=str(report),
                       ONNXMINI_NODE_TESTS=str(node_root))
            proc = subprocess.run([str(binary), "--gtest_filter=ConformanceSweep.RunList"], env=env,
                                  capture_output=True, text=True)
            started = None
            for line in report.read_text().splitlines() if report.exists() else []:
                if line.startswith("start "):
                    started = line.split()[1]
                elif line.startswith("done "):
                    parts = line.split(" ", 4)
                    results[parts[1]] = (parts[2] == "pass", float(parts[3]), parts[4] if len(parts) > 4 else "")
                    started = None
            if started:  # the process died inside this test
                results[started] = (False, 0.0, f"CRASH (exit {proc.returncode})")
            remaining = [t for t in remaining if t not in results]
            if remaining and not started:
                sys.exit(f"sweep stopped without a result for {remaining[0]}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return results


def ort_sweep(tests, node_root):
    """Runs `tests` through onnxruntime (scripts/conformance_ort.py, onnx's backend-runner comparison);
    {test: (passed, message)}. Restarts after a test that kills the process."""
    results, remaining = {}, list(tests)
    with tempfile.TemporaryDirectory() as tmp:
        while remaining:
            lst, report = pathlib.Path(tmp) / "list.txt", pathlib.Path(tmp) / "report.txt"
            lst.write_text("\n".join(remaining) + "\n")
            report.unlink(missing_ok=True)
            proc = subprocess.run([sys.executable, str(REPO / "scripts" / "conformance_ort.py"), str(lst), str(report),
                                   str(node_root)], capture_output=True, text=True)
            started = None
            for line in report.read_text().splitlines() if report.exists() else []:
                if line.startswith("start "):
                    started = line.split()[1]
                elif line.startswith("done "):
                    parts = line.split(" ", 3)
                    results[parts[1]] = (parts[2] == "pass", parts[3] if len(parts) > 3 else "")
                    started = None
            if started:
                results[started] = (False, f"CRASH (exit {proc.returncode})")
            remaining = [t for t in remaining if t not in results]
            if remaining and not started:
                sys.exit(f"onnxruntime sweep stopped without a result for {remaining[0]}:\n{proc.stderr[-2000:]}")
    return results


def reason_for(test, op, model, message):
    narrow = sorted({NARROW_TYPES[t] for t in _elem_types(model) if t in NARROW_TYPES})
    if narrow:
        return f"{'/'.join(narrow)} types are not supported"
    if P.STRING in _elem_types(model):
        return "string tensors are not supported by this op"
    m = re.match(r"input '([^']+)': (expected rank|dimension) .*", message)
    if m:
        return (f"test data bug: the input_*.pb for '{m.group(1)}' does not have the shape the model declares "
                f"({message[:120]}); onnxmini enforces declared input shapes")
    m = re.search(r"unsupported op: node '[^']*' op '([^']+)'", message)
    if m and "_expanded" in test and m.group(1) != op:
        return f"the expanded form uses {m.group(1)}, which is not implemented"
    if m:
        return f"not implemented: {m.group(1)} at this opset ({message[:160]})"
    m = re.search(r"dtype (\w+) is not supported", message)
    if m:
        return f"not implemented: {m.group(1)} inputs of {op} ({message[:160]})"
    if "differ" in message or "shape" in message or "dtype" in message:
        return f"WRONG RESULT (kernel bug to fix): {message[:200]}"
    return f"fails: {message[:200]}"


def read_manifest(manifest):
    entries = {}
    if manifest.exists():
        for line in manifest.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                test, status = line.split(None, 1)
                entries[test] = status
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("debian", "pip", "both"), default="both", help="which node-test set(s)")
    ap.add_argument("--build-dir", default=os.environ.get("ONNXMINI_BUILD_DIR", str(REPO / "build")))
    ap.add_argument("--tests-binary", help="gtest binary (default: BUILD_DIR/tests/onnxmini_tests)")
    ap.add_argument("--node-root", default="/usr/share/libonnx-testdata/data/node", help="the Debian set's folder")
    ap.add_argument("--pip-root", help="where the pip set is exported (default: BUILD_DIR/onnx_node_tests)")
    ap.add_argument("--write", action="store_true", help="rewrite the manifest(s) and docs/conformance.md")
    args = ap.parse_args()
    binary = pathlib.Path(args.tests_binary or pathlib.Path(args.build_dir) / "tests" / "onnxmini_tests").resolve()
    if args.set in ("debian", "both"):
        node_root = pathlib.Path(args.node_root)
        if not node_root.is_dir():
            sys.exit(f"{node_root} is absent: install the ONNX test data (libonnx-testdata)")
        run_set("debian", node_root, MANIFEST, binary, args.write)
    if args.set in ("pip", "both"):
        pip_root = pathlib.Path(args.pip_root or pathlib.Path(args.build_dir) / "onnx_node_tests")
        subprocess.run([sys.executable, str(REPO / "scripts" / "export_node_tests.py"), "--out", str(pip_root)],
                       check=True)
        run_set("pip", pip_root, PIP_MANIFEST, binary, args.write)


def run_set(which, node_root, manifest, binary, write):
    tests = scope(node_root)
    results = sweep(sorted(tests), binary, node_root)
    old = read_manifest(manifest)

    statuses = {}
    for test, (op, model) in sorted(tests.items()):
        passed, _, message = results[test]
        if passed:
            statuses[test] = "pass"
        elif old.get(test, "").startswith("skip:") and "WRONG RESULT" not in old[test] \
                and not old[test].startswith("skip: fails") and not old[test].startswith("skip: not implemented"):
            statuses[test] = old[test]  # keep a hand-written reason
        else:
            statuses[test] = "skip: " + reason_for(test, op, model, message)

    changed = [t for t in statuses if old.get(t) != statuses[t]]
    for t in changed:
        print(f"{t}: {old.get(t, '(new)')} -> {statuses[t]}")
    total_pass = sum(1 for t in tests if results[t][0])
    print(f"{which} set: {total_pass} / {len(tests)} node tests pass ({len(changed)} manifest changes)")
    if not write:
        return
    ort = ort_sweep(sorted(tests), node_root)
    print(f"{which} set: onnxruntime passes {sum(1 for r in ort.values() if r[0])} / {len(tests)}")
    per_op = collections.defaultdict(lambda: [0, 0, 0, 0.0])  # onnxmini passed, onnxruntime passed, total, max err
    for test, (op, _) in tests.items():
        row = per_op[op]
        row[2] += 1
        row[1] += ort[test][0]
        if results[test][0]:
            row[0] += 1
            row[3] = max(row[3], results[test][1])
    if which == "debian":
        header = ("# ONNX backend node tests run by tests/conformance/test_conformance.cc: every folder of Debian's set.\n"
                  "# <test folder> pass | skip: <reason>. Regenerate: .venv/bin/python scripts/conformance.py --write\n")
    else:
        header = (f"# The node tests of pip's onnx {onnx.__version__} (onnx.backend.test.case.node, exported to\n"
                  "# BUILD_DIR/onnx_node_tests by scripts/export_node_tests.py), run by tests/conformance/test_conformance.cc.\n"
                  "# <test folder> pass | skip: <reason>. Regenerate: .venv/bin/python scripts/conformance.py --set pip --write\n")
    with open(manifest, "w") as f:
        f.write(header)
        for test in sorted(statuses):
            f.write(f"{test} {statuses[test]}\n")
    debian_part, _, pip_part = (DOC.read_text() if DOC.exists() else "").partition(PIP_DOC_MARKER + "\n")
    section = set_doc(which, per_op, statuses, ort, total_pass)
    if which == "debian":
        debian_part = DOC_INTRO + section
    else:
        pip_part = section
    text = debian_part.rstrip("\n") + "\n"
    if pip_part:
        text += "\n" + PIP_DOC_MARKER + "\n" + pip_part
    DOC.write_text(with_summary(text))


SUMMARY_MARKER = "<!-- summary -->"


def with_summary(text):
    """The doc with the table of both sets' totals (read back from the sections) after the marker."""
    rows = ["| set | tests | onnxmini passes | onnxruntime passes |", "|---|---|---|---|"]
    for m in re.finditer(r"^## (.+)\n\n\*\*onnxmini passes (\d+) of (\d+) tests; onnxruntime (\S+) passes (\d+)\.\*\*",
                         text, flags=re.M):
        rows.append(f"| {m.group(1)} | {m.group(3)} | {m.group(2)} | {m.group(5)} (onnxruntime {m.group(4)}) |")
    head, marker, rest = text.partition(SUMMARY_MARKER + "\n")
    if not marker:
        return text
    body = rest.split("\n\n", 1)[1] if rest.startswith("|") else rest
    return head + marker + "\n".join(rows) + "\n\n" + body


DOC_INTRO = """# Conformance: ONNX backend node tests

Generated by `scripts/conformance.py --write` (both sets; `--set debian|pip --write` for one).
Two sets of ONNX backend node tests, every test of each (implemented op or not):

- **Debian's**: `/usr/share/libonnx-testdata/data/node` (onnx 1.12, the version Debian ships),
  statuses in `tests/conformance/manifest.txt`;
- **pip's**: the node tests the venv's onnx package generates
  (`onnx.backend.test.case.node.collect_testcases`), written by `scripts/export_node_tests.py` in
  the Debian layout to `BUILD_DIR/onnx_node_tests` (never checked in; CTest runs it as the fixture
  `onnx_node_tests_export`), statuses in `tests/conformance/manifest_onnx123.txt`.

**onnxmini**: every test runs twice, with the fast kernels and with the reference kernels (the test
oracles), and passes only when both runs do (`tests/conformance/conformance_runner.cc`). Outputs
are compared as onnx's backend runner does: `|got - expected| <= 1e-7 + 1e-3 * |expected|`, NaN
equal to NaN, integer, bool and string outputs exactly, same shape and dtype; a single-node test
is held to more where rounding cannot excuse a difference (`bounds_for`): ops that only move or
select elements (Transpose, Gather, Pad, ArgMax, ReduceMax, TopK, ...) must be exact, and the
accumulating reductions and Range must also be within `1e-5 + 1e-4 * |expected|`.

**onnxruntime** (the venv's, CPU provider, default options) runs the same folders through
`scripts/conformance_ort.py`, which applies onnx's backend-runner comparison (same dtype,
`assert_allclose(rtol=1e-3, atol=1e-7)`, strings exactly). onnxruntime's column therefore uses
the looser of the two rules: where the bounds differ, onnxmini is held to more.

The random ops' tests (RandomUniform, RandomNormal and their Like forms, Bernoulli, Multinomial,
and the expanded models that contain them) are compared by dtype and shape only in onnxmini's
runner (`kRandomOps` in the runner): their expected values come from numpy's generator, which no
runtime reproduces; the kernels' distributions are tested in `tests/kernels/random/`. The
onnxruntime column compares their values and so fails them.

Each manifest lists every test with `pass` or `skip: <reason>` (an op that is not implemented, a
type, or a test-data bug, named); CI (`onnxmini_tests --gtest_filter='Onnx*'`) runs every `pass`
test in both kernel modes and fails when one fails. A failing test that used to pass shows up as
`skip: WRONG RESULT ...` when the manifest is regenerated, never silently.

The data set's PyTorch folders (`data/pytorch-converted`: nn modules exported at opset 6, such as
BatchNorm, Linear (Gemm with `broadcast`) and PReLU; `data/pytorch-operator`: small multi-node
graphs) have no manifest: every folder must pass in both kernel modes
(`tests/conformance/test_pytorch_conformance.cc`, `--gtest_filter='Onnx/PytorchTest.*'`). The
small multi-node model tests of both sets (kind "simple": Debian's `data/simple`, pip's exported
to `BUILD_DIR/onnx_node_tests/simple`) have no manifest either: `test_sequence_model1`-`8`,
`test_expand_shape_model*`, `test_shrink`, ... must pass in both kernel modes; the Gradient,
StringNormalizer and Mod-28 `fmod=0` float models are listed as unsupported with their reasons
(`tests/conformance/test_simple_models.cc`).

<!-- summary -->

"""


def set_doc(which, per_op, statuses, ort, total_pass):
    """One set's section: the totals, the per-op table and the skipped tests, as markdown."""
    import onnxruntime

    title = ("Debian's set (onnx 1.12)" if which == "debian"
             else f"pip's set (onnx {onnx.__version__})")
    ort_pass = sum(1 for r in ort.values() if r[0])
    lines = [f"## {title}", "",
             f"**onnxmini passes {total_pass} of {len(statuses)} tests; onnxruntime {onnxruntime.__version__} "
             f"passes {ort_pass}.**", "",
             "| op | onnxmini | onnxruntime | tests | largest abs error (onnxmini, passing tests, either kernel mode) |",
             "|---|---|---|---|---|"]
    for op in sorted(per_op, key=str.lower):
        mini, ortp, total, err = per_op[op]
        lines.append(f"| {op} | {mini} | {ortp} | {total} | {err:.3g} |" if mini else
                     f"| {op} | {mini} | {ortp} | {total} | |")
    lines += ["", f"### Skipped tests ({title})", "",
              "| test | onnxmini: reason | onnxruntime |", "|---|---|---|"]
    for test in sorted(statuses):
        if statuses[test] != "pass":
            o = "pass" if ort[test][0] else "fails"
            lines.append(f"| `{test}` | {statuses[test][len('skip: '):].replace('|', '/')} | {o} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
