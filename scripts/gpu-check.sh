#!/usr/bin/env bash
# The GPU checks of batchviz in one command, for a machine with a CUDA device and CuPy:
#   1. the test suite with BATCHVIZ_BACKEND=cupy (every op, strategy and model on the GPU,
#      plus the tests marked `gpu`, which skip elsewhere);
#   2. the benchmarks on CuPy: every training task (`all --backend cupy`), then `hosttime`.
# Each part has its own time limit, so one slow part cannot take the others' time, and
# everything it prints is kept in OUTDIR (suite.log, bench.log, hosttime.log, and
# gpu-results.tar.gz with benchmarks/results/gpu/).
#
# Usage: bash scripts/gpu-check.sh OUTDIR [PARTS] [SUITE_SECONDS] [BENCH_SECONDS] [REPEAT]
#   PARTS: suite, bench or suite,bench (the default)
#
# Wheels of dependencies missing on that machine may be put in .whl/ (git-ignored); they are
# installed into /tmp/site first. With nbformat, nbclient, ipykernel and matplotlib among
# them (and their dependencies), the suite runs the five notebooks on the GPU as well.
# batchviz itself is installed in place (`pip install -e`, no network), so that its
# `batchviz` command exists for the CLI tests.
set -u
out=${1:?usage: bash scripts/gpu-check.sh OUTDIR [PARTS] [SUITE_SECONDS] [BENCH_SECONDS] [REPEAT]}
parts=${2:-suite,bench}
suite_s=${3:-240}
bench_s=${4:-300}
repeat=${5:-3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
python=${PYTHON:-python3}

source "$(dirname "$0")/gpu-wheels.sh"
$python -m pip install -q --no-index --no-deps --no-build-isolation -e . >"$out/install.log" 2>&1 \
    || { echo "pip install -e . failed:"; tail -20 "$out/install.log"; exit 1; }

nvidia-smi -L
$python - <<'EOF'
import cupy, numpy, platform
props = cupy.cuda.runtime.getDeviceProperties(0)
print(f"python {platform.python_version()}, numpy {numpy.__version__}, cupy {cupy.__version__}, "
      f"device {props['name'].decode()}")
EOF

if [[ ,$parts, == *,suite,* ]]; then
echo "== 1. the suite on CuPy (limit ${suite_s}s)"
start=$SECONDS
BATCHVIZ_BACKEND=cupy timeout "$suite_s" $python -m pytest -n 8 -q -p no:cacheprovider \
    --ignore=tests/browser -m "not browser" --durations=10 >"$out/suite.log" 2>&1
echo "suite: exit $? in $((SECONDS - start))s"
grep -E "^(FAILED|ERROR)" "$out/suite.log" | head -40
tail -3 "$out/suite.log"
fi

[[ ,$parts, == *,bench,* ]] || exit 0
echo "== 2. the benchmarks on CuPy (limit ${bench_s}s, --repeat $repeat)"
start=$SECONDS
timeout "$bench_s" $python -m benchmarks all --backend cupy --repeat "$repeat" \
    --json "$out/all.json" >"$out/bench.log" 2>&1
echo "benchmarks: exit $? in $((SECONDS - start))s"
timeout 45 $python -m benchmarks hosttime --backend cupy >"$out/hosttime.log" 2>&1
echo "hosttime: exit $?"
tar czf "$out/gpu-results.tar.gz" benchmarks/results/gpu 2>/dev/null
grep -A40 "^| task | mode" benchmarks/results/gpu/benchmarks.md 2>/dev/null | head -30
