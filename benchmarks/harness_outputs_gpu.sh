#!/usr/bin/env bash
# Real NVBench output for the importer tests, from a GPU machine with no network (the device tool):
# runs benchmarks/harness_outputs/nvbench_axpy.py (cuda-bench, NVBench's Python package, over torch,
# which the machine already has) and writes its --json file under $OUT.
#
#   benchmarks/harness_outputs_gpu.sh
#
# The wheels travel in .whl/ (ignored by git, carried by the device tool), fetched beforehand with
#   pip download cuda-bench==0.3.0 --no-deps -d .whl --python-version 3.12 --platform manylinux_2_27_x86_64 --only-binary=:all:
#   pip download 'cuda-bindings>=12,<13' --no-deps -d .whl --python-version 3.12 --platform manylinux_2_28_x86_64 --only-binary=:all:
#   pip download 'cuda-pathfinder~=1.1' --no-deps -d .whl --python-version 3.12 --only-binary=:all:
# (cuda-bench finds its CUDA major version from cuda-bindings; 12 runs on any driver of CUDA 12 or later.)
# Writes $OUT/nvbench/{cuda_bench_axpy.json, cuda_bench_axpy.log, gpu.txt, versions.txt}; copy the JSON
# to tests/importers/data/nvbench/cuda_bench_axpy.json and gpu.txt, versions.txt beside it.
set -u
site=/tmp/harness-site
[ -d "$site" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
  .whl/cuda_bench-*.whl .whl/cuda_bindings-*.whl .whl/cuda_pathfinder-*.whl || exit 1
export PYTHONPATH=$site
dest=$OUT/nvbench
mkdir -p "$dest"
nvidia-smi -L > "$dest/gpu.txt"
python3 -c 'import sys, torch, cuda.bench; print(sys.version.split()[0], "torch", torch.__version__, "cuda-bench", cuda.bench.__version__)' \
  > "$dest/versions.txt" 2>&1
python3 benchmarks/harness_outputs/nvbench_axpy.py --json "$dest/cuda_bench_axpy.json" > "$dest/cuda_bench_axpy.log" 2>&1
echo "nvbench_axpy.py: exit $?"
