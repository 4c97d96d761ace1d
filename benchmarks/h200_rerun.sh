#!/usr/bin/env bash
# A rerun on the H200 through the device tool (no network there: the wheels travel in .whl/,
# see docs/rerun.md), writing into a copy of records/. Call it once per part of a sweep in one
# device command, so a command cut off by its time limit still brings back the parts it finished.
#
#   benchmarks/h200_rerun.sh OPERATION PASSES [more `sitegen rerun` options]
#
# Under $OUT: gpu.txt, OPERATION-PASSES.log and .json, and new/ holding only the files the
# reruns created (paths as in records/), to copy into the registry, then lock and sign.
set -u
op=$1 passes=$2
shift 2
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site .whl/*.whl . || exit 1
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1
nvidia-smi -L > "$OUT/gpu.txt"
reg=/tmp/reg
[ -d "$reg" ] || cp -r records "$reg"
touch /tmp/before
start=$(date +%s)
python3 -m sitegen.rerun --operation "$op" --pass "$passes" --out "$reg" --json "$@" \
  > "$OUT/$op-$passes.json" 2> "$OUT/$op-$passes.log"
echo "$op $passes $*: exit $?, $(( $(date +%s) - start )) s"
mkdir -p "$OUT/new"
(cd "$reg" && find . -type f -newer /tmp/before ! -name digests.lock -exec cp --parents {} "$OUT/new/" \;)
