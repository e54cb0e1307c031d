"""benchmarks/bench_nchwc_lone.py: its two sides run what they claim (ONNXMINI_NCHWC=0 the NCHW
Conv kernels, ONNXMINI_NCHWC=all one NchwcConv) and its `rule` column is the layout rule's choice
(timing is not checked: one round of one run)."""
import csv
import os
import subprocess
import sys

from conftest import REPO


def run_bench(cli, tmp_path, *args, isa="avx2"):
    out = tmp_path / "lone.csv"
    env = dict(os.environ, ONNXMINI_ISA=isa)
    env.pop("ONNXMINI_NCHWC", None)
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_nchwc_lone.py"), "--cli", str(cli),
                        "--rounds", "1", "--repeat", "1", "--threads", "1", "--out", str(out), *args],
                       env=env, capture_output=True, text=True, cwd=REPO)
    return r, out


def test_sides_and_rule_column(onnxmini_cli, tmp_path):
    # On the AVX2 path (every machine here has it): 96 -> 24 runs as Winograd when blocked, but the
    # rule keeps it in NCHW (24 output channels lost there); 32 -> 32 (288) pays; 16 -> 32 stride 2
    # (96) stays NCHW and runs the direct blocked kernel when forced.
    r, out = run_bench(onnxmini_cli, tmp_path, "--only", "96x24_80", "32x32_56", "16x32_160_s2")
    assert r.returncode == 0, r.stderr
    rows = {row["layer"]: row for row in csv.DictReader(open(out))}
    assert set(rows) == {"96x24_80", "32x32_56", "16x32_160_s2"}
    assert rows["96x24_80"]["blocked_variant"] == "nchwc_winograd"
    assert rows["96x24_80"]["rule"] == "nchw"
    assert rows["32x32_56"]["rule"] == "blocked"
    assert rows["16x32_160_s2"]["rule"] == "nchw"
    assert rows["16x32_160_s2"]["blocked_variant"] == "nchwc_conv_direct"
    for row in rows.values():
        assert not row["nchw_variant"].startswith("nchwc"), row
        assert row["isa"] == "avx2"
        assert float(row["nchw_ms"]) > 0 and float(row["blocked_ms"]) > 0
    # 2 K^2 Cin Cout / (Cin s^2 + Cout)
    assert {k: int(v["intensity"]) for k, v in rows.items()} == {"96x24_80": 346, "32x32_56": 288, "16x32_160_s2": 96}


def test_unknown_layer_is_refused(onnxmini_cli, tmp_path):
    r, out = run_bench(onnxmini_cli, tmp_path, "--only", "7x7_7")
    assert r.returncode != 0
    assert "matched no layer" in r.stderr
    assert not out.exists()
