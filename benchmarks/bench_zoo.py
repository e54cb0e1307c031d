"""Latency of the model zoo (tests/zoo/zoo_manifest.json), onnxmini vs onnxruntime, and the
docs/models.md "Real models (zoo)" table written from the raw CSV.

Both runtimes are timed in-process through their Python InferenceSession (session.run on the
manifest's seeded inputs, seed 0), with all graph optimizations on (ORT_ENABLE_ALL on both:
onnxmini folds constants and fuses at any level >= 1), intra_op_num_threads = 1 and 2. The
machine is shared, so the two are timed alternately for --rounds rounds (each round: a short
warm-up, then about --round-s seconds of runs per side); each side reports the median of its
per-round medians, and the ratio onnxruntime / onnxmini (> 1: onnxmini faster). A session is
made for each round and dropped after it (creation and a 0.3 s warm-up excluded), so that
neither runtime's idle spinning pool threads run beside the other's timed runs. The max error column is
max |onnxmini - onnxruntime| over every output element, seeds 0 and 1, from the same sessions.

OpenVINO (when the openvino package is installed) is timed in the same rounds as a third runtime:
CPU plugin, PERFORMANCE_HINT LATENCY, INFERENCE_NUM_THREADS = N, INFERENCE_PRECISION_HINT f32
(benchmarks/openvino_runtime.py); a model it cannot compile keeps an empty column and the reason
in openvino_note. Its ratio is openvino / onnxmini (> 1: onnxmini faster).

    .venv/bin/python scripts/fetch_models.py                 # the models, into the cache
    .venv/bin/python benchmarks/bench_zoo.py [--threads 1 2] [--rounds 5] [--only NAME ...]
    .venv/bin/python benchmarks/bench_zoo.py --table-only    # docs table from the CSV, no timing
    .venv/bin/python benchmarks/bench_zoo.py --busy          # the same with the other core busy

--busy keeps one busy-looping process running during the timing (users' machines are busy too;
spinning pools suffer most) and writes zoo_<machine-tag>_busy.csv and the second docs table.

Raw CSV: benchmarks/results/zoo_<machine-tag>.csv (tag: CPU family, widest ISA, cores).
"""
import argparse
import csv
import datetime
import os
import pathlib
import platform
import sys
import time

import numpy as np
import onnx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import zoo_lib  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import openvino_runtime  # noqa: E402

DOCS = ROOT / "docs" / "models.md"
WARMUP_S = 0.3  # first warm-up per session: pool threads spread over the cores (see bench_models.py)
SEEDS = (0, 1)


def cpuinfo_field(key: str) -> str:
    try:
        return next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.split(":")[0].strip() == key)
    except (OSError, StopIteration):
        return ""


def amd_generation(vendor=None, family=None, model=None) -> str:
    """'zen4' etc. from the CPU family and model (this machine's when not given): cloud VMs name
    every AMD part "AMD EPYC", and Zen 4 (AVX-512 on 256-bit units) and Zen 5 (full-width
    AVX-512) differ 2x in FMA peak, so their results must not share a file. Empty for other
    vendors."""
    if vendor is None:
        vendor = cpuinfo_field("vendor_id")
        try:
            family, model = int(cpuinfo_field("cpu family")), int(cpuinfo_field("model"))
        except ValueError:
            return ""
    if vendor != "AuthenticAMD":
        return ""
    if family == 26:
        return "zen5"
    if family == 25:  # Zen 3 parts are models 0x00-0x0f and 0x20-0x5f
        return "zen4" if 0x10 <= model <= 0x1f or model >= 0x60 else "zen3"
    return "zen2" if family == 23 else ""


def cpu_name() -> str:
    name = cpuinfo_field("model name") or platform.processor() or "unknown CPU"
    gen = amd_generation()
    label = f"Zen {gen[3:]}"
    return f"{name} ({label})" if gen and label.lower() not in name.lower() else name


def widest_isa() -> str:
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return "unknown"
    forced = os.environ.get("ONNXMINI_ISA")  # onnxmini's override (core/cpu_features.h)
    found = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "portable"
    return forced or found


