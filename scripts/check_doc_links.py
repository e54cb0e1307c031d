#!/usr/bin/env python3
"""Checks every relative link in README.md and docs/**/*.md (CTest `doc_links` runs this).

    scripts/check_doc_links.py          report broken links, exit 1 if any
    scripts/check_doc_links.py --fix    move stale #L<line> anchors to where the cited
                                        name now is (after a merge shifted the code)

A link resolves when its file (or folder) exists; a `#heading` anchor into a Markdown
file must match one of its headings (GitHub's slugs). A source-line link `file#L<n>`
must also cite what it points at: the nearest `name` in backticks before the link (on
its line or the line before, or inside the link text) has to appear on line n, e.g.

    `reference_gemm` at [kernels/gemm_engine/gemm.cc:140](../kernels/gemm_engine/gemm.cc#L140)

and a link text of the form `path:N` must agree with the anchor's N. So a doc cannot
point at a function that moved or was renamed without this check failing.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)|!\[([^\]]*)\]\(([^)\s]+)\)")
CODE_FENCE = re.compile(r"^\s*(```|~~~)")
TICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_:~]*)(?:\(\))?`")
LINE_ANCHOR = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
TEXT_LINE = re.compile(r":(\d+)(?:-\d+)?`?$")


def doc_files(root=ROOT):
    files = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    return [f for f in files if f.exists()]


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[`*_]", lambda m: "_" if m.group(0) == "_" else "", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(md):
    out, fenced = set(), False
    for line in md.read_text().splitlines():
        if CODE_FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def cited_name(line, start, text):
    """The identifier a source-line link cites: in its text, else the last one before it."""
    inside = TICKED.findall(text)
    if inside and "/" not in inside[-1]:
        return inside[-1].split("::")[-1]
    before = TICKED.findall(line[max(0, start - 120):start])
    return before[-1].split("::")[-1] if before else None


def definition_lines(lines, name):
    """1-based lines that look like where `name` is defined (or at least named)."""
    word = re.compile(r"\b" + re.escape(name) + r"\b")
    defs = [i + 1 for i, l in enumerate(lines) if word.search(l) and re.search(r"\b" + re.escape(name) + r"\s*(\(|<|\{|=|:)", l)
            and not l.lstrip().startswith("//")]
    return defs or [i + 1 for i, l in enumerate(lines) if word.search(l)]


def check(fix, root=ROOT):
    errors = []
    for md in doc_files(root):
        text = md.read_text()
        new_lines, fenced, changed, prev_line = [], False, False, ""
        for lineno, line in enumerate(text.splitlines(keepends=True), 1):
            if CODE_FENCE.match(line):
                fenced = not fenced
            if fenced:
                new_lines.append(line)
                continue
            for m in LINK.finditer(line):
                label = m.group(1) if m.group(2) else m.group(3)
                target = m.group(2) or m.group(4)
                if re.match(r"^[a-z]+:", target) or target.startswith("#") and not target[1:]:
                    continue
                where = f"{md.relative_to(root)}:{lineno}"
                path, _, anchor = target.partition("#")
                dest = (md.parent / path).resolve() if path else md
                if not dest.exists():
                    errors.append(f"{where}: link target {target} does not exist")
                    continue
                if not anchor:
                    continue
                la = LINE_ANCHOR.match(anchor)
                if la and dest.is_file():
                    src = dest.read_text(errors="replace").splitlines()
                    n = int(la.group(1))
                    # The name may sit at the end of the previous line (a wrapped sentence).
                    name = cited_name(prev_line + line, len(prev_line) + m.start(), label)
                    tl = TEXT_LINE.search(label.strip())
                    if name is None:
                        errors.append(f"{where}: {target} cites no `name` (put the function in backticks before the link)")
                        continue
                    ok = 1 <= n <= len(src) and re.search(r"\b" + re.escape(name) + r"\b", src[n - 1])
                    if ok and (not tl or int(tl.group(1)) == n):
                        continue
                    cands = definition_lines(src, name)
                    if fix and cands:
                        best = min(cands, key=lambda c: abs(c - n))
                        new_target = f"{path}#L{best}"
                        new_label = TEXT_LINE.sub(lambda t: t.group(0).replace(t.group(1), str(best), 1), label) if tl else label
                        line = line.replace(f"[{label}]({target})", f"[{new_label}]({new_target})", 1)
                        changed = True
                        print(f"{where}: {name}: {target} -> {new_target}")
                        continue
                    hint = f" (`{name}` is on line {', '.join(map(str, cands[:3]))}; run with --fix)" if cands else ""
                    if not ok:
                        errors.append(f"{where}: {target}: line {n} does not name `{name}`{hint}")
                    else:
                        errors.append(f"{where}: link text '{label}' says line {tl.group(1)}, the anchor says {n}")
                elif dest.suffix == ".md" and not la:
                    if anchor not in headings(dest):
                        errors.append(f"{where}: {target}: no heading with anchor #{anchor} in {dest.name}")
            new_lines.append(line)
            prev_line = line
        if fix and changed:
            md.write_text("".join(new_lines))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fix", action="store_true", help="move stale #L anchors to the cited name's line")
    ap.add_argument("--root", default=str(ROOT), help="repository root (default: this script's)")
    a = ap.parse_args()
    root = pathlib.Path(a.root).resolve()
    errors = check(a.fix, root)
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(doc_files(root))} Markdown files checked, {len(errors)} broken link(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
