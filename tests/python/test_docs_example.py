"""Executes the ```python blocks of docs/python.md (in order, one namespace) so the documented
example keeps working."""
import re

import pytest

from conftest import REPO

DOC = REPO / "docs" / "python.md"


def test_python_md_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/python.md has no python example"
    monkeypatch.chdir(tmp_path)
    ns = {}
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), ns)
    assert (tmp_path / "linreg_by_op.png").stat().st_size > 0
    assert list(tmp_path.glob("linreg*.json"))
