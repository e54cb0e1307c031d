"""Shared pytest fixtures: where the repository, the build and the onnxmini CLI are.

ONNXMINI_BUILD_DIR selects the CMake build folder (default: <repo>/build).
"""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("ONNXMINI_BUILD_DIR", REPO / "build")).resolve()


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def onnxmini_cli() -> pathlib.Path:
    """Path of the onnxmini executable; the test fails (not skips) when it is missing."""
    cli = build_dir() / "tools" / "onnxmini"
    if not cli.exists():
        pytest.fail(f"onnxmini CLI not found at {cli}: build the onnxmini_cli target or set ONNXMINI_BUILD_DIR")
    return cli
