"""The installed package against pyproject.toml, and the wheel that scripts/wheel_from_build.py
packs from the build tree (what scripts/install_python.sh installs; docs/building.md).

The first tests hold for any install (`pip install .` or install_python.sh): they check what a
user of the wheel sees. The last ones pack a wheel from $ONNXMINI_BUILD_DIR into a temporary folder.
"""
import base64
import hashlib
import importlib.metadata as md
import pathlib
import stat
import subprocess
import sys
import sysconfig
import tomllib
import zipfile

import pytest

import onnxmini
from conftest import REPO, build_dir

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def test_installed_metadata_matches_pyproject():
    dist = md.distribution(PROJECT["name"])
    assert dist.version == PROJECT["version"] == onnxmini.__version__
    assert dist.metadata["Requires-Python"] == PROJECT["requires-python"]
    requires = dist.requires or []
    for dep in PROJECT["dependencies"]:
        assert dep in requires
    for extra, deps in PROJECT["optional-dependencies"].items():
        assert extra in dist.metadata.get_all("Provides-Extra")
        for dep in deps:
            assert f'{dep}; extra == "{extra}"' in requires
    scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    assert scripts == PROJECT["scripts"]


def test_console_script_runs_the_packaged_cli(onnxmini_cli):
    """`onnxmini ops` through the console script prints what the build tree's CLI prints."""
    script = pathlib.Path(sys.executable).parent / "onnxmini"
    assert script.exists(), f"console script missing at {script}"
    packaged = subprocess.run([str(script), "ops"], capture_output=True, text=True, check=True).stdout
    built = subprocess.run([str(onnxmini_cli), "ops"], capture_output=True, text=True, check=True).stdout
    assert packaged == built and "Gemm" in packaged


@pytest.fixture(scope="module")
def packed_wheel(tmp_path_factory):
    if not (build_dir() / "CMakeCache.txt").exists():
        pytest.fail(f"no configured build tree at {build_dir()}: run scripts/build.sh or set ONNXMINI_BUILD_DIR")
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "wheel_from_build.py"), str(build_dir()), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return pathlib.Path(r.stdout.strip())


def test_packed_wheel_layout_and_tag(packed_wheel):
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert packed_wheel.name.startswith(f"{PROJECT['name']}-{PROJECT['version']}-{py}-{py}-")
    with zipfile.ZipFile(packed_wheel) as zf:
        names = set(zf.namelist())
        ext = f"onnxmini/_onnxmini{sysconfig.get_config_var('EXT_SUFFIX')}"
        sources = {f"onnxmini/{p.name}" for p in (REPO / "python" / "onnxmini").iterdir() if p.is_file()}
        assert {ext, "onnxmini/libonnxmini.so.0", "onnxmini/bin/onnxmini"} | sources <= names
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        mode = zf.getinfo("onnxmini/bin/onnxmini").external_attr >> 16
        assert mode & stat.S_IXUSR, oct(mode)


def test_packed_wheel_record_matches_contents(packed_wheel):
    """pip checks RECORD on install: every file listed once, with its sha256 and size."""
    with zipfile.ZipFile(packed_wheel) as zf:
        dist_info = f"{PROJECT['name']}-{PROJECT['version']}.dist-info"
        rows = [line.split(",") for line in zf.read(f"{dist_info}/RECORD").decode().splitlines()]
        listed = {name for name, _, _ in rows}
        assert listed == set(zf.namelist())
        for name, digest, size in rows:
            if name.endswith("/RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={expected}", len(data)), name


def test_wheel_from_build_rejects_an_unconfigured_folder(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "wheel_from_build.py"), str(tmp_path),
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode != 0 and str(tmp_path) in r.stderr and not (tmp_path / "out").exists()
