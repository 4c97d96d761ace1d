#!/usr/bin/env bash
# The H200 evidence: the self-test, GPU tests, the default sweep (one or two device calls).
#
#   bash benchmarks/gpu_sweep.sh RECORDS_DIR [STEPS]   (SWEEP_DTYPES="fp32 bf16" by default)
#
# Run in the repository root on the GPU machine, with the wheels the image lacks in .whl/
# (liger-kernel 0.8.5, rfc8785, pydantic + pydantic-core + annotated-types + typing-inspection;
# carry=[".whl"]). STEPS (default "selftest tests") picks what runs, always in the order
# selftest, errors, tests, sweep, like (SWEEP_TOKENS narrows the sweep's row counts, for
# shorter calls); the records are packed after each dtype, so that a call
# cut short keeps what was measured. "errors": the honest implementations' error against
# float64 (honest_errors_h200.txt), the data behind the bf16/fp16 tolerances. Writes the sweep's
# records into RECORDS_DIR (a fresh folder) and packs them as $OUT/sweep_records.tgz (the files
# under runs/, environments/, protocols/, ... as `sitegen rerun --out` lays them out; unpack
# into records/ and run `sitegen lock records`). Logs and --json summaries go to $OUT:
# gpu_tests.log, selftest.log, selftest.json, sweep_fp32.{log,json}, sweep_bf16.{log,json}.
#
# Measured on one H200 (benchmarks/results/rerun_h200/: selftest.log, gpu_tests.log, sweep_*.log):
# install ~10 s, self-test ~35 s, tests ~180 s, sweep ~380-430 s per dtype. One call runs at most 600 s, so the sweep takes one call
# per dtype: "selftest sweep" with SWEEP_DTYPES=fp32, then "sweep like" with SWEEP_DTYPES=bf16.
set -uo pipefail
dest=${1:?usage: gpu_sweep.sh RECORDS_DIR [STEPS]}
steps=${2:-selftest tests}
OUT=${OUT:-/tmp/gpu-sweep-out}
mkdir -p "$OUT" "$dest"
dest=$(cd "$dest" && pwd)
export PYTHONUNBUFFERED=1
# The checkout's sitegen/ lacks sitegen.kernels (kernels/ maps there only when installed): never
# import from the working directory, in this shell or the measuring processes it spawns.
export PYTHONSAFEPATH=1
site=/tmp/sitegen-site
rm -rf "$site"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl || exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target "$site" . || exit 1
export PYTHONPATH="$site"
start=$SECONDS
stamp() { echo "[gpu_sweep $((SECONDS - start))s] $*" >&2; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader >&2
rc=0
if [[ " $steps " == *" selftest "* ]]; then
  stamp "self-test"
  python3 -m sitegen.rerun --self-test --json >"$OUT/selftest.json" 2>"$OUT/selftest.log" || rc=1
  tail -22 "$OUT/selftest.log"
fi
if [[ " $steps " == *" errors "* ]]; then
  stamp "honest errors"
  python3 benchmarks/honest_errors.py >"$OUT/honest_errors_h200.txt" 2>&1 || rc=1
  tail -2 "$OUT/honest_errors_h200.txt"
fi
if [[ " $steps " == *" tests "* ]]; then
  stamp "GPU tests: kernels and rerun"
  python3 -m pytest -q -p no:cacheprovider tests/kernels/test_jsd_gpu.py tests/rerun --ignore=tests/rerun/test_rerun_interpret.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -5
  [[ ${PIPESTATUS[0]} == 0 ]] || rc=1
fi
if [[ " $steps " == *" sweep "* ]]; then
  for dtype in ${SWEEP_DTYPES:-fp32 bf16}; do
    stamp "sweep $dtype"
    tag=$dtype${SWEEP_TOKENS:+-$SWEEP_TOKENS}
    python3 -m sitegen.rerun --dtype "$dtype" ${SWEEP_TOKENS:+--tokens "$SWEEP_TOKENS"} --out "$dest" --records records --json \
      >"$OUT/sweep_$tag.json" 2>"$OUT/sweep_$tag.log" || rc=1
    grep -E "wrote|Error|refus" "$OUT/sweep_$tag.log" | tail -3
    # Packed after each dtype, so a call cut short still returns what was measured.
    tar -czf "$OUT/sweep_records.tgz" -C "$dest" .
  done
fi
if [[ " $steps " == *" like "* ]]; then
  # The seed record (Liger 0.8.0 on a B200) re-measured under its own do_bench protocol.
  stamp "--like the seed record"
  python3 -m sitegen.rerun --like liger-jsd-forward-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-29 \
    --out "$dest" --records records --json >"$OUT/like_seed.json" 2>"$OUT/like_seed.log" || rc=1
  tail -3 "$OUT/like_seed.log"
  tar -czf "$OUT/sweep_records.tgz" -C "$dest" .
fi
stamp "done (rc $rc)"
exit $rc
