"""Silero's 1-D Conv layers, one layer per model, each forced Conv variant timed through the CLI.

The layers of silero_vad / silero_vad_ifless (batch 1) and silero_vad_v6_whisper (batch 4):
the STFT front end (1 input channel, 256 taps at stride 128, 258 filters) and the encoder's
3-tap layers (stride 1 and 2, 1..5 output columns). Per round and layer every variant runs once
(`onnxmini run --repeat R --json`, ONNXMINI_CONV_VARIANT forcing the path; the order rotates
by round) and the result is the median over rounds of each variant's per-run median latency,
in microseconds (process and session overhead included: a trivial model takes ~0.5 us).

    .venv/bin/python benchmarks/bench_conv1d_small.py [--rounds 5] [--repeat 3000] [--out F.csv]
    ONNXMINI_ISA=avx2 .venv/bin/python benchmarks/bench_conv1d_small.py ...
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
# name: (N, C, L, M, taps, stride, pad)
LAYERS = {
    "stft_b1": (1, 1, 576, 258, 256, 128, 0),
    "enc0_b1": (1, 129, 3, 128, 3, 1, 1),
    "enc1_b1": (1, 128, 3, 64, 3, 2, 1),
    "enc2_b1": (1, 64, 2, 64, 3, 2, 1),
    "enc3_b1": (1, 64, 1, 128, 3, 1, 1),
    "stft_b4": (4, 1, 832, 258, 256, 128, 0),
    "enc0_b4": (4, 129, 4, 128, 3, 1, 1),
    "enc1_b4": (4, 128, 4, 64, 3, 2, 1),
    "enc2_b4": (4, 64, 2, 64, 3, 2, 1),
    "enc3_b4": (4, 64, 1, 128, 3, 1, 1),
}
VARIANTS = ["im2col", "row", "im2row", ""]  # "" = the rule


def make_layer(folder, name, spec, rng):
    n, c, length, m, taps, stride, pad = spec
    w = (rng.standard_normal((m, c, taps)) * 0.1).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=[stride], pads=[pad, pad], kernel_shape=[taps])
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, length])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = folder / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    x = folder / f"{name}_x.npy"
    np.save(x, rng.standard_normal((n, c, length)).astype(np.float32))
    return model, x


def time_once(cli, model, x, variant, repeat):
    env = dict(os.environ, ONNXMINI_CONV_VARIANT=variant)
    out = subprocess.run([str(cli), "run", str(model), "--input", f"x={x}", "--threads", "1", "--repeat", str(repeat),
                          "--warmup", "300", "--json"], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["median"] * 1000.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3000)
    p.add_argument("--cli", default=str(pathlib.Path(os.environ.get("ONNXMINI_BUILD_DIR", ROOT / "build")) / "tools" / "onnxmini"))
    p.add_argument("--out", default="")
    a = p.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        files = {name: make_layer(folder, name, spec, rng) for name, spec in LAYERS.items()}
        got = {(name, v): [] for name in LAYERS for v in VARIANTS}
        for r in range(a.rounds):
            for name, (model, x) in files.items():
                order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
                for v in order:
                    got[(name, v)].append(time_once(a.cli, model, x, v, a.repeat))
    isa = os.environ.get("ONNXMINI_ISA", "native")
    lines = ["layer,N,C,L,M,taps,stride,pad,isa," + ",".join(f"{v or 'rule'}_us" for v in VARIANTS)]
    for name, spec in LAYERS.items():
        meds = [f"{statistics.median(got[(name, v)]):.2f}" for v in VARIANTS]
        lines.append(",".join([name] + [str(s) for s in spec] + [isa] + meds))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        pathlib.Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
