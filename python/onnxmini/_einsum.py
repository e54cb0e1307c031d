"""einsum for Python: ``onnxmini.einsum``, ``einsum_plan`` and ``einsum_decompose``.

Thin wrappers over onnxmini._onnxmini.einsum (python/src/einsum_bindings.cc, which
calls include/onnxmini/einsum.h): numpy.einsum's calling convention where it fits,
plans as dataclasses, and the progress bar of ``optimize="time"``. See docs/einsum.md.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _onnxmini as _C

_E = _C.einsum

#: What ``optimize=`` accepts: the C++ names, and numpy's booleans (True: the cost model, False: no search).
_OPTIMIZE = {"cost": "cost", "time": "time", "none": "none", True: "cost", False: "none", None: "none"}

ProgressArg = Union[None, bool, Callable[[int, int], Any]]
ShapeLike = Union[Sequence[int], np.ndarray, Any]


def _optimize_name(optimize: Any) -> str:
    try:
        return _OPTIMIZE[optimize]
    except (KeyError, TypeError):
        pass
    raise ValueError(f"einsum: optimize must be 'cost', 'time', 'none', True (= 'cost') or False (= 'none'), got {optimize!r}")


class _TextBar:
    """The CLI's bar (``einsum: timing plans [#####.....] 5/24``), redrawn in place on stderr."""

    width = 30

    def __call__(self, done: int, total: int) -> None:
        filled = self.width * done // total if total else self.width
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\reinsum: timing plans [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}{end}")
        sys.stderr.flush()


class _TqdmBar:
    """A tqdm bar on stderr, created on the first report (when the total is known)."""

    def __init__(self, tqdm: Any):
        self._tqdm = tqdm
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = self._tqdm(total=total, desc="einsum: timing plans", unit="plan", file=sys.stderr, leave=True)
        self._bar.update(done - self._bar.n)
        if done >= total:
            self._bar.close()


def _progress_callable(progress: ProgressArg) -> Optional[Callable[[int, int], Any]]:
    """None/False: no reports; True: a bar on stderr (tqdm when installed); a callable: itself."""
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm import tqdm
        except ImportError:
            return _TextBar()
        return _TqdmBar(tqdm)
    if callable(progress):
        return progress
    raise TypeError(f"einsum: progress must be None, a bool or a callable(done, total), got {type(progress).__name__}")


def _shape_of(item: ShapeLike, i: int) -> Tuple[int, ...]:
    """An array's shape, or a tuple/list of ints taken as a shape."""
    shape = getattr(item, "shape", None)
    if shape is not None:
        return tuple(int(d) for d in shape)
    if isinstance(item, (tuple, list)):
        try:
            return tuple(int(d) for d in item)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"einsum: operand {i} must be an array or a shape (tuple of ints), got {item!r}")


def einsum(
    equation: str,
    *operands: Any,
    optimize: Union[str, bool] = "cost",
    out: Optional[np.ndarray] = None,
    dtype: Any = None,
    threads: int = 1,
    gemm: str = "builtin",
    kernels: str = "fast",
    progress: ProgressArg = None,
    time_candidates: int = 24,
) -> np.ndarray:
    """Evaluates an einsum equation like ``numpy.einsum(equation, *operands)``.

    :param equation: explicit (``"ij,jk->ik"``) or implicit (``"ij,jk"``), with ``...`` and
        repeated letters (diagonals), as numpy
    :param operands: arrays of one dtype: float32, float64, int32 or int64 (other dtypes,
        or a mix, raise TypeError naming the operand; pass ``dtype=`` to convert). Lists and
        scalars go through ``numpy.asarray``. Non-contiguous arrays are copied first.
    :param optimize: ``"cost"`` (default: the cost model picks the plan), ``"time"`` (the best
        ``time_candidates`` plans by cost are timed on random data; the fastest is kept),
        ``"none"`` (no search); numpy's ``True`` means ``"cost"``, ``False`` ``"none"``.
        Plans are cached per (equation, shapes), so only the first call plans or times.
    :param out: an array of the result's shape and dtype to copy the result into (returned)
    :param dtype: convert every operand to this dtype first (``numpy.asarray(op, dtype)``)
    :param threads: intra-op threads (1 default; 0: one per physical core)
    :param gemm: GEMM backend, ``"builtin"`` (default), ``"openblas"`` or ``"eigen"`` where built
    :param kernels: ``"fast"`` (the plan) or ``"reference"`` (plain nested loops)
    :param progress: ``optimize="time"`` only: ``True`` draws a bar on stderr (tqdm when
        installed, else a text bar), a callable is called with ``(done, total)``: ``(0, total)``
        first and ``(total, total)`` last. Nothing is reported when the plan is already cached.
    :return: a new numpy array (or ``out``)

    The GIL is released during planning and evaluation (re-taken only to report progress).
    """
    if dtype is not None:
        operands = tuple(np.asarray(op, dtype=dtype) for op in operands)
    # the common case inline (every 0.1 us shows on 8x8 operands; docs/einsum.md, call overhead)
    try:
        opt = _OPTIMIZE[optimize]
    except (KeyError, TypeError):
        opt = _optimize_name(optimize)  # raises the ValueError
    callback = None if progress is None else _progress_callable(progress)
    result = _E.einsum(equation, operands, opt, threads, gemm, kernels, time_candidates, callback)
    if out is None:
        return result
    if not isinstance(out, np.ndarray) or out.shape != result.shape or out.dtype != result.dtype:
        got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"einsum: out must be an array of dtype {result.dtype} and shape {result.shape}, got {got}")
    np.copyto(out, result)
    return out


