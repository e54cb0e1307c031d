#!/usr/bin/env python3
"""Packs the onnxmini wheel from an existing CMake build tree, without compiling.

`pip install .` (scikit-build-core) configures and compiles the whole library in
its own build folder. scripts/test.sh already has everything compiled in build/,
so this script lays out the same wheel from there:

  * `cmake --install BUILD --component C` for each of pyproject.toml's
    tool.scikit-build install.components (the extension, libonnxmini, the CLI);
  * the Python packages of tool.scikit-build wheel.packages (python/onnxmini);
  * a .dist-info from pyproject.toml's [project] table (metadata, console scripts).

pip installs the result as it installs the scikit-build-core wheel, so `import
onnxmini` and the `onnxmini` console script behave the same. The interpreter
running this script is the one the wheel is tagged for; the extension in the
build tree must have been built for it (scripts/build.sh passes the venv's
Python to CMake).

Usage: wheel_from_build.py BUILD_DIR OUT_DIR   (prints the wheel's path)
"""
from __future__ import annotations

import base64
import hashlib
import pathlib
import stat
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[1]


def wheel_tag() -> str:
    """cpXY-cpXY-<platform> of the running CPython (the extension is not abi3)."""
    if sys.implementation.name != "cpython":
        sys.exit(f"wheel_from_build: CPython needed, this is {sys.implementation.name}")
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{platform}"


def metadata(project: dict) -> str:
    """Core metadata 2.1 from the [project] table, the fields pyproject.toml uses."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "text" in project.get("license", {}):
        lines.append(f"License: {project['license']['text']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and (REPO / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (REPO / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def entry_points(project: dict) -> str:
    scripts = project.get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{name} = {target}\n" for name, target in scripts.items())


def package_files(stage: pathlib.Path, packages: list[str]) -> dict[str, pathlib.Path]:
    """Archive name -> file: the CMake-installed stage plus the Python package folders.

    Symbolic links are followed (libonnxmini.so.0 -> .so.0.1.0 becomes a copy), as
    scikit-build-core does: a wheel holds no links."""
    files: dict[str, pathlib.Path] = {}
    for f in sorted(stage.rglob("*")):
        if f.is_file():
            files[f.relative_to(stage).as_posix()] = f
    for pkg in packages:
        src = REPO / pkg
        if not src.is_dir():
            sys.exit(f"wheel_from_build: package folder {src} (pyproject.toml wheel.packages) not found")
        for f in sorted(src.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in {".pyc", ".pyo"}:
                files[(pathlib.Path(src.name) / f.relative_to(src)).as_posix()] = f
    return files


def check_extension(files: dict[str, pathlib.Path]) -> None:
    """The extension must match this interpreter, or `import` fails later with a vaguer error."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    modules = [name for name in files if "/_" in name and name.endswith(".so") and ".cpython-" in name]
    if not modules:
        sys.exit("wheel_from_build: no extension module in the build's install: "
                 "was the tree configured with -DONNXMINI_BUILD_PYTHON=ON and built?")
    wrong = [name for name in modules if not name.endswith(suffix)]
    if wrong:
        sys.exit(f"wheel_from_build: {wrong} built for another Python than {sys.executable} "
                 f"(suffix {suffix}); reconfigure with -DPython_EXECUTABLE={sys.executable}")


def record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}\n"


def write_wheel(path: pathlib.Path, files: dict[str, pathlib.Path], dist_info: dict[str, str]) -> None:
    # Stored, not deflated: the wheel is installed at once and deleted, compressing
    # the library twice would only cost time.
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for arcname, src in files.items():
            data = src.read_bytes()
            info = zipfile.ZipInfo(arcname)
            info.external_attr = (stat.S_IMODE(src.stat().st_mode) | stat.S_IFREG) << 16  # keeps bin/ executable
            zf.writestr(info, data)
            record.append(record_line(arcname, data))
        for arcname, text in dist_info.items():
            data = text.encode("utf-8")
            zf.writestr(arcname, data)
            record.append(record_line(arcname, data))
        record_name = next(iter(dist_info)).rsplit("/", 1)[0] + "/RECORD"
        zf.writestr(record_name, "".join(record) + f"{record_name},,\n")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    build, out = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    if not (build / "CMakeCache.txt").is_file():
        sys.exit(f"wheel_from_build: {build} is not a configured CMake build folder (run scripts/build.sh)")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    project, skbuild = pyproject["project"], pyproject["tool"]["scikit-build"]

    with tempfile.TemporaryDirectory(prefix="onnxmini-wheel-") as tmp:
        stage = pathlib.Path(tmp)
        for component in skbuild["install"]["components"]:
            subprocess.run(["cmake", "--install", str(build), "--component", component, "--prefix", str(stage)],
                           check=True, stdout=subprocess.DEVNULL)
        files = package_files(stage, skbuild["wheel"]["packages"])
        check_extension(files)

        tag = wheel_tag()
        name = project["name"].replace("-", "_")
        dist = f"{name}-{project['version']}.dist-info"
        dist_info = {
            f"{dist}/METADATA": metadata(project),
            f"{dist}/WHEEL": ("Wheel-Version: 1.0\nGenerator: onnxmini scripts/wheel_from_build.py\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n"),
        }
        if entry_points(project):
            dist_info[f"{dist}/entry_points.txt"] = entry_points(project)
        out.mkdir(parents=True, exist_ok=True)
        wheel = out / f"{name}-{project['version']}-{tag}.whl"
        write_wheel(wheel, files, dist_info)
    print(wheel)


if __name__ == "__main__":
    main()
