"""The main job on a user's file: a 20,000-row, 1,024-feature Parquet through ``compare --data``.

Builds a synthetic file of the size issue 49 names (512 ``img_*`` and 512 ``txt_*`` float32
columns, a ``date`` column spanning decades, a ``label`` column of 20 classes; its structure
from :func:`temporal_xmodal.datasets.make_temporal_crossmodal`), then runs::

    python -m temporal_xmodal compare --data FILE --image img_ --text txt_ --time date \\
        --label label --output OUT [--estimators ...] [--max-epochs N]

under ``/usr/bin/time -v`` and records the job's printed time estimate, its wall time, its
peak resident memory (against the file's and the feature matrix's size), the first lines of
``table.txt`` and the load average before and after (the machine may be shared).

Run::

    python benchmarks/bench_user_file.py                          # every estimator
    python benchmarks/bench_user_file.py --estimators CCA,Diachronic
    python benchmarks/bench_user_file.py --estimators SCML --name bench_user_file_scml
    python benchmarks/bench_user_file.py --quick                  # 600 rows x 64 features, CCA
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import make_parser, print_header, write_results

REPO = Path(__file__).resolve().parents[1]


def make_file(path, n_rows, n_image, n_text, n_classes, years, seed):
    """Write the synthetic Parquet; return its description."""
    import pandas as pd

    from temporal_xmodal.datasets import make_temporal_crossmodal

    start = time.perf_counter()
    X, y, info = make_temporal_crossmodal(
        n_rows, n_categories=n_classes, n_image_features=n_image, n_text_features=n_text,
        time_range=years, return_info=True, random_state=seed)
    d = info.n_image_features
    columns = {f"img_{j}": X[:, j].astype(np.float32) for j in range(d)}
    columns.update({f"txt_{j}": X[:, d + j].astype(np.float32) for j in range(n_text)})
    frame = pd.DataFrame(columns)
    # the time axis in years, as dates (day resolution)
    year = np.floor(X[:, -1]).astype(int)
    day = np.floor((X[:, -1] - year) * 365).astype("timedelta64[D]")
    frame["date"] = (year - 1970).astype("datetime64[Y]").astype("datetime64[D]") + day
    frame["label"] = np.asarray([f"class_{c:02d}" for c in y])
    frame.to_parquet(path)
    return {"rows": n_rows, "image_features": d, "text_features": n_text,
            "classes": int(len(np.unique(y))),
            "dates": [str(frame["date"].min()), str(frame["date"].max())],
            "file_mib": path.stat().st_size / 2**20,
            "features_mib_float32": n_rows * (d + n_text) * 4 / 2**20,
            "make_seconds": time.perf_counter() - start}


def run_job(path, output, estimators, max_epochs, n_jobs):
    """``compare --data`` under ``/usr/bin/time -v``: its output and the time's report."""
    command = [sys.executable, "-m", "temporal_xmodal", "compare", "--data", str(path),
               "--image", "img_", "--text", "txt_", "--time", "date", "--label", "label",
               "--output", str(output), "--force", "--no-plots", "--n-jobs", str(n_jobs)]
    if estimators:
        command += ["--estimators", estimators]
    if max_epochs:
        command += ["--max-epochs", str(max_epochs)]
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True,
                          cwd=REPO)
    wall = time.perf_counter() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    elapsed = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", done.stderr)
    estimate = [line for line in done.stdout.splitlines() if "time estimate" in line
                or line.startswith("  ")][:3]
    table = Path(output) / "table.txt"
    return {"command": ["python", *command[1:]], "returncode": done.returncode,
            "wall_seconds": wall, "time_elapsed": elapsed.group(1) if elapsed else None,
            "peak_rss_mib": int(rss.group(1)) / 1024 if rss else None,
            "printed_estimate": estimate,
            "table_head": table.read_text().splitlines()[:14] if table.exists() else [],
            "stdout_tail": done.stdout.splitlines()[-25:],
            "stderr_tail": [line for line in done.stderr.splitlines()
                            if not line.startswith("\t")][-10:]}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=512,
                        help="columns of each block (default 512: 1,024 features)")
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--estimators", default=None,
                        help="--estimators of the job (default: every estimator)")
    parser.add_argument("--max-epochs", type=int, default=None,
                        help="--max-epochs of the job (default: each estimator's own)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--name", default="bench_user_file",
                        help="name of the JSON result (default bench_user_file)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="folder to keep the Parquet and the job's output in")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.features, args.estimators = 600, 32, args.estimators or "CCA"
    if args.keep is None:  # the file and the job's output go when the run ends
        with tempfile.TemporaryDirectory(prefix="bench_user_file_") as folder:
            return run(args, Path(folder))
    args.keep.mkdir(parents=True, exist_ok=True)
    return run(args, args.keep)


def run(args, folder):
    """Write the file into ``folder``, run the job there and write the JSON result."""
    path = folder / "user_rows.parquet"
    print_header(f"{args.rows} rows x {2 * args.features} features, {args.classes} classes")
    data = make_file(path, args.rows, args.features, args.features, args.classes,
                     (1950.0, 2020.0), 0)
    features_mib = data["features_mib_float32"]
    print(f"  wrote {path} ({data['file_mib']:.0f} MiB; features {features_mib:.0f} MiB as "
          f"float32) in {data['make_seconds']:.0f} s; dates {data['dates']}")
    load_before = os.getloadavg()
    job = run_job(path, folder / f"out_{args.name}", args.estimators, args.max_epochs, args.n_jobs)
    load_after = os.getloadavg()
    print_header("compare --data")
    print("\n".join(job["printed_estimate"]))
    print(f"  exit {job['returncode']}; wall {job['wall_seconds']:.0f} s; peak RSS "
          f"{job['peak_rss_mib']:.0f} MiB ({job['peak_rss_mib'] / features_mib:.1f}x the "
          f"float32 features); load before {load_before}, after {load_after} on "
          f"{os.cpu_count()} cores")
    print("\n".join(job["table_head"]))
    if job["returncode"]:
        print("\n".join(job["stdout_tail"] + job["stderr_tail"]))
    write_results(args.name, {
        "quick": args.quick, "parameters": {"rows": args.rows, "features": 2 * args.features,
                                            "classes": args.classes,
                                            "estimators": args.estimators or "all",
                                            "max_epochs": args.max_epochs,
                                            "n_jobs": args.n_jobs},
        "data": data, "job": job,
        "load_average": {"before": load_before, "after": load_after}}, args.output_dir)
    return 1 if job["returncode"] else 0


if __name__ == "__main__":
    sys.exit(main())
