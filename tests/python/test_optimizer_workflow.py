"""Runs the seed workflow of docs/optimizer.md exactly as documented: the ```sh block after
<!-- seed-workflow-sh --> (optimize, profile the original at --optimize 0 and the optimized model,
compare) in a shell whose `onnxmini` is the built CLI, then the ```python block (the plot)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO

DOC = REPO / "docs" / "optimizer.md"
SMALL = REPO.parent / "shared" / "models" / "small.onnx"


def _block(marker, lang):
    m = re.search(rf"<!-- {marker} -->\s*```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)
    assert m, f"docs/optimizer.md has no {lang} block after <!-- {marker} -->"
    return m.group(1)


def test_seed_workflow_runs_as_documented(onnxmini_cli, tmp_path, monkeypatch):
    if not SMALL.exists():
        pytest.skip(f"the seed model {SMALL} is not there")
    pytest.importorskip("matplotlib")
    shutil.copy(SMALL, tmp_path / "small.onnx")
    env = dict(os.environ, PATH=f"{onnxmini_cli.parent}{os.pathsep}{os.environ['PATH']}")
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", _block("seed-workflow-sh", "sh")], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # optimize: fewer nodes saved, and the report; compare: both sides' kernel time and the fused ops.
    assert re.search(r"14 nodes -> 13 nodes saved to small_opt.onnx", out.stdout), out.stdout
    assert "per rule:" in out.stdout
    assert "base:" in out.stdout and "other:" in out.stdout and "Conv" in out.stdout
    # The level-0 profile has one event per model node: Sigmoid is there; fused into FusedConv it is not.
    assert re.search(r"^[=-]\s+Sigmoid", out.stdout, flags=re.M), out.stdout
    assert len(list(tmp_path.glob("prof_plain_*.json"))) == 1 and len(list(tmp_path.glob("prof_opt_*.json"))) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("seed-workflow-python", "python"), str(DOC), "exec"), {})
    assert (tmp_path / "small_plain_vs_opt.png").stat().st_size > 0