@dataclass(frozen=True)
class EinsumStep:
    """One step of a plan: kind is ``gemm``, ``copy``, ``sum``, ``product`` or ``zero``."""

    kind: str
    text: str  # as the CLI prints it, e.g. "gemm out[bnts] <- in1[btnh] x in0[bsnh] batch 400 x (M 20 N 20 K 20) B^T"
    flops: float
    bytes_copied: float
    estimated_us: float


@dataclass(frozen=True)
class EinsumCandidate:
    """A plan timed by ``optimize="time"``."""

    letter_order: str
    contraction_order: str
    summary: str
    estimated_us: float
    measured_us: float


@dataclass(frozen=True)
class EinsumPlan:
    """The plan for (equation, shapes), as ``onnxmini einsum EQUATION --shapes ...`` prints it.

    ``str(plan)`` is ``plan.text``, the CLI's output (without its list of timed candidates).
    """

    equation: str
    canonical: str  # size-1 axes dropped, adjacent letters merged: "(bh)qd,(bh)kd->(bh)qk"
    letter_order: str
    contraction_order: str  # 3+ operands: the pairs contracted, in order; "" otherwise
    optimizer: str  # "none", "cost" or "time"
    input_shapes: List[Tuple[int, ...]]
    output_shape: Tuple[int, ...]
    steps: List[EinsumStep]
    flops: float
    bytes_copied: float
    estimated_us: float  # the cost model's estimate
    measured_us: Optional[float]  # optimize="time": the chosen plan's best time; else None
    candidates: List[EinsumCandidate] = field(default_factory=list)  # optimize="time": fastest first
    summary: str = ""  # one line, what the profiler shows
    text: str = ""  # multi-line, what the CLI prints

    def __str__(self) -> str:
        return self.text


def einsum_plan(
    equation: str,
    *operands: ShapeLike,
    optimize: Union[str, bool] = "cost",
    threads: int = 1,
    gemm: str = "builtin",
    progress: ProgressArg = None,
    time_candidates: int = 24,
) -> EinsumPlan:
    """The plan ``einsum`` uses for these operands (arrays, or shapes given as tuples of ints).

    ``optimize``, ``threads``, ``gemm``, ``progress`` and ``time_candidates`` as for :func:`einsum`;
    the plan is cached, so a following ``einsum`` call with the same shapes reuses it.
    """
    shapes = [_shape_of(op, i) for i, op in enumerate(operands)]
    d = _E.plan(equation, shapes, _optimize_name(optimize), threads, gemm, time_candidates, _progress_callable(progress))
    d["steps"] = [EinsumStep(**s) for s in d["steps"]]
    d["candidates"] = [EinsumCandidate(**c) for c in d["candidates"]]
    return EinsumPlan(**d)


def einsum_decompose(
    equation: str,
    shapes: Sequence[ShapeLike],
    optimize: Union[str, bool] = "cost",
    opset: int = 13,
    dtype: Any = np.float32,
) -> bytes:
    """The plan as an ONNX model of simple operators (Reshape, Transpose, MatMul, Mul,
    ReduceSum, Unsqueeze): inputs ``in0``, ``in1``, ..., output ``out``; returns its bytes
    (``onnx.load_from_string``, ``onnxruntime.InferenceSession(bytes)``).

    :param shapes: one shape (tuple of ints) or array per operand
    :param opset: 7 to 21 (ReduceSum/Unsqueeze take axes as an input from 13)
    :param dtype: float32 (default), float64, int32 or int64
    """
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, (list, tuple)):
        raise TypeError(f"einsum_decompose: shapes must be a list of shapes (tuples of ints), got {type(shapes).__name__}")
    dims = [_shape_of(s, i) for i, s in enumerate(shapes)]
    return _E.decompose(equation, dims, _optimize_name(optimize), int(opset), np.dtype(dtype).name)


def einsum_output_shape(equation: str, *operands: ShapeLike) -> Tuple[int, ...]:
    """The result's shape for these operands (arrays or shapes); raises InvalidArgument when they do not fit."""
    return _E.output_shape(equation, [_shape_of(op, i) for i, op in enumerate(operands)])
