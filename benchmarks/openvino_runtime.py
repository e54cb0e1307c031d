"""OpenVINO as a third runtime in the benchmarks (bench_shapes.py, bench_zoo.py), optional: without
the openvino package core() is None and the callers leave their OpenVINO columns empty.

Settings: the CPU plugin, PERFORMANCE_HINT LATENCY (one stream, for one request at a time),
INFERENCE_NUM_THREADS = the thread count under test, INFERENCE_PRECISION_HINT f32 (otherwise it
may compute in bf16 on CPUs with AMX / AVX512_BF16, which would not be the same arithmetic).
"""
import numpy as np


def core():
    """One openvino.Core for the process, or None when the package is absent."""
    try:
        import openvino
    except ImportError:
        return None
    return openvino.Core()


def version() -> str:
    try:
        import openvino
    except ImportError:
        return ""
    return openvino.__version__


class Session:
    """A compiled model behind the InferenceSession.run(None, feeds) call the timing loops make."""

    def __init__(self, ov_core, path, threads):
        model = ov_core.compile_model(str(path), "CPU", {"PERFORMANCE_HINT": "LATENCY",
                                                         "INFERENCE_NUM_THREADS": threads,
                                                         "INFERENCE_PRECISION_HINT": "f32"})
        self.request = model.create_infer_request()
        self.outputs = model.outputs

    def run(self, _names, feeds):
        result = self.request.infer(feeds)
        return [np.asarray(result[o]) for o in self.outputs]


def describe_failure(err: Exception) -> str:
    """One short line for a CSV note. OpenVINO's messages run over many lines, most of them the C++
    call chain ("Exception from src/...:132:"); the conversion summary or the last check says why."""
    lines = [l.strip() for l in str(err).splitlines() if l.strip()]
    why = [l for l in lines if l.startswith("-- Conversion is failed for")]
    if not why:
        why = [l for l in lines if not l.startswith(("Exception from", "Check '"))] or lines or [""]
    return f"openvino: {type(err).__name__}: {why[-1]}"[:200]
