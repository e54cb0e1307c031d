"""Top losing node shapes of onnxmini against onnxruntime, from the traces profile_zoo.py wrote.

Both traces are grouped by (op, X shape, W shape for Conv / ConvTranspose, Y shape), ignoring
node names (the two runtimes fuse differently). Per node occurrence the time is the MINIMUM
over the recorded runs (a shared, loaded machine stretches single runs; the minimum is the
kernel's own time), summed per group; rows are sorted by onnxmini - onnxruntime. With --after,
a second onnxmini trace of the same model (a later build) adds its column and variant.

    .venv/bin/python benchmarks/profile_zoo_table.py ORT.json OURS.json [--after OURS2.json] [--top 5]
        [--ort-skip 5]

--ort-skip: onnxruntime's trace holds the warm-up runs too (profile_zoo.py: --warmup, 5).
Output: a one-line summary (sums of per-node minima, per op) and a markdown table.
"""
import argparse
import bisect
import collections
import json


def shape(s):
    return "x".join(map(str, next(iter(s.values())))) if s else ""


def load(path, skip):
    trace = json.load(open(path))
    events = trace if isinstance(trace, list) else trace["traceEvents"]
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("cat") == "Session" and e.get("name") == "model_run")[skip:]
    starts = [r[0] for r in runs]
    durations = collections.defaultdict(list)  # (key, occurrence in its run) -> [us per run]
    seen = [collections.Counter() for _ in runs]
    variant = {}
    nodes = sorted((e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")),
                   key=lambda e: e["ts"])
    for e in nodes:
        i = bisect.bisect_right(starts, e["ts"]) - 1
        if i < 0 or e["ts"] > runs[i][1]:
            continue
        a = e["args"]
        op, ins, outs = a["op_name"], a["input_type_shape"], a["output_type_shape"]
        key = (op, shape(ins[0]) if ins else "",
               shape(ins[1]) if len(ins) > 1 and op in ("Conv", "ConvTranspose") else "",
               shape(outs[0]) if outs else "")
        j = seen[i][key]
        seen[i][key] += 1
        durations[(key, j)].append(e["dur"])
        variant.setdefault(key, a.get("kernel_variant", ""))
    total, count = collections.Counter(), collections.Counter()
    for (key, _), d in durations.items():
        total[key] += min(d)
        count[key] += 1
    return total, count, variant, len(runs)


def by_op(total):
    ops = collections.Counter()
    for k, v in total.items():
        ops[k[0]] += v
    return ops


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ort")
    p.add_argument("ours")
    p.add_argument("--after")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--ort-skip", type=int, default=5)
    a = p.parse_args()
    ort, _, _, n_ort = load(a.ort, a.ort_skip)
    ours, cnt, var, n_ours = load(a.ours, 0)
    after, _, var2, n_after = load(a.after, 0) if a.after else ({}, None, {}, 0)
    line = f"sums of per-node minima: onnxruntime {sum(ort.values()) / 1e3:.2f} ms, onnxmini {sum(ours.values()) / 1e3:.2f} ms"
    if a.after:
        line += f", onnxmini after {sum(after.values()) / 1e3:.2f} ms"
    print(line + f" (runs: {n_ort}, {n_ours}" + (f", {n_after})" if a.after else ")"))
    o_ops, u_ops = by_op(ort), by_op(ours)
    print("per op (onnxmini / onnxruntime us): " +
          ", ".join(f"{op} {u_ops.get(op, 0)}/{o_ops.get(op, 0)}" for op, _ in (u_ops + o_ops).most_common(8)))
    rows = sorted(((ours.get(k, 0) - ort.get(k, 0), k) for k in set(ort) | set(ours)), reverse=True)[:a.top]
    head = "| op | X | W | Y | nodes | onnxruntime us | onnxmini us | kernel_variant |"
    sep = "|---|---|---|---|---|---|---|---|"
    if a.after:
        head += " onnxmini after us | kernel_variant after |"
        sep += "---|---|"
    print(head)
    print(sep)
    for _, k in rows:
        cells = [k[0], k[1], k[2] or "-", k[3], str(cnt.get(k, 0)), str(ort.get(k, 0)) if k in ort else "(fused)",
                 str(ours.get(k, 0)), var.get(k, "")]
        if a.after:
            cells += [str(after.get(k, "")), var2.get(k, "")]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
