#!/usr/bin/env python3
"""Every op of the default domain that onnxmini implements (the kernel registrations `onnxmini ops`
lists) must load at every opset from its first ONNX version on: the registrations must cover, for
each op, every opset
from the op's first schema version (onnx.defs.get_all_schemas_with_history) up to the newest
opset of the installed onnx, except the opsets where the op's schema is deprecated (Upsample-10)
or after it was removed. CTest runs it (opset_coverage) with the interpreter that has onnx.

    python tests/conformance/check_opset_coverage.py --cli build/tools/onnxmini
"""
import argparse
import collections
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

# Ops the model loader handles itself, with no kernel to register.
LOADER_OPS = {"Constant": "runtime/model_loader.cc turns every Constant node into a constant value"}
# Ops onnxmini registers in the default domain that onnx does not define there: onnxruntime
# registers them there too, and its transformer optimizer writes them so (not checked against schemas).
ORT_DEFAULT_DOMAIN_EXTRAS = {
    "SimplifiedLayerNormalization": "onnxruntime's RMS-norm op in the default domain (kernels/nn/transformer_fused.cc)",
}


def registered_ranges(cli):
    """{op: [(since, until)]} of the default domain, from `onnxmini ops` (until inclusive, None = open)."""
    out = subprocess.run([cli, "ops"], capture_output=True, text=True, check=True).stdout
    ranges = collections.defaultdict(list)
    for line in out.splitlines():
        domain, op, span = line.split()[:3]
        if domain == "ai.onnx":
            since, until = span.split("-")
            ranges[op].append((int(since), int(until) if until else None))
    return ranges


def schema_versions():
    """{op: [(since_version, deprecated)]} of the default domain, oldest first."""
    import onnx.defs

    versions = collections.defaultdict(list)
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in ("", "ai.onnx"):
            versions[s.name].append((s.since_version, s.deprecated))
    return {op: sorted(v) for op, v in versions.items()}


def required_opsets(versions, newest):
    """The opsets at which a model may use the op: from its first version to `newest`, less the
    spans of deprecated versions (a deprecated schema ends the op when no version follows it)."""
    required = []
    for i, (since, deprecated) in enumerate(versions):
        end = versions[i + 1][0] - 1 if i + 1 < len(versions) else newest
        if not deprecated:
            required.extend(range(since, end + 1))
    return required


def missing_opsets(op, versions, ranges, newest):
    covered = lambda v: any(a <= v and (b is None or v <= b) for a, b in ranges)
    return [v for v in required_opsets(versions, newest) if not covered(v)]


def compress(opsets):
    """[1, 2, 3, 7] -> '1-3, 7'."""
    spans, start = [], None
    for i, v in enumerate(opsets):
        if start is None:
            start = v
        if i + 1 == len(opsets) or opsets[i + 1] != v + 1:
            spans.append(f"{start}-{v}" if v != start else f"{v}")
            start = None
    return ", ".join(spans)


def self_test():
    # Upsample: 1, 7, 9, 10 (deprecated): opsets 1-9 and nothing after.
    assert required_opsets([(1, False), (7, False), (9, False), (10, True)], 28) == list(range(1, 10))
    assert missing_opsets("X", [(1, False), (13, False)], [(1, 6), (8, None)], 20) == [7]
    assert missing_opsets("X", [(6, False)], [(7, None)], 20) == [6]
    assert missing_opsets("X", [(6, False)], [(1, None)], 20) == []
    assert compress([1, 2, 3, 7]) == "1-3, 7"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="the onnxmini CLI (build/tools/onnxmini)")
    args = ap.parse_args()
    self_test()

    import onnx.defs

    newest = onnx.defs.onnx_opset_version()
    versions, ranges = schema_versions(), registered_ranges(args.cli)
    OPS = sorted(ranges)
    failures = []
    for op in OPS:
        if op in LOADER_OPS or op in ORT_DEFAULT_DOMAIN_EXTRAS:
            continue
        if op not in versions:
            failures.append(f"{op}: not an op of the default domain in onnx {onnx.__version__}")
            continue
        missing = missing_opsets(op, versions[op], ranges.get(op, []), newest)
        if missing:
            failures.append(f"{op}: no kernel for opset {compress(missing)} (onnx versions "
                            f"{[v for v, _ in versions[op]]}, registered {ranges.get(op, [])})")
    for f in failures:
        print(f)
    print(f"{len(OPS) - len(failures)} of {len(OPS)} ops load at every opset from their first version "
          f"to {newest} (onnx {onnx.__version__})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
