"""docs/learn.md and its pictures keep working:

* every ```sh block of docs/learn.md runs, in order, from the repository root (the
  build commands excepted: the build is already there);
* scripts/make_pictures.py writes exactly the files committed in docs/img/, every image a
  doc shows exists, and the GEMM blocking drawn is the code's;
* scripts/check_doc_links.py (CTest `doc_links` runs it on the real docs) catches a
  file:line that no longer names the cited function, and --fix moves it.
"""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

LEARN = REPO / "docs" / "learn.md"
IMG = REPO / "docs" / "img"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sh_blocks():
    return re.findall(r"```sh\n(.*?)```", LEARN.read_text(), flags=re.S)


def test_learn_md_commands_run(onnxmini_cli):
    blocks = _sh_blocks()
    assert len(blocks) >= 8, "docs/learn.md lost its command blocks"
    build = build_dir()
    script = ["set -euo pipefail"]
    for block in blocks:
        # Joined continuation lines, so each command is one line.
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("scripts/build.sh"):
                continue  # the build under test is already there
            if "build/benchmarks/bench_gemm" in line and not (build / "benchmarks" / "bench_gemm").exists():
                continue  # configured without benchmarks
            if "scripts/make_pictures.py" in line:
                continue  # test_pictures_match_docs_img runs it
            script.append(line.replace("build/tools/", f"{build}/tools/").replace("build/benchmarks/",
                                                                                   f"{build}/benchmarks/"))
    env = dict(os.environ)
    env.pop("ONNXMINI_ISA", None)
    env.pop("ONNXMINI_CONV_VARIANT", None)
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"a docs/learn.md command failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    # The commands show what the text says they show.
    assert "conv2d_implicit_gemm" in r.stdout and "conv2d_im2col" in r.stdout
    assert re.search(r"=\s+MatMul", r.stdout), "profile compare printed no MatMul row"


def test_pictures_match_docs_img(tmp_path, onnxmini_cli):
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "make_pictures.py"), "--out", str(tmp_path),
                        "--cli", str(onnxmini_cli)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in IMG.iterdir())
    assert written == committed, "docs/img/ is not what scripts/make_pictures.py writes"
    for name in written:
        assert 0 < (tmp_path / name).stat().st_size < 300_000, f"{name}: empty or too large"
    # The drawings without measurements are deterministic: the committed ones are current.
    for name in ["gemm_panels.svg", "microkernel_tile.svg", "im2col_vs_implicit.svg", "transpose16.svg"]:
        assert (tmp_path / name).read_bytes() == (IMG / name).read_bytes(), \
            f"docs/img/{name} is stale: rerun scripts/make_pictures.py"


def test_every_image_a_doc_shows_exists():
    docs = [REPO / "README.md"] + sorted((REPO / "docs").rglob("*.md"))
    shown = 0
    for md in docs:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", md.read_text()):
            assert (md.parent / target).is_file(), f"{md.relative_to(REPO)} shows missing {target}"
            shown += 1
    assert shown >= 5
    assert "docs/img/" in (REPO / "README.md").read_text(), "the README shows no picture"


def test_drawn_gemm_blocking_is_the_codes():
    pictures = _load("make_pictures")
    src = (REPO / "kernels" / "gemm_engine" / "sgemm_kernel_avx512.cc").read_text()
    mr = int(re.search(r"constexpr int MR = (\d+);", src).group(1))
    nr = int(re.search(r"constexpr int NR = (\d+);", src).group(1))
    mc_expr, kc, nc = re.search(r"SgemmKernelSet\{cpu::Isa::Avx512, MR, NR, ([^,]+), (\d+), (\d+)", src).groups()
    mc = eval(mc_expr, {})  # e.g. "14 * 8"
    assert (pictures.MR, pictures.NR, pictures.MC, pictures.KC, pictures.NC) == (mr, nr, mc, int(kc), int(nc))


def test_transpose_picture_replays_a_transpose():
    stages = _load("make_pictures").transpose_stages()
    assert (stages[-1] == stages[0].T).all()
    assert not (stages[1] == stages[0]).all()


def test_link_checker_catches_and_fixes_a_moved_function(tmp_path):
    checker = _load("check_doc_links")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cc").write_text("// header\n\nvoid helper() {}\nvoid kernel_fast() {}\n")
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "a.md"
    doc.write_text("The fast one: `kernel_fast` at [src/k.cc:3](../src/k.cc#L3).\n"
                   "Missing: [gone](../src/nothing.cc), [heading](a.md#no-such-heading).\n")
    (tmp_path / "README.md").write_text("[docs](docs/a.md)\n")
    errors = checker.check(False, tmp_path)
    assert any("line 3 does not name `kernel_fast`" in e and "line 4" in e for e in errors), errors
    assert any("nothing.cc does not exist" in e for e in errors), errors
    assert any("no-such-heading" in e for e in errors), errors
    checker.check(True, tmp_path)
    assert "[src/k.cc:4](../src/k.cc#L4)" in doc.read_text()
    assert not [e for e in checker.check(False, tmp_path) if "kernel_fast" in e]
