"""Every ONNXMINI_* environment variable the library reads is in docs/cli.md's table.

The library reads its variables through std::getenv("ONNXMINI_...") or env_override("ONNXMINI_...",
...); this scans core/, kernels/, runtime/, profiler/ and tools/ for those calls and checks each
name appears in the "Environment variables" table (a row starting with | `NAME` |). The table had
fallen six variables behind before this test (2026-11-29).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
READ = re.compile(r'(?:getenv|env_override)\(\s*"(ONNXMINI_[A-Z0-9_]+)"')


def library_variables():
    names = set()
    for folder in ("core", "kernels", "runtime", "profiler", "tools"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".cc", ".h"):
                names.update(READ.findall(path.read_text(errors="replace")))
    return names


def documented_variables():
    """The names in the first cell of each row of the table (a cell may list several)."""
    section = (ROOT / "docs" / "cli.md").read_text().split("## Environment variables", 1)[1]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z0-9_]+)`", line.split("|")[1]))
    return names


def test_scan_finds_the_known_variables():
    names = library_variables()
    # A scan that found nothing would pass the next test vacuously.
    assert {"ONNXMINI_ISA", "ONNXMINI_CONV_VARIANT", "ONNXMINI_CONV_SMALLK"} <= names


def test_every_library_variable_is_documented():
    missing = sorted(library_variables() - documented_variables())
    assert not missing, f"not in docs/cli.md's Environment variables table: {missing}"
