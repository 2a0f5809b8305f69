#!/usr/bin/env bash
# batchviz.dynet and the ops it needs, on a machine with a CUDA device and CuPy:
#   1. with BATCHVIZ_BACKEND=cupy: the float64 gradient checks of every op, the dynet layer's
#      tests, the conformance tests against DyNet (DyNet runs on the CPU, batchviz.dynet on
#      the GPU: the same values and gradients at float32 tolerance) and the six programs;
#   2. a program run with --dynet-gpus 1 (no BATCHVIZ_BACKEND): it must pick CuPy.
#
# Usage: bash scripts/gpu-check-dynet.sh OUTDIR [SECONDS]
# Wheels missing there (graphviz, and dyNET38 for Python 3.12 for the conformance tests)
# may be put in .whl/, as for gpu-check.sh; they are installed into /tmp/site first.
set -u
out=${1:?usage: bash scripts/gpu-check-dynet.sh OUTDIR [SECONDS]}
seconds=${2:-420}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
python=${PYTHON:-python3}
source "$(dirname "$0")/gpu-wheels.sh"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
echo "== 1. the ops and batchviz.dynet on CuPy (limit ${seconds}s)"
BATCHVIZ_BACKEND=cupy timeout "$seconds" $python -m pytest -q -p no:cacheprovider -n 8 \
    tests/test_gradcheck.py tests/test_dynet_api.py tests/test_dynet_conformance.py \
    tests/test_dynet_programs.py >"$out/dynet-suite.log" 2>&1
echo "suite: exit $?"
grep -E "^(FAILED|ERROR)" "$out/dynet-suite.log" | head -40
tail -3 "$out/dynet-suite.log"
echo "== 2. --dynet-gpus 1 picks CuPy"
(cd examples/dynet && timeout 120 $python - --quick --steps 4 --dynet-gpus 1 --dynet-autobatch 1 <<'PY'
import runpy
import batchviz as bv
runpy.run_path("treelstm.py", run_name="__main__")
print("backend after --dynet-gpus 1:", bv.get_backend())
assert bv.get_backend() == "cupy"
PY
)
