#!/usr/bin/env bash
# On a machine with a CUDA GPU: the test suite on the GPU (every neural estimator at
# device="auto", the CUDA-only tests of tests/test_cuda.py), then benchmarks/bench_gpu.py.
# About 6 minutes on one H100 with 16 cores (docs/scaling.md, "On a GPU").
# Arguments are passed to bench_gpu.py (e.g. --skip-main-job, --output-dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device')"
workers=$(python3 -c "import os; print(max(1, min(12, (os.cpu_count() or 2) - 2)))")
python3 -m pytest -q -n "$workers" --ignore=tests/test_docs.py -p no:cacheprovider
python3 benchmarks/bench_gpu.py "$@"
