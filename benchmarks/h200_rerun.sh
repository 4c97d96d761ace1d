#!/usr/bin/env bash
# A rerun on the H200 through the device tool (no network there: the wheels travel in .whl/,
# see docs/rerun.md), writing into a copy of records/. Call it once per part of a sweep in one
# device command, so a command cut off by its time limit still brings back the parts it finished.
#
#   benchmarks/h200_rerun.sh OPERATION PASSES [more `sitegen rerun` options]
#
# Under $OUT, one file per part, OPERATION-PASSES[-TAG].tar: the part's .log and .json, gpu.txt,
# and under records/ only the files the rerun created (paths as in records/), to copy into the
# registry, then lock and sign. One file per part because the device tool brings back at most 8.
set -u
op=$1 passes=$2
name=$op-${passes//,/-}${TAG:+-$TAG}  # TAG names one part among several of a pass
shift 2
[ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --no-build-isolation --target /tmp/site .whl/*.whl . || exit 1
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1
work=/tmp/part-$name
mkdir -p "$work" && nvidia-smi -L > "$work/gpu.txt"
reg=/tmp/reg
[ -d "$reg" ] || cp -r records "$reg"
touch /tmp/before
start=$(date +%s)
python3 -m sitegen.rerun --operation "$op" --pass "$passes" --out "$reg" --json "$@" \
  > "$work/$name.json" 2> "$work/$name.log"
echo "$op $passes $*: exit $?, $(( $(date +%s) - start )) s"
# One archive: the device tool brings back few files, and only a few folders deep.
(cd "$reg" && find . -type f -newer /tmp/before ! -name digests.lock -print0 \
  | tar --null -T - --transform 's,^\./,records/,' -cf "$work/records.tar")
tar -C "$work" -cf "$OUT/$name.tar" .