def machine_tag() -> str:
    name = cpu_name().lower()
    family = next((k for k in ("xeon", "epyc", "ryzen", "core", "neoverse") if k in name), "cpu")
    gen = amd_generation()
    family = f"{family}_{gen}" if gen else family
    return f"{family}_{widest_isa()}_{os.cpu_count()}core"


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def mini_session(path, threads, spin=True):
    import onnxmini
    so = onnxmini.SessionOptions()
    so.intra_op_num_threads = threads
    so.intra_op_allow_spinning = spin
    so.graph_optimization_level = onnxmini.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxmini.InferenceSession(str(path), so)


def warm(sess, feeds, seconds, runs=3):
    t_end, k = time.perf_counter() + seconds, 0
    while k < runs or time.perf_counter() < t_end:
        sess.run(None, feeds)
        k += 1


def timed_round(make_session, feeds, round_s):
    """Median ms of the runs that fit in about round_s seconds (at least 5), on a session made
    for this round and dropped after it: both runtimes' pool threads spin while waiting for
    work, so a session kept alive across the other runtime's round steals its second core
    (seen here: g2p_id_bert_mlm at 2 threads took 4.5 ms beside a live 2-thread onnxruntime
    session, 0.31 ms without)."""
    sess = make_session()
    warm(sess, feeds, WARMUP_S)
    ts, t_end = [], time.perf_counter() + round_s
    while len(ts) < 5 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    del sess
    return float(np.median(ts)), len(ts)


def max_error(entry, ort_sess, mini_sess):
    """(max |onnxmini - onnxruntime|, max of that over atol + rtol * |onnxruntime|) over every output
    (mini_sess: any session with run(None, feeds), OpenVINO's too)."""
    tol, worst, used = entry["tolerance"], 0.0, 0.0
    for seed in SEEDS:
        feeds = zoo_lib.make_feeds(entry, seed)
        for r, o in zip(ort_sess.run(None, feeds), mini_sess.run(None, feeds)):
            if r.size:
                r64 = r.astype(np.float64)
                d = np.abs(np.asarray(o).astype(np.float64) - r64)
                worst = max(worst, float(d.max()))
                used = max(used, float((d / (tol["atol"] + tol["rtol"] * np.abs(r64))).max()))
    return worst, used


def openvino_check(ov_core, path, entry):
    """(note, max |openvino - onnxruntime|): note is empty when OpenVINO compiles and runs the model."""
    if ov_core is None:
        return "openvino not installed", float("nan")
    try:
        return "", max_error(entry, ort_session(path, 1), openvino_runtime.Session(ov_core, path, 1))[0]
    except Exception as err:  # an op or input type OpenVINO does not take: its columns stay empty
        return openvino_runtime.describe_failure(err), float("nan")


