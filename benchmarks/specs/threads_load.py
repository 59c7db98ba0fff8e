"""The main job on a shared machine: torch threads per fit against busy cores.

Runs ``python -m temporal_xmodal compare`` (a reduced job: ``--n-samples 1000 --max-epochs
3``; ``--full``: the main job) with ``--n-threads 1`` and ``--n-threads <cores>`` beside
``--busy`` busy processes (``python -c "while True: pass"``), recording each run's wall time
(seconds) and the 1-minute load average at its start.  Read more in docs/scaling.md.
"""

import os
import subprocess
import sys
import tempfile
import time



def arguments(parser):
    parser.add_argument("--full", action="store_true", help="the main job at its defaults")
    parser.add_argument("--busy", default="0,2,1", help="busy processes, comma-separated")


def name(args):
    return "bench_threads_load" + ("_quick" if args.quick else "")


def run_job(job, threads, n_busy):
    """Wall-clock seconds of one compare run with ``threads`` beside ``n_busy`` busy processes."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_busy)]
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


def measure(args):
    job = ([] if args.full else ["--n-samples", "300", "--max-epochs", "1"] if args.quick
           else ["--n-samples", "1000", "--max-epochs", "3"])
    cores, runs = os.cpu_count() or 1, []
    for n_busy in (int(k) for k in args.busy.split(",")):
        for threads in sorted({1, cores}):
            runs.append(run_job(job, threads, n_busy))
            print(runs[-1], flush=True)
    return {"job": ["compare", *job], "cores": cores, "runs": runs}
