"""Every Python snippet of README.md runs on its own, copied into a fresh interpreter (4 of 6
failed alone with a NameError for make_temporal_crossmodal, X or info), prints its result and
warns nothing.  The README's figures are held to their sources by test_doc_figures.py."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                      flags=re.S)


def test_the_readme_has_its_snippets():
    assert len(SNIPPETS) >= 7


# a fresh interpreter each, the test's point: its imports (torch, scikit-learn, pandas: about
# 3 s of CPU) and torch._dynamo at the first optimizer (about 1 s) are most of each test; the
# snippets' own work is kept to a second or two (compare_estimators with plots=False)
@pytest.mark.slow
@pytest.mark.parametrize("number", range(1, len(SNIPPETS) + 1))
def test_each_readme_snippet_runs_alone_in_a_fresh_interpreter(number, tmp_path):
    pytest.importorskip("pandas")
    # one torch thread, as the main job runs its fits: the snippets' sizes keep each to seconds
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-W", "default", "-c", SNIPPETS[number - 1]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"README snippet {number} failed alone:\n{proc.stderr[-3000:]}"
    # run as a script, it shows its result, and a user copying it sees no warning
    assert proc.stdout.strip(), f"README snippet {number} prints nothing"
    # (but the one that says its small fits warn that they were still improving)
    warned = {line.split(": ")[1] for line in proc.stderr.splitlines() if "Warning: " in line}
    allowed = {"StillImprovingWarning"} if "still improving at their last epoch" in \
        SNIPPETS[number - 1] else set()
    assert warned <= allowed, f"README snippet {number} warns:\n{proc.stderr[-3000:]}"