def bench(a, entries, out_csv):
    import onnxruntime
    ov_core = openvino_runtime.core()
    rows = []
    for e in entries:
        path = zoo_lib.model_path(e)
        if not path.exists():
            print(f"{e['name']}: not in {zoo_lib.cache_dir()} (run {zoo_lib.FETCH_COMMAND}); skipped", flush=True)
            continue
        counts = zoo_lib.op_counts(onnx.load(str(path)))
        feeds = zoo_lib.make_feeds(e, 0)
        try:
            mini_1, note = mini_session(path, 1), ""
        except Exception as err:  # an op onnxmini lacks: time onnxruntime alone, say why
            mini_1, note = None, f"onnxmini: {type(err).__name__}: {err}".splitlines()[0]
        err_max, tol_used = max_error(e, ort_session(path, 1), mini_1) if mini_1 is not None else (float("nan"),) * 2
        del mini_1
        ov_note, ov_err = openvino_check(ov_core, path, e)
        for t in a.threads:
            ort_r, mini_r, nospin_r, ov_r, runs = [], [], [], [], 0
            for _ in range(a.rounds):
                ms, n = timed_round(lambda: ort_session(path, t), feeds, a.round_s)
                ort_r.append(ms)
                runs += n
                if not note:
                    ms, n = timed_round(lambda: mini_session(path, t), feeds, a.round_s)
                    mini_r.append(ms)
                    runs += n
                if not note and t > 1:  # diagnostic: pool threads that sleep at once instead of spinning
                    ms, n = timed_round(lambda: mini_session(path, t, spin=False), feeds, a.round_s)
                    nospin_r.append(ms)
                    runs += n
                if not ov_note:
                    ms, n = timed_round(lambda: openvino_runtime.Session(ov_core, path, t), feeds, a.round_s)
                    ov_r.append(ms)
                    runs += n
            ort_ms = float(np.median(ort_r))
            mini_ms = float(np.median(mini_r)) if mini_r else float("nan")
            nospin_ms = float(np.median(nospin_r)) if nospin_r else float("nan")
            ov_ms = float(np.median(ov_r)) if ov_r else float("nan")
            rows.append({"model": e["name"], "package": e["package"], "nodes": sum(counts.values()),
                         "op_types": len(counts), "threads": t, "onnxruntime_ms": round(ort_ms, 4),
                         "onnxmini_ms": round(mini_ms, 4), "ratio_ort_over_onnxmini": round(ort_ms / mini_ms, 3),
                         "onnxmini_nospin_ms": round(nospin_ms, 4),
                         "max_abs_err": f"{err_max:.3g}", "tolerance_used": f"{tol_used:.3g}",
                         "atol": e["tolerance"]["atol"], "rtol": e["tolerance"]["rtol"],
                         "rounds": a.rounds, "runs": runs, "load1": round(os.getloadavg()[0], 1),
                         "machine": cpu_name(), "isa": widest_isa(), "cores": os.cpu_count(),
                         "onnxruntime_version": onnxruntime.__version__,
                         "date": datetime.date.today().isoformat(), "note": note,
                         "openvino_ms": round(ov_ms, 4), "ratio_openvino_over_onnxmini": round(ov_ms / mini_ms, 3),
                         "openvino_max_abs_err": f"{ov_err:.3g}", "openvino_version": openvino_runtime.version(),
                         "openvino_note": ov_note})
            r = rows[-1]
            print(f"{e['name']:24s} threads={t} ort {ort_ms:9.3f} ms  onnxmini {mini_ms:9.3f} ms  ratio "
                  f"{r['ratio_ort_over_onnxmini']:6.2f}  (no spin {nospin_ms:8.3f} ms)  max err {r['max_abs_err']}  "
                  f"openvino {ov_ms:9.3f} ms  load {r['load1']} {note} {ov_note}", flush=True)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    keep = []
    if a.only and out_csv.exists():  # a partial rerun keeps the other models' rows
        done = {r["model"] for r in rows}
        keep = [r for r in csv.DictReader(open(out_csv)) if r["model"] not in done]
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), restval="")
        w.writeheader()
        order = {e["name"]: i for i, e in enumerate(zoo_lib.load_manifest())}
        w.writerows(sorted(keep + rows, key=lambda r: (order.get(r["model"], 1 << 30), int(r["threads"]))))
    print(f"wrote {out_csv}")


