"""The "Scaling out" example of docs/python.md, run as a script: a session shipped pickled to a
dask.distributed LocalCluster of 2 worker processes scores 200 000 rows in 8 partitions, equal to
scoring them in one process (the script asserts it)."""
import re
import subprocess
import sys
import time

import pytest

from conftest import REPO

pytest.importorskip("distributed", reason="dask[distributed] is in requirements.txt (scripts/setup.sh)")


def _scale_out_script() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "python.md").read_text(), flags=re.S)
    (script,) = [b for b in blocks if b.startswith("# scale_out_dask.py")]
    return script


def test_dask_example_scores_like_one_process(tmp_path):
    script = tmp_path / "scale_out_dask.py"
    script.write_text(_scale_out_script())
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=180)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scored 200000 rows on 2 workers: equal to one process" in done.stdout
    assert elapsed < 60, f"the example took {elapsed:.1f} s"


def test_the_session_is_unpickled_once_per_worker():
    """client.scatter(broadcast=True) ships one copy per worker: every task on a worker sees the same object."""
    import numpy as np
    from dask.distributed import Client, LocalCluster

    import onnxmini

    session = onnxmini.InferenceSession(str(REPO / "models" / "kmeans.onnx"))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(
        cluster
    ) as client:
        remote = client.scatter(session, broadcast=True)
        parts = np.array_split(np.zeros((64, 20), np.float32), 8)
        futures = client.map(lambda s, p: (id(s), len(s.run(None, {"input": p})[0])), [remote] * 8, parts, pure=False)
        seen = client.gather(futures)
        who = client.who_has(futures)
    assert sum(n for _, n in seen) == 64
    workers = {w for ws in who.values() for w in ws}
    assert len({i for i, _ in seen}) <= len(workers) <= 2
