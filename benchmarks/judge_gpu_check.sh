#!/usr/bin/env bash
# Issue 43 item 2's GPU check: the gate judged in a process of its own, its tensors crossing by
# host shared memory (sitegen/rerun/checks/handover.py) from and to CUDA, which no CPU host could exercise when it landed.
#
#   bash benchmarks/judge_gpu_check.sh          on the GPU machine, repository root, sitegen installed
#
# Writes to $OUT (default /tmp/judge-gpu-check):
#   selftest.log      `python -m sitegen rerun --self-test`: must end "self-test passed", every
#                     planted cheat rejected, the GPU-only ones (side-stream, sampled-loss,
#                     side-stream-5pct) included, the honest kernels accepted.
#   cost.txt          benchmarks/judge_cost.py on the GPU: the same honest kernel's worst relative
#                     error judged in this process and through the judge (copied through the host) must be of one
#                     size and "passed" (a handover that lost or shifted elements would be far off);
#                     the judged/in-process time ratio and the judge's start time are the cost.
#   rerun.json/.log   a short rerun (JSD fp32, full pass, tokens 1024 x vocab 128256, sitegen and
#                     torch, one process each): every run "passed"; each run's correctness holds
#                     4 cases with seeds (the judge's verdicts); its exclusive_gpu check passed
#                     (the judge's CUDA context is gone before the first timed call: process
#                     counts 0, 1, 1); the log says no "judge:" refusal.
#   big.json/.log     the gate at a large JSD fp32 shape (tokens 8192 x vocab
#                     131072, forward): the judge's copy of the gradient (4 GiB) beside the worker's
#                     must fit; a "CUDA out of memory" here means the judge must compare in place.
# Exit status 0 only when all four hold.
set -uo pipefail
OUT=${OUT:-/tmp/judge-gpu-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
rc=0
nvidia-smi --query-gpu=name,memory.total,compute_mode --format=csv,noheader | tee "$OUT/gpu.txt"

python -m sitegen rerun --self-test >"$OUT/selftest.log" 2>&1 || rc=1
tail -1 "$OUT/selftest.log"
grep -q "^self-test passed" "$OUT/selftest.log" || rc=1

python benchmarks/judge_cost.py --device cuda --tokens 4096 --vocab 128256 --repeats 3 >"$OUT/cost.txt" 2>&1 || rc=1
cat "$OUT/cost.txt"
grep -q "(failed)" "$OUT/cost.txt" && rc=1

check_runs() {  # $1: the --json summary; every run passed, 4 judged cases, exclusive_gpu passed
  python - "$1" <<'EOF' || return 1
import json, sys
summary = json.load(open(sys.argv[1]))
bad = []
for row in summary["runs"]:
    run = json.load(open(f"{summary['out']}/{row['file']}"))
    spec = run["spec"]
    cases = spec["correctness"].get("cases", [])
    excl = [c for c in spec.get("evidence", {}).get("integrity", []) if c["name"] == "exclusive_gpu"]
    if row["status"] != "passed" or len(cases) != 4 or not all("seed" in c for c in cases) \
            or not all(c["passed"] for c in excl):
        bad.append((row["impl"], row["status"], spec.get("statusReason"), len(cases), excl))
print("runs:", [(r["impl"], r["status"], r["medianNs"]) for r in summary["runs"]])
if bad:
    print("NOT AS EXPECTED:", bad)
    sys.exit(1)
EOF
}

python -m sitegen rerun --operation jsd --tokens 1024 --vocab 128256 --dtype fp32 --pass full --impl sitegen,torch \
  --processes 1 --json --out "$OUT/rerun-records" >"$OUT/rerun.json" 2>"$OUT/rerun.log" || rc=1
check_runs "$OUT/rerun.json" || rc=1
grep -n "judge:" "$OUT/rerun.log" && rc=1

python -m sitegen rerun --operation jsd --tokens 8192 --vocab 131072 --dtype fp32 --pass forward --impl sitegen \
  --processes 1 --json --out "$OUT/big-records" >"$OUT/big.json" 2>"$OUT/big.log" || rc=1
check_runs "$OUT/big.json" || rc=1
grep -n "out of memory" "$OUT/big.log" && rc=1

echo "judge_gpu_check: $([[ $rc == 0 ]] && echo passed || echo FAILED)"
exit $rc