def fmt_ms(v):
    v = float(v) if v not in ("", None) else float("nan")
    return "—" if v != v else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def busy_core():
    """A process that keeps one core busy until killed (the --busy load)."""
    import subprocess
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def table(csv_path, busy=False) -> str:
    rows = list(csv.DictReader(open(csv_path)))
    entries = {e["name"]: e for e in zoo_lib.load_manifest()}
    by_model = {}
    for r in rows:
        by_model.setdefault(r["model"], {})[int(r["threads"])] = r
    first = rows[0]
    loads = [float(r["load1"]) for r in rows if r.get("load1")]
    lines = [f"Measured on {first['machine']} ({first['isa'].upper()}, {first['cores']} cores), onnxruntime "
             f"{first['onnxruntime_version']}, {first['date']}, 1-minute load average {min(loads):.1f}-{max(loads):.1f} "
             f"during the runs{', one more core kept busy by a busy-looping process (--busy)' if busy else ''} "
             f"(a shared machine: 2-thread figures suffer most); raw numbers: `{os.path.relpath(csv_path, ROOT)}`. "
             "Latency: median of per-round medians, both runtimes in-process through Python, all graph "
             "optimizations on; ratio = onnxruntime / onnxmini (> 1: onnxmini faster). Nodes include If/Loop "
             "bodies. Max error: max |onnxmini - onnxruntime| over all outputs, two seeded inputs, one thread; in "
             "brackets the largest fraction of the manifest's tolerance atol + rtol * |onnxruntime| used. No-spin: onnxmini "
             "with intra_op_allow_spinning = False (pool threads sleep at once), a diagnostic of the 2-thread runs. "
             f"OpenVINO {first.get('openvino_version') or '(not in this CSV)'}: CPU plugin, LATENCY hint, f32, timed in "
             "the same rounds; in brackets openvino / onnxmini (> 1: onnxmini faster); — where it did not run "
             "(the reason is the CSV's openvino_note).",
             "",
             "| model | source (PyPI) | covers | nodes | op types | max error (of tolerance) | ORT 1T ms | onnxmini 1T ms "
             "| ratio 1T | OpenVINO 1T ms | ORT 2T ms | onnxmini 2T ms | ratio 2T | OpenVINO 2T ms "
             "| onnxmini 2T no-spin ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, by_t in by_model.items():
        r1, r2 = by_t.get(1), by_t.get(2)
        any_r = r1 or r2
        covers = entries[name]["covers"] if name in entries else ""
        if any_r["note"]:
            err = "fails: " + ("LSTM not implemented yet" if "'LSTM'" in any_r["note"] else any_r["note"])
        else:
            err = f"{float(any_r['max_abs_err']):.2g} ({float(any_r['tolerance_used']):.2g})"

        def cells(r):
            if r is None:
                return "— | — | — | —"
            ratio = "—" if r["note"] else f"**{float(r['ratio_ort_over_onnxmini']):.2f}**"
            ov = fmt_ms(r.get("openvino_ms"))
            ov_ratio = r.get("ratio_openvino_over_onnxmini") or "nan"
            if ov != "—" and float(ov_ratio) == float(ov_ratio):
                ov += f" ({float(ov_ratio):.2f})"
            return f"{fmt_ms(r['onnxruntime_ms'])} | {fmt_ms(r['onnxmini_ms'])} | {ratio} | {ov}"
        lines.append(f"| `{name}` | {any_r['package']} | {covers} | {any_r['nodes']} | {any_r['op_types']} | {err} "
                     f"| {cells(r1)} | {cells(r2)} | {fmt_ms(r2['onnxmini_nospin_ms']) if r2 else '—'} |")
    return "\n".join(lines) + "\n"


def table_markers(csv_path):
    """docs/models.md keeps one table per machine and load (the CSV's name: zoo_<machine-tag>[_busy]),
    between these markers, so a run on one machine never overwrites another machine's table."""
    stem = pathlib.Path(csv_path).stem
    return (f"<!-- zoo-table:begin {stem} (benchmarks/bench_zoo.py writes this table) -->",
            f"<!-- zoo-table:end {stem} -->")


def write_docs(csv_path, busy=False):
    begin, end = table_markers(csv_path)
    text = DOCS.read_text()
    if begin not in text or end not in text:
        sys.exit(f"bench_zoo: {DOCS} has no '{begin}' ... '{end}' markers: add them where this machine's "
                 "table goes (or pass --no-docs)")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    DOCS.write_text(head + begin + "\n" + table(csv_path, busy) + end + tail)
    print(f"wrote the zoo table of {DOCS.relative_to(ROOT)} from {csv_path.relative_to(ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5, help="alternating onnxruntime / onnxmini rounds")
    ap.add_argument("--round-s", type=float, default=0.4, help="seconds of timed runs per side per round")
    ap.add_argument("--only", nargs="+", default=[], help="only these manifest names")
    ap.add_argument("--csv", type=pathlib.Path, default=None,
                    help="raw results (default benchmarks/results/zoo_<machine-tag>.csv)")
    ap.add_argument("--table-only", action="store_true", help="write the docs table from the CSV, time nothing")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite the docs/models.md table")
    ap.add_argument("--busy", action="store_true", help="keep one more core busy while timing (own CSV and table)")
    a = ap.parse_args()
    suffix = "_busy" if a.busy else ""
    out_csv = (a.csv or ROOT / "benchmarks" / "results" / f"zoo_{machine_tag()}{suffix}.csv").resolve()
    if not a.table_only:
        entries = [e for e in zoo_lib.load_manifest() if not a.only or e["name"] in a.only]
        load = busy_core() if a.busy else None
        try:
            bench(a, entries, out_csv)
        finally:
            if load is not None:
                load.kill()
    if not a.no_docs:
        write_docs(out_csv, a.busy)
    else:
        print(table(out_csv, a.busy))


if __name__ == "__main__":
    main()
