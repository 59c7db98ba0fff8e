#!/usr/bin/env bash
# On a machine with a CUDA GPU, one command, under 6 minutes (16 cores, one H100/H200):
#   1. the test suite on the GPU (every neural estimator at device="auto"; the CUDA-only tests
#      of tests/test_cuda.py, which must run, not skip); tests needing optional packages that
#      are absent (faiss, dask, efficientnet, sphinx) skip; time limit SUITE_S (default 160 s);
#   2. benchmarks/bench_gpu.py with what is left of TOTAL_S (default 340 s; at least 120 s):
#      step times, throughput against this machine's CPU and a plain loop, search against
#      block matmul + topk, the main job, a DCM-size epoch; a part that would not fit in the
#      time left is not run and its targets FAIL.
# Prints one [PASS] / [FAIL] line per target, then a summary; exits 1 if any target failed.
# Arguments go to bench_gpu.py (e.g. --skip-main-job, --output-dir DIR).  docs/scaling.md,
# "On a GPU".  PYTHON picks the interpreter (default python3).  Full logs stay in a
# temporary folder whose path is printed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SUITE_S=${SUITE_S:-160}
TOTAL_S=${TOTAL_S:-340}
started=$SECONDS
log=$(mktemp -d -t gpu_check.XXXXXX)

"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device')" \
    || exit 2
"$PY" -c "import torch; print('GPU:', torch.cuda.get_device_name(), '| torch', torch.__version__,
      '| CUDA', torch.version.cuda)"

# 0. the CUDA-only tests first, on their own: their verdict stands even if the suite runs out
echo "== tests/test_cuda.py and the device tests on the GPU =="
timeout -k 5 120 "$PY" -m pytest -q -p no:cacheprovider -rfE tests/test_cuda.py \
    tests/test_device_paths.py tests/test_device_numerics.py tests/test_device_metrics.py \
    --junitxml="$log/cuda.xml" 2>&1 | tail -n 15

# 1. the suite: xdist workers share the GPU; each gets a share of the cores (WORKERS overrides)
workers=${WORKERS:-$("$PY" -c "import os; print(max(1, min(8, (os.cpu_count() or 2) // 2)))")}
threads=$("$PY" -c "import os; print(max(1, (os.cpu_count() or 2) // $workers))")
echo "== Test suite on the GPU ($workers workers x $threads threads, limit ${SUITE_S} s) =="
OMP_NUM_THREADS=$threads timeout -k 5 "$SUITE_S" "$PY" -m pytest -q -n "$workers" \
    --ignore=tests/test_docs.py -p no:cacheprovider -rfE --junitxml="$log/suite.xml" 2>&1 \
    | tee "$log/suite.txt" | tail -n 40
suite_rc=${PIPESTATUS[0]}

# 2. the benchmark, in what is left of the 6 minutes (a hard stop 15 s past its budget)
BENCH_S=$((TOTAL_S - (SECONDS - started) - 20))
BENCH_S=$((BENCH_S < 120 ? 120 : BENCH_S))
echo
echo "== bench_gpu.py (budget ${BENCH_S} s) =="
timeout -k 5 "$((BENCH_S + 15))" "$PY" benchmarks/bench_gpu.py --budget-s "$BENCH_S" "$@" \
    2>&1 | tee "$log/bench.txt"
bench_rc=${PIPESTATUS[0]}

echo
echo "== Targets (gpu_check.sh) =="
"$PY" - "$log" "$suite_rc" "$bench_rc" <<'EOF'
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

log, suite_rc, bench_rc = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
lines = []


def verdict(passed, name, detail):
    lines.append(f"  [{'PASS' if passed else 'FAIL'}] {name}: {detail}")


def outcomes(path, keep=lambda case: True):
    """Outcome counts of a junit report's test cases ({} when it is missing)."""
    found = {}
    try:
        for case in ET.parse(path).iter("testcase"):
            if keep(case):
                outcome = next((child.tag for child in case if child.tag in
                                ("failure", "error", "skipped")), "passed")
                found[outcome] = found.get(outcome, 0) + 1
    except (OSError, ET.ParseError):
        pass
    return found


counts = outcomes(log / "suite.xml")
cuda = outcomes(log / "cuda.xml", lambda case: case.get("classname", "").endswith("test_cuda"))
devices = outcomes(log / "cuda.xml")
timed_out = " (timed out)" if suite_rc in (124, 137) else ""
verdict(suite_rc == 0, "suite", f"pytest exit {suite_rc}{timed_out}; {counts or 'no report'}")
verdict(bool(cuda) and set(cuda) == {"passed"}, "cuda_tests",
        f"tests/test_cuda.py {cuda or 'not run'} (every test must run and pass)")
verdict(bool(devices) and not {"failure", "error"} & set(devices), "device_tests",
        f"test_cuda + test_device_paths/numerics/metrics {devices or 'not run'}")
bench = (log / "bench.txt").read_text(errors="replace") if (log / "bench.txt").exists() else ""
found = re.findall(r"^\s*\[(PASS|FAIL)\] (.*)$", bench, flags=re.M)
for word, rest in found:
    lines.append(f"  [{word}] {rest}")
if not found:
    verdict(False, "bench_gpu", f"no target printed (exit {bench_rc}"
            + (", timed out)" if bench_rc in (124, 137) else ")"))
print("\n".join(lines))
failed = sum("[FAIL]" in line for line in lines)
print(f"\n{len(lines) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
rc=$?
echo "gpu_check.sh: $((SECONDS - started)) s; full logs in $log"
exit $rc
