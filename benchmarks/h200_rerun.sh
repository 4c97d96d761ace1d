#!/usr/bin/env bash
# A rerun on the H200 through the device tool (no network there: the wheels travel in .whl/,
# see docs/rerun.md), writing into a copy of records/. Call it once per part of a sweep in one
# device command, so a command cut off by its time limit still brings back the parts it finished.
#
#   benchmarks/h200_rerun.sh OPERATION PASSES [more `sitegen rerun` options]
#
# Under $OUT: gpu.txt, OPERATION-PASSES.log and .json, and new-OPERATION-PASSES.tar holding only
# the files the rerun created (paths as in records/), to copy into the registry, then lock and sign.
set -u
op=$1 passes=$2
name=$op-${passes//,/-}${TAG:+-$TAG}  # TAG names one part among several of a pass
shift 2
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --no-build-isolation --target /tmp/site .whl/*.whl . || exit 1
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1
nvidia-smi -L > "$OUT/gpu.txt"
reg=/tmp/reg
[ -d "$reg" ] || cp -r records "$reg"
touch /tmp/before
start=$(date +%s)
python3 -m sitegen.rerun --operation "$op" --pass "$passes" --out "$reg" --json "$@" \
  > "$OUT/$name.json" 2> "$OUT/$name.log"
echo "$op $passes $*: exit $?, $(( $(date +%s) - start )) s"
# One archive: the device tool brings back files only a few folders deep.
(cd "$reg" && find . -type f -newer /tmp/before ! -name digests.lock -print0 \
  | tar --null -T - -cf "$OUT/new-$name.tar")
