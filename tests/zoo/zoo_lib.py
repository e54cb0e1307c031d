"""The model zoo's shared helpers: the manifest, the cache folder, the seeded inputs, op counts.

Used by scripts/fetch_models.py (downloads), tests/python/test_zoo.py (onnxmini vs onnxruntime)
and benchmarks/bench_zoo.py (latency). The models themselves are never in the repository: they
live in the cache folder, ${ONNXMINI_ZOO_DIR:-~/.cache/onnxmini/zoo}, one <name>.onnx per entry.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import pathlib
from typing import Dict, List

import numpy as np

MANIFEST = pathlib.Path(__file__).resolve().parent / "zoo_manifest.json"
FETCH_COMMAND = ".venv/bin/python scripts/fetch_models.py"


def cache_dir() -> pathlib.Path:
    env = os.environ.get("ONNXMINI_ZOO_DIR")
    return pathlib.Path(env).expanduser() if env else pathlib.Path.home() / ".cache" / "onnxmini" / "zoo"


def load_manifest() -> List[dict]:
    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)["models"]


def model_path(entry: dict) -> pathlib.Path:
    return cache_dir() / f"{entry['name']}.onnx"


def sha256_of(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---- inputs ---------------------------------------------------------------------------------
# Every generator draws from one numpy Generator seeded by the entry's name and the caller's seed,
# so onnxmini and onnxruntime (and every rerun) see the same tensors.

def _document_image(rng: np.random.Generator, shape) -> np.ndarray:
    """A picture in [0, 1], N x C x H x W: a light page with lines of dark glyph-like strokes and a
    few coloured boxes, plus mild noise: detectors and recognizers see edges and strokes, not
    pure noise (on which a text detector, for one, answers 0 everywhere)."""
    n, c, h, w = shape
    img = np.empty(shape, np.float32)
    for b in range(n):
        page = np.full((c, h, w), 0.9, np.float32) + rng.uniform(-0.05, 0.05, (c, 1, 1)).astype(np.float32)
        for _ in range(2):  # coloured boxes under the text
            y0, x0 = rng.integers(0, h), rng.integers(0, w)
            page[:, y0:y0 + h // 5, x0:x0 + w // 5] = rng.uniform(0.5, 1, (c, 1, 1)).astype(np.float32)
        y = int(rng.integers(1, max(2, h // 8)))
        while y < h - 4:  # text lines of glyphs, each glyph a few strokes in its box
            gh = int(min(h - y - 1, rng.integers(max(4, h // 12), max(5, h // 3) + 1)))
            x, ink = int(rng.integers(0, max(1, w // 10))), rng.uniform(0.0, 0.25)
            end = int(rng.integers(w // 2, w + 1))
            while x < end - gh:
                gw, t = max(3, int(gh * rng.uniform(0.5, 0.9))), max(1, gh // 8)
                for _ in range(int(rng.integers(2, 5))):
                    if rng.random() < 0.5:  # vertical stroke
                        sx = x + int(rng.integers(0, gw - t + 1))
                        page[:, y:y + gh, sx:sx + t] = ink
                    else:
                        sy = y + int(rng.integers(0, gh - t + 1))
                        page[:, sy:sy + t, x:x + gw] = ink
                x += gw + max(1, gh // 5)
            y += gh + int(rng.integers(max(2, gh // 2), 2 * gh + 2))
        page += rng.normal(0, 0.03, page.shape).astype(np.float32)
        img[b] = np.clip(page, 0, 1)
    return img


def _audio(rng: np.random.Generator, shape) -> np.ndarray:
    """Speech-like audio in [-1, 1]: a few harmonics of a 120-250 Hz pitch at 16 kHz, plus noise."""
    t = np.arange(shape[-1], dtype=np.float64) / 16000.0
    f0 = rng.uniform(120, 250)
    wave = sum(rng.uniform(0.05, 0.3) * np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.3)) for k in range(1, 6))
    wave = wave + rng.normal(0, 0.02, shape)
    return np.clip(wave, -1, 1).astype(np.float32).reshape(shape)


def make_input(spec: dict, rng: np.random.Generator) -> np.ndarray:
    dtype, shape, gen = np.dtype(spec["dtype"]), tuple(spec["shape"]), spec["gen"]
    kind = gen["kind"]
    if kind == "image":  # (pixel * scale - mean) / std per channel, pixel in [0, 1]
        x = _document_image(rng, shape) * gen.get("scale", 1.0)
        mean = np.asarray(gen.get("mean", 0.0), np.float32).reshape(-1, 1, 1)
        std = np.asarray(gen.get("std", 1.0), np.float32).reshape(-1, 1, 1)
        x = (x - mean) / std
    elif kind == "audio":
        x = _audio(rng, shape)
    elif kind == "uniform":
        x = rng.uniform(gen["low"], gen["high"], shape)
    elif kind == "randint":  # [low, high)
        x = rng.integers(gen["low"], gen["high"], shape)
    elif kind == "onehot":  # one-hot rows over the last axis
        x = np.eye(shape[-1])[rng.integers(0, shape[-1], shape[:-1])]
    elif kind == "const":
        x = np.full(shape, gen["value"])
    else:
        raise ValueError(f"zoo manifest: unknown input generator '{kind}' in {spec}")
    return np.asarray(x, dtype=dtype)


def make_feeds(entry: dict, seed: int = 0) -> Dict[str, np.ndarray]:
    name_key = int.from_bytes(hashlib.sha256(entry["name"].encode()).digest()[:4], "little")
    rng = np.random.default_rng([seed, name_key])
    return {name: make_input(spec, rng) for name, spec in entry["inputs"].items()}


# ---- op counts -------------------------------------------------------------------------------

def op_counts(model) -> collections.Counter:
    """Node count per op type, subgraphs (If/Loop/Scan bodies) included."""
    counts: collections.Counter = collections.Counter()

    def walk(graph):
        for node in graph.node:
            counts[node.op_type] += 1
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    walk(model.graph)
    return counts


def within_tolerance(ours: np.ndarray, ref: np.ndarray, atol: float, rtol: float):
    """(ok, max |ours - ref|, worst excess over atol + rtol * |ref|) in float64."""
    if ours.size == 0:
        return True, 0.0, 0.0
    if ref.dtype.kind in "fc":
        a, r = ours.astype(np.float64), ref.astype(np.float64)
    else:
        a, r = ours.astype(np.int64), ref.astype(np.int64)
    diff = np.abs(a - r)
    excess = diff - (atol + rtol * np.abs(r))
    return bool((excess <= 0).all()), float(diff.max()), float(excess.max())
