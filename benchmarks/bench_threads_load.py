"""The main job on a machine that other work shares: torch threads per fit against busy cores.

Runs ``python -m temporal_xmodal compare`` (by default a reduced job: ``--n-samples 1000
--max-epochs 3``, 9 fits) with ``--n-threads 1`` (the job's default) and ``--n-threads
<cores>`` (torch's own default, the job's before) beside 0, 1 and 2 busy processes
(``python -c "while True: pass"``, stopped afterwards), and records the wall-clock time of
each run and the load average.  Other users' work on the machine adds to the load: the JSON
records the 1-minute load average at the start of each run.

    python benchmarks/bench_threads_load.py            # the reduced job
    python benchmarks/bench_threads_load.py --full     # the main job itself (long)
"""

import os
import subprocess
import sys
import tempfile
import time

from _common import make_parser, write_results

BUSY = "while True: pass"


def run_job(job, threads, n_busy):
    """Wall-clock seconds of one compare run with ``threads`` beside ``n_busy`` busy processes."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n_busy)]
    try:
        time.sleep(1.0)
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "temporal_xmodal", "compare", *job,
                            "--n-threads", str(threads), "--no-plots", "--output", out],
                           check=True, capture_output=True)
            seconds = time.perf_counter() - start
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    return {"threads": threads, "busy_processes": n_busy, "seconds": seconds,
            "load_before": load}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--full", action="store_true", help="the main job at its defaults")
    parser.add_argument("--busy", default="0,2,1", help="busy processes, comma-separated")
    args = parser.parse_args()
    job = ([] if args.full else ["--n-samples", "300", "--max-epochs", "1"] if args.quick
           else ["--n-samples", "1000", "--max-epochs", "3"])
    cores = os.cpu_count() or 1
    runs = []
    for n_busy in (int(k) for k in args.busy.split(",")):
        for threads in sorted({1, cores}):
            runs.append(run_job(job, threads, n_busy))
            print(runs[-1], flush=True)
    write_results("threads_load" + ("_quick" if args.quick else ""), {
        "job": ["compare", *job], "cores": cores, "runs": runs}, args.output_dir)


if __name__ == "__main__":
    main()
