#!/usr/bin/env python3
"""Draws docs/architecture.md's two pictures from the code's #include lines.

    scripts/architecture_picture.py           rewrite the generated blocks of docs/architecture.md
    scripts/architecture_picture.py --check   exit 1 when they are stale, or when an include
                                              goes up or sideways between layers (CTest runs this)

Picture 1, the layers: one box per top-level folder, an arrow A -> B when files of A
include headers of B, labelled with the number of such includes. Picture 2, the data
path: the runtime's modules (a module = a .h/.cc pair) and the layers they hand work to,
an arrow A -> B when A includes B. Both are Mermaid flowcharts (plain text, rendered by
Markdown viewers that know Mermaid, readable as text otherwise).
"""
import argparse
import pathlib
import re
import sys
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
SOURCE_FOLDERS = ["core", "kernels", "profiler", "runtime", "tools", "python", "include"]
# Which layer may include which (besides itself); "include" is the public API.
ALLOWED = {
    "core": {"include"},
    "kernels": {"core", "include"},
    "profiler": {"core", "include"},
    "runtime": {"kernels", "profiler", "core", "include"},
    "tools": {"include"},
    "python": {"include"},
    "include": set(),
}
# The runtime's modules on the data path, in the order the text walks them.
DATA_PATH = ["model_loader", "tensor_proto", "graph", "constant_folding", "graph_fusion", "execution_plan",
             "executor", "memory_pattern", "buffer_pool", "profiler_feed", "session"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources():
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".h", ".cc"):
                yield path


def resolve(src: pathlib.Path, name: str):
    for base in (src.parent, ROOT, ROOT / "include"):
        p = (base / name).resolve()
        if p.is_file() and ROOT in p.parents:
            return p
    return None


def top(path: pathlib.Path) -> str:
    return path.relative_to(ROOT).parts[0]


def edges():
    """(from file, to file) for every quoted include that resolves inside the repository."""
    for src in sources():
        for name in INCLUDE.findall(src.read_text(errors="replace")):
            dst = resolve(src, name)
            if dst:
                yield src, dst


def layer_picture(pairs):
    counts = Counter((top(a), top(b)) for a, b in pairs if top(a) != top(b))
    lines = ["```mermaid", "flowchart TD"]
    labels = {"include": "include/onnxmini (public API)", "tools": "tools (CLI)", "python": "python (binding)"}
    for folder in SOURCE_FOLDERS:
        lines.append(f'  {folder}["{labels.get(folder, folder)}"]')
    for (a, b), n in sorted(counts.items(), key=lambda kv: (SOURCE_FOLDERS.index(kv[0][0]), kv[0][1])):
        lines.append(f"  {a} -->|{n}| {b}")
    lines.append("```")
    return "\n".join(lines)


def module_of(path: pathlib.Path):
    if top(path) == "runtime" and path.stem in DATA_PATH:
        return path.stem
    if top(path) in ("kernels", "profiler"):
        return top(path)
    return None


def data_path_picture(pairs):
    arrows = set()
    for a, b in pairs:
        ma, mb = module_of(a), module_of(b)
        if ma and mb and ma != mb and ma in DATA_PATH:
            arrows.add((ma, mb))
    lines = ["```mermaid", "flowchart LR"]
    for m in DATA_PATH:
        lines.append(f'  {m}["runtime/{m}"]')
    lines.append('  kernels["kernels/ (registry, op families, GEMM engine)"]')
    lines.append('  profiler["profiler/ (samples -> trace, analysis)"]')
    order = DATA_PATH + ["kernels", "profiler"]
    for a, b in sorted(arrows, key=lambda e: (order.index(e[0]), order.index(e[1]))):
        lines.append(f"  {a} --> {b}")
    lines.append("```")
    return "\n".join(lines)


def violations(pairs):
    bad = []
    for a, b in pairs:
        la, lb = top(a), top(b)
        if la != lb and lb not in ALLOWED[la]:
            bad.append(f"{a.relative_to(ROOT)} includes {b.relative_to(ROOT)} ({la}/ may not include {lb}/)")
    return bad


def render(doc: str, pairs) -> str:
    blocks = {"layers": layer_picture(pairs), "data-path": data_path_picture(pairs)}
    for name, text in blocks.items():
        pattern = re.compile(rf"(<!-- generated:{name} -->\n).*?(<!-- /generated -->)", re.S)
        if not pattern.search(doc):
            raise SystemExit(f"docs/architecture.md has no '<!-- generated:{name} -->' block")
        doc = pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc)
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail when the pictures are stale or a layer is crossed")
    args = ap.parse_args()
    pairs = list(edges())
    bad = violations(pairs)
    doc = DOC.read_text()
    new = render(doc, pairs)
    if args.check:
        for line in bad:
            print(line)
        if new != doc:
            print("docs/architecture.md is stale: run scripts/architecture_picture.py")
        return 1 if bad or new != doc else 0
    DOC.write_text(new)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
