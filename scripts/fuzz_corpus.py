#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/) into OUT/<target>/: generated into the
build tree on every run, never committed.
  model         models/*.onnx and the ONNX node tests' model.onnx (Debian's libonnx-testdata)
  tensor_proto  the node tests' test_data_set_0/*.pb (TensorProto, SequenceProto, OptionalProto)
  einsum        equations (fuzz/fuzz_einsum.cc's format: equation, newline, flag and size bytes)
  trace         small traces in both of onnxruntime's layouts, with a control-flow body
usage: fuzz_corpus.py OUT"""
import glob
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
MAX_SEED_BYTES = 64 * 1024  # scripts/fuzz.sh's -max_len: bigger seeds would be cut anyway

EINSUM_EQUATIONS = [
    "ij,jk->ik", "bij,bjk->bik", "ii->i", "ii", "i,i", "ij->ji", "...ij,...jk->...ik", "ij,jk,kl->il",
    "bhqd,bhkd->bhqk", "a,b,c->abc", "iij->j", "ab...,b...->a", "ijk", "i->", "abc,cd,de->abe", "Ab,bC->AC",
]


def write(out_dir, data):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def copy_files(paths, out_dir):
    n = 0
    for p in paths:
        if os.path.getsize(p) <= MAX_SEED_BYTES:
            with open(p, "rb") as f:
                write(out_dir, f.read())
            n += 1
    return n


def trace_events(kernel_layout):
    def ev(name, ts, dur, cat="Node", args=None):
        return {"cat": cat, "pid": 1, "tid": 1, "dur": dur, "ts": ts, "ph": "X", "name": name, "args": args or {}}

    def kernel(node, op, ts, dur, index):
        shapes = [{"float": [1, 4]}]
        return ev(node + "_kernel_time", ts, dur, args={
            "op_name": op, "provider": "CPUExecutionProvider", "node_index": str(index),
            "input_type_shape": shapes, "output_type_shape": shapes})

    events = [ev("model_loading_uri", 0, 50, "Session"), ev("session_initialization", 50, 10, "Session")]
    ts = 100
    for _ in range(2):
        start = ts
        for i, (node, op) in enumerate([("mm", "MatMul"), ("loop", "Loop"), ("relu", "Relu")]):
            if not kernel_layout:
                events.append(ev(node + "_fence_before", ts, 0, args={"op_name": op}))
            if op == "Loop":  # a body run inside the Loop's kernel event
                events.append(kernel("body_add", "Add", ts + 1, 3, 0))
                events.append(ev("SequentialExecutor::Execute", ts + 1, 4, "Session"))
            events.append(kernel(node, op, ts, 7 + i, i))
            if not kernel_layout:
                events.append(ev(node + "_fence_after", ts + 8, 0, args={"op_name": op}))
            ts += 10
        events.append(ev("SequentialExecutor::Execute", start, ts - start, "Session"))
        events.append(ev("model_run", start - 1, ts - start + 2, "Session"))
        ts += 5
    return events


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    counts = {}
    models = sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")) + glob.glob(os.path.join(NODE_TESTS, "*", "model.onnx")))
    counts["model"] = copy_files(models, os.path.join(out, "model"))
    tensors = sorted(glob.glob(os.path.join(NODE_TESTS, "*", "test_data_set_0", "*.pb")))
    counts["tensor_proto"] = copy_files(tensors, os.path.join(out, "tensor_proto"))
    for i, eq in enumerate(EINSUM_EQUATIONS):
        write(os.path.join(out, "einsum"), eq.encode() + b"\n" + bytes([i % 2, 1, 2, 3, 0, 1, 2, 3]))
    counts["einsum"] = len(EINSUM_EQUATIONS)
    for kernel_layout in (False, True):
        write(os.path.join(out, "trace"), json.dumps(trace_events(kernel_layout)).encode())
        write(os.path.join(out, "trace"), json.dumps({"traceEvents": trace_events(kernel_layout)}).encode())
    counts["trace"] = 4
    print("fuzz_corpus: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f" seeds in {out}")


if __name__ == "__main__":
    main()
