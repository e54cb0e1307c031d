"""Regenerates every model in models/ and docs/models.md.

    .venv/bin/python models/generate_all.py

Deterministic: fixed seeds everywhere, so a rerun leaves `git status` clean (given the
same scikit-learn / skl2onnx versions). Each model is checked to load in onnxruntime.
"""
import collections
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_helper  # noqa: E402
import gen_sklearn  # noqa: E402

DOCS = os.path.join(HERE, "..", "docs", "models.md")
ZOO_SECTION = "## Real models (zoo)"


def _dedupe_opsets(model):
    """skl2onnx sometimes lists a domain twice; keep one entry per domain (highest version)."""
    best = {}
    for op in model.opset_import:
        best[op.domain] = max(best.get(op.domain, 0), op.version)
    del model.opset_import[:]
    for domain in sorted(best):
        model.opset_import.add(domain=domain, version=best[domain])


def _dtype_name(elem_type):
    return onnx.helper.tensor_dtype_to_string(elem_type).replace("TensorProto.", "").lower()


def _type_string(t):
    which = t.WhichOneof("value")
    if which == "tensor_type":
        dims = [d.dim_param or str(d.dim_value) if (d.dim_param or d.HasField("dim_value")) else "N" for d in t.tensor_type.shape.dim]
        return f"{_dtype_name(t.tensor_type.elem_type)}[{', '.join(dims)}]"
    if which == "sequence_type":
        return f"seq({_type_string(t.sequence_type.elem_type)})"
    if which == "map_type":
        key = _dtype_name(t.map_type.key_type)
        return f"map({key}, {_type_string(t.map_type.value_type)})"
    return which


def _describe(name, model, description):
    ops = collections.Counter(((n.domain or "ai.onnx") + ":" if n.domain else "") + n.op_type for n in model.graph.node)
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    ins = "; ".join(f"`{i.name}` {_type_string(i.type)}" for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer})
    outs = "; ".join(f"`{o.name}` {_type_string(o.type)}" for o in model.graph.output)
    op_list = ", ".join(f"{op}" + (f" x{c}" if c > 1 else "") for op, c in ops.items())
    return f"| `{name}.onnx` | {description} | {ins} | {outs} | {op_list} | {opsets} |"


def main():
    rows = []
    for name, build in gen_sklearn.BUILDERS + gen_helper.BUILDERS:
        model, description = build()
        _dedupe_opsets(model)
        onnx.checker.check_model(model)
        path = os.path.join(HERE, f"{name}.onnx")
        data = model.SerializeToString()
        assert len(data) < 1_000_000, f"{name} is {len(data)} bytes"
        ort.InferenceSession(data, providers=["CPUExecutionProvider"])  # must load in onnxruntime
        with open(path, "wb") as f:
            f.write(data)
        rows.append(_describe(name, model, description))
        print(f"wrote {path} ({len(data)} bytes)")

    batch = gen_sklearn.kmeans_batch()
    np.save(os.path.join(HERE, "kmeans_batch.npy"), batch)
    print(f"wrote models/kmeans_batch.npy {batch.shape} {batch.dtype}")

    # The "Real models (zoo)" section after ours is written by benchmarks/bench_zoo.py: kept as it is.
    zoo = ""
    if os.path.exists(DOCS):
        old = open(DOCS).read()
        zoo = old[old.index(ZOO_SECTION):] if ZOO_SECTION in old else ""
    with open(DOCS, "w") as f:
        f.write(HEADER)
        f.write("| model | what | inputs | outputs | ops | opsets |\n|---|---|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n")
        f.write(FOOTER)
        if zoo:
            f.write("\n" + zoo)
    print(f"wrote {os.path.normpath(DOCS)}")


HEADER = """# Models

Small models made by our own scripts (`models/generate_all.py`, with `gen_sklearn.py` for
scikit-learn models converted by skl2onnx and `gen_helper.py` for graphs built with
`onnx.helper`). All weights come from fixed seeds; regenerate with

    .venv/bin/python models/generate_all.py

`kmeans.onnx` is the default model of the README's main job; `kmeans_batch.npy` holds 1000 rows
(float32, 1000x20) of its training set as a realistic input batch:

    onnxmini run models/kmeans.onnx --input input=models/kmeans_batch.npy

Every model is run through onnxmini and onnxruntime on the same inputs by
`tests/python/test_models_vs_ort.py`. This table is written by the generator.

"""

FOOTER = """
Notes
- `N` / `None` is the batch dimension.
- ZipMap outputs (`seq(map(...))`) cannot be written as TensorProto files; the pytest compares the
  probabilities through the `*_nozipmap` twin and the C++ test `tests/kernels/ml/test_zipmap.cc`
  checks the map structure against onnxruntime's semantics.
- `cnn_small.onnx` repeats the layer pattern of `small.onnx`, a 112x112 CNN (which is not in
  this repository) with 32 channels and a 32x32 image.
"""

if __name__ == "__main__":
    main()
