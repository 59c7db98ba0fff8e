"""The main job and the README's commands."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_compare_prints_table_and_writes_outputs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "temporal_xmodal", "compare", "--output", str(tmp_path),
         "--n-samples", "800", "--max-epochs", "3"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    assert "I→T mAP" in proc.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {row["name"]: row for row in results["rows"]}
    assert set(rows) == {"CCA", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes", "SCML"}
    for name, row in rows.items():
        assert name in proc.stdout
        assert 0.2 < row["map_i2t"] <= 1 and len(row["per_bin"]["map_mean"]) == 10
        assert 0 < row["tmap50"] <= 1 and 0 < row["local_map10"] <= 1
    assert (tmp_path / "comparison.png").stat().st_size > 10_000


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    main, tests = _readme_commands()
    assert main.endswith("python -m temporal_xmodal compare")
    assert "pytest" in tests and "torch==2.13.0" in tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci
