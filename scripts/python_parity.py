#!/usr/bin/env python3
"""The parity table of docs/python.md: every public name of onnxruntime's Python API, and whether
onnxmini has it ("yes"), has it with differences ("partly", with the difference), or not ("no").

Both packages are introspected, so the table says what the installed versions have; only the
notes are written by hand (PARTLY, NOTES below). tests/python/test_ort_parity.py checks that the
table in docs/python.md is the one this script prints and that every note names something real.

    .venv/bin/python scripts/python_parity.py            # print the table (markdown)
    .venv/bin/python scripts/python_parity.py --write    # replace it in docs/python.md
"""
from __future__ import annotations

import argparse
import inspect
import pathlib
import sys
from typing import Dict, List, Tuple

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "python.md"
BEGIN, END = "<!-- parity-table:begin (scripts/python_parity.py --write) -->", "<!-- parity-table:end -->"

# The classes whose members are listed one by one.
CLASSES = ("InferenceSession", "SessionOptions", "RunOptions", "OrtValue", "IOBinding", "ModelMetadata", "NodeArg")
EXCEPTIONS = (
    "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
    "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail",
)  # fmt: skip

# Names onnxmini has, with what differs from onnxruntime.
PARTLY: Dict[str, str] = {
    "GraphOptimizationLevel": "same names and values; ORT_ENABLE_LAYOUT and ORT_ENABLE_ALL apply the rules of ORT_ENABLE_EXTENDED (docs/optimizer.md)",
    "ExecutionMode": "ORT_SEQUENTIAL only (ORT_PARALLEL warns and runs sequentially)",
    "get_version_string": "onnxmini's version",
    "InferenceSession.set_providers": "CPUExecutionProvider only; other names warn, as onnxruntime for missing providers",
    "InferenceSession.run_with_iobinding": "run_options.terminate is read when the run starts",
    "SessionOptions.add_session_config_entry": "every key is kept; only session.intra_op.allow_spinning acts",
    "SessionOptions.execution_mode": "ORT_SEQUENTIAL only",
    "SessionOptions.graph_optimization_level": "onnxmini's rules per level (docs/optimizer.md); 3 and 99 as 2",
    "SessionOptions.inter_op_num_threads": "accepted, no effect (nodes run in order)",
    "SessionOptions.enable_cpu_mem_arena": "accepted, no effect (the buffer pool is always on)",
    "SessionOptions.enable_mem_reuse": "accepted, no effect (buffers are always reused)",
    "SessionOptions.use_deterministic_compute": "accepted, no effect (kernels are deterministic per thread count)",
    "RunOptions.log_verbosity_level": "kept; a run logs no verbose lines",
    "RunOptions.only_execute_path_to_fetches": "accepted; every node runs",
    "RunOptions.add_run_config_entry": "entries are kept; none changes a run",
    "OrtValue.ortvalue_from_numpy": "device 'cpu' only",
    "OrtValue.ortvalue_from_shape_and_type": "device 'cpu' only",
    "IOBinding.bind_input": "bind_input(name, array); not the (device, element_type, shape, pointer) form",
    "IOBinding.bind_output": "bind_output(name, array=None or 'cpu')",
    "NoModel": "defined, never raised",
    "EngineError": "defined, never raised",
    "ModelLoaded": "defined, never raised",
    "EPFail": "defined, never raised",
    "InvalidProtobuf": "a subclass of InvalidGraph",
    "Fail": "raised when RunOptions.terminate stops a run",
}
# Notes on names that are fully there, or absent.
NOTES: Dict[str, str] = {
    "get_available_providers": "['CPUExecutionProvider']",
    "get_all_providers": "['CPUExecutionProvider']",
    "get_device": "'CPU'",
    "RunOptions.terminate": "checked before every node, If/Loop/Scan bodies included",
    "InferenceSession.run_with_ortvaluevector": "use run_with_ort_values",
    "SessionOptions.optimized_model_filepath": "ONNX; onnxmini-only fusions saved as their original nodes (docs/optimizer.md)",
    "SessionOptions.register_custom_ops_library": "no custom op libraries",
    "OrtValue.as_sparse_tensor": "no sparse tensors",
    "OrtValue.from_dlpack": "no DLPack",
}


def _public(obj) -> List[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def ort_names(ort) -> List[str]:
    """onnxruntime's public names: module attributes (submodules left out), then class members, then exceptions."""
    names = [n for n in _public(ort) if not inspect.ismodule(getattr(ort, n)) and n not in ("package_name", "contextlib")]
    for cls in CLASSES:
        names += [f"{cls}.{m}" for m in _public(getattr(ort, cls))]
    return names


def _lookup(mod, name: str) -> bool:
    obj = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def rows(ort, mini) -> List[Tuple[str, str, str]]:
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    out = []
    for name in ort_names(ort):
        out.append(_row(name, mini))
    for name in EXCEPTIONS:
        if hasattr(ort_state, name):
            out.append(_row(name, mini, label=f"capi.onnxruntime_pybind11_state.{name}"))
    return out


def _row(name: str, mini, label: str = "") -> Tuple[str, str, str]:
    has = _lookup(mini, name)
    status = ("partly" if name in PARTLY else "yes") if has else "no"
    note = PARTLY.get(name, "") if has else ""
    note = note or NOTES.get(name, "")
    return (label or name, status, note)


def table(ort, mini) -> str:
    rs = rows(ort, mini)
    counts = {s: sum(1 for _, st, _ in rs if st == s) for s in ("yes", "partly", "no")}
    lines = [
        f"onnxruntime {ort.__version__} against onnxmini {mini.__version__}: {len(rs)} names, "
        f"{counts['yes']} yes, {counts['partly']} partly, {counts['no']} no.",
        "",
        "| onnxruntime name | onnxmini | note |",
        "|---|---|---|",
    ]
    lines += [f"| `{n}` | {s} | {note} |" for n, s, note in rs]
    return "\n".join(lines) + "\n"


def doc_table(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n") + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"replace the table in {DOC}")
    args = ap.parse_args()
    import onnxruntime
    import onnxmini

    t = table(onnxruntime, onnxmini)
    if not args.write:
        sys.stdout.write(t)
        return 0
    text = DOC.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + t + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
