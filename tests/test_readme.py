"""Every Python snippet of README.md runs on its own, copied into a fresh interpreter (4 of 6
failed alone with a NameError for make_temporal_crossmodal, X or info)."""

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
    proc = subprocess.run([sys.executable, "-c", SNIPPETS[number - 1]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"README snippet {number} failed alone:\n{proc.stderr[-3000:]}"


def test_the_date_filter_paragraph_quotes_bench_demo_time():
    """"A date filter or a time-aware model?": every figure is a mean of the committed
    benchmarks/results/bench_demo_time.json, rounded as printed, in the order quoted."""
    import json

    summary = json.loads((ROOT / "benchmarks" / "results" / "bench_demo_time.json")
                         .read_text())["summary"]

    def mean(world, name, key):
        return f"{summary[world][name][key]['mean']:.3f}"

    worlds = ("demo", "wording drift", "content drift")
    expected = [mean("demo", "SAM", "tmap50"), mean("demo", "SAM", "tmap50_filter"),
                mean("steady", "SAM", "tmap50"), mean("steady", "SAM", "tmap50_filter"),
                "0.003"]
    expected += [mean(w, n, k) for w in worlds
                 for n, k in (("Diachronic", "map"), ("Diachronic", "control"), ("SAM", "map"))]
    expected += [mean(w, "Diachronic", "tmap50_filter") for w in worlds[:2]]
    expected += [mean(w, "Diachronic", "control_tmap50_filter") for w in worlds[:2]]
    expected += [mean(w, "SM", "control") for w in worlds]
    expected += [mean(w, "SM", "map") for w in worlds]
    gap = summary["demo"]["Diachronic"]["map"]["mean"] - summary["demo"]["SM"]["map"]["mean"]
    expected.append(f"{gap:.3f}")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = text[text.index("**A date filter or a time-aware model?**"):
                     text.index("## Your own data")]
    assert re.findall(r"\d\.\d{3}", paragraph) == expected
    # the claim beside them: no time-aware model costs more than 0.003 where nothing changes
    for world in ("static", "steady"):
        for name in ("TempXNet-Rec", "Diachronic", "Binned+Procrustes"):
            assert (summary[world][name]["map"]["mean"]
                    >= summary[world]["SAM"]["map"]["mean"] - 0.003), (world, name)
