#!/usr/bin/env bash
# Issue 43's GPU check: does measuring each implementation in processes of its own (and the
# guards' kept references) slow honest code? Both commits are installed side by side and rerun
# on the same GPU in one call: JSD fp32, full pass, tokens 8192 x vocab 128256 (one cohort),
# sitegen, torch and torch.compile; then the self-test of the AFTER commit.
#
#   bash benchmarks/isolation_ab.sh BEFORE AFTER            on the GPU machine, repository root
#   bash benchmarks/isolation_ab.sh --pack BEFORE AFTER     here, where git is, if the GPU copy has no .git
#
# --pack writes .whl/ab/BEFORE.tar and .whl/ab/AFTER.tar (sitegen, kernels, templates, pyproject.toml,
# README.md at each commit; .whl/ is ignored and travels with carry=[".whl"]); without it, git
# archive. The wheels the image lacks come from .whl/ as in benchmarks/gpu_queue.sh. ROUNDS=2
# measures before, after, after, before (drift of the GPU then falls on both alike).
# Writes to $OUT: selftest.{json,log}, {before,after}-N.{json,log} and ab.txt: each
# implementation's median per run, after/before, and the committed median of this GPU where
# records/ holds one. Passes when every after/before is within 5% and the self-test passed.
set -uo pipefail
if [[ ${1:-} == --pack ]]; then
  mkdir -p .whl/ab
  for c in "$2" "$3"; do
    git archive --format=tar -o ".whl/ab/$c.tar" "$c" sitegen kernels templates pyproject.toml README.md || exit 1
  done
  exit 0
fi
before=${1:?usage: isolation_ab.sh BEFORE AFTER} after=${2:?usage: isolation_ab.sh BEFORE AFTER}
OUT=${OUT:-/tmp/isolation-ab-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONSAFEPATH=1
CASE=(--operation jsd --tokens 8192 --vocab 128256 --dtype fp32 --pass full --impl sitegen,torch,torch-compile)
# Only the wheels a rerun needs (as benchmarks/gpu_queue.sh: a cuda-bindings wheel in .whl/ would
# shadow the image's own).
wheels=()
for name in liger_kernel pydantic pydantic_core annotated_types typing_extensions typing_inspection rfc8785 \
    cryptography cffi pycparser; do
  for w in .whl/"$name"-[0-9]*.whl; do [ -e "$w" ] && wheels+=("$w"); done
done
install() {  # $1 commit, $2 tag: /tmp/ab-$2/site holds that commit's sitegen and the wheels
  local root=/tmp/ab-$2
  rm -rf "$root" && mkdir -p "$root/src"
  if [[ -f ".whl/ab/$1.tar" ]]; then tar -xf ".whl/ab/$1.tar" -C "$root/src"
  else git archive --format=tar "$1" sitegen kernels templates pyproject.toml README.md | tar -x -C "$root/src" || return 1
  fi
  if ((${#wheels[@]})); then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$root/site" "${wheels[@]}" || return 1
  fi
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target "$root/site" "$root/src" || return 1
}
install "$before" before || { echo "install of $before failed"; exit 1; }
install "$after" after || { echo "install of $after failed"; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$OUT/gpu.txt"
rerun() {  # $1 tag, $2 round
  local start=$SECONDS
  PYTHONPATH=/tmp/ab-$1/site python3 -m sitegen.rerun "${CASE[@]}" --out "/tmp/ab-$1/records-$2" --json \
    >"$OUT/$1-$2.json" 2>"$OUT/$1-$2.log"
  echo "$1 round $2: exit $?, $((SECONDS - start)) s"
}
order="before after"
[[ ${ROUNDS:-1} == 2 ]] && order="before after after before"
declare -A seen=()
for tag in $order; do
  seen[$tag]=$(( ${seen[$tag]:-0} + 1 ))
  rerun "$tag" "${seen[$tag]}"
done
selftest=0
if [[ ${SELFTEST:-1} == 1 ]]; then  # SELFTEST=0 leaves it to a call of its own (one call runs 600 s at most)
  start=$SECONDS
  PYTHONPATH=/tmp/ab-after/site python3 -m sitegen.rerun --self-test --json >"$OUT/selftest.json" 2>"$OUT/selftest.log"
  selftest=$?
  echo "self-test ($after): exit $selftest, $((SECONDS - start)) s"
  tail -30 "$OUT/selftest.log"
fi
PYTHONPATH=/tmp/ab-after/site python3 - "$OUT" records <<'EOF' | tee "$OUT/ab.txt"
import glob, json, os, statistics, sys
from sitegen.core import identity
out, records = sys.argv[1], sys.argv[2]
medians = {}  # (tag, impl) -> [median ns of each run]
product = None
for path in sorted(glob.glob(os.path.join(out, "*-*.json"))):
    tag = os.path.basename(path).split("-")[0]
    if tag not in ("before", "after"):
        continue
    try:
        summary = json.load(open(path))
    except ValueError:
        print(f"{path}: no summary (see its .log)"); continue
    product = summary.get("product", product)
    for row in summary.get("runs", []):
        if row.get("medianNs") and row["status"] == "passed":
            medians.setdefault((tag, row["impl"]), []).append(row["medianNs"])
committed = {}
if product:
    slug = identity.name_slug(product)
    for path in glob.glob(os.path.join(records, "runs", "jsd", "rerun-jsd-full-*.json")):
        name = os.path.basename(path)
        if f"-{slug}-tokens8192-vocab128256-fp32-" not in name:
            continue
        run = json.load(open(path))
        median = run["spec"].get("timing", {}).get("latencyNs", {}).get("median")
        impl = run["metadata"]["title"].split(" · ")[1]
        if median and run["spec"]["status"] == "passed":
            committed.setdefault(impl, []).append(median)
ok = True
print(f"JSD fp32 full, tokens 8192 x vocab 128256 on {product}: median ms (each run), after/before, committed")
for impl in ("sitegen", "torch", "torch-compile"):
    b, a = medians.get(("before", impl), []), medians.get(("after", impl), [])
    ratio = statistics.median(a) / statistics.median(b) if a and b else None
    ok = ok and ratio is not None and abs(ratio - 1) <= 0.05
    c = committed.get(impl)
    print(f"  {impl:14s} before {[round(x / 1e6, 4) for x in b]}  after {[round(x / 1e6, 4) for x in a]}  "
          f"after/before {ratio and round(ratio, 4)}  committed {c and round(statistics.median(c) / 1e6, 4)}"
          + (f" (after/committed {round(statistics.median(a) / statistics.median(c), 4)})" if a and c else ""))
print("within 5%" if ok else "NOT within 5% (or a run missing)")
sys.exit(0 if ok else 1)
EOF
ab=${PIPESTATUS[0]}
[[ $selftest == 0 && $ab == 0 ]]
