#!/usr/bin/env bash
# The GPU work queue on the device machine (no network): install the carried wheels (.whl/, see
# docs/rerun.md) and this checkout into /tmp/site as benchmarks/h200_rerun.sh does, then run
# benchmarks/gpu_queue.py with its arguments (archives into $OUT). Same on an H100 and an H200.
#
#   bash benchmarks/gpu_queue.sh --budget 550
set -u
# Only the wheels a rerun needs (.whl/ may hold others' for other work: a cuda-bindings there would
# shadow the image's own): Liger, what the signing and schema code import, and their needs.
wheels=()
for name in liger_kernel pydantic pydantic_core annotated_types typing_extensions typing_inspection rfc8785 \
    cryptography cffi pycparser; do
  for w in .whl/"$name"-[0-9]*.whl; do [ -e "$w" ] && wheels+=("$w"); done
done
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --no-build-isolation --target /tmp/site "${wheels[@]}" . || exit 1
# The checkout's sitegen/ lacks sitegen.kernels (kernels/ maps there only when installed): never
# import from the working directory, here or in the reruns the queue starts.
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv,noheader
exec python3 benchmarks/gpu_queue.py --out "${OUT:?OUT is where the archives go}" "$@"
