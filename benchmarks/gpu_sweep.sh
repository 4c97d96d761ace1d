#!/usr/bin/env bash
# The H200 evidence in one device call (<= 10 min): GPU tests, the self-test, the default sweep.
#
#   bash benchmarks/gpu_sweep.sh RECORDS_DIR [STEPS]
#
# Run in the repository root on the GPU machine, with the wheels the image lacks in .whl/
# (liger-kernel 0.8.5, rfc8785, pydantic + pydantic-core + annotated-types + typing-inspection;
# carry=[".whl"]). STEPS (default "selftest sweep tests") picks what runs; they run in that
# order, so that a call cut short keeps the records (packed after each dtype). Writes the sweep's
# records into RECORDS_DIR (a fresh folder) and packs them as $OUT/sweep_records.tgz (the files
# under runs/, environments/, protocols/, ... as `sitegen rerun --out` lays them out; unpack
# into records/ and run `sitegen lock records`). Logs and --json summaries go to $OUT:
# gpu_tests.log, selftest.log, selftest.json, sweep_fp32.{log,json}, sweep_bf16.{log,json}.
#
# Expected on one H200 (estimated from the validation calls in benchmarks/results/rerun_h200_h18/,
# not yet run end to end): install ~10 s, self-test ~25 s, sweep ~230-250 s per dtype, tests
# ~90 s: about 9.5-10 minutes. Give the call timeout_s=600; if it is cut, the tests are what
# is lost (run `bash benchmarks/gpu_sweep.sh /tmp/r tests` alone, ~2 min).
set -uo pipefail
dest=${1:?usage: gpu_sweep.sh RECORDS_DIR [STEPS]}
steps=${2:-selftest sweep tests}
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
if [[ " $steps " == *" sweep "* ]]; then
  for dtype in fp32 bf16; do
    stamp "sweep $dtype"
    python3 -m sitegen.rerun --dtype "$dtype" --out "$dest" --records records --json \
      >"$OUT/sweep_$dtype.json" 2>"$OUT/sweep_$dtype.log" || rc=1
    grep -E "wrote|Error|refus" "$OUT/sweep_$dtype.log" | tail -3
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
if [[ " $steps " == *" tests "* ]]; then
  stamp "GPU tests: kernels and rerun"
  python3 -m pytest -q -p no:cacheprovider tests/kernels/test_jsd_gpu.py tests/rerun --ignore=tests/rerun/test_rerun_interpret.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -5
  [[ ${PIPESTATUS[0]} == 0 ]] || rc=1
fi
stamp "done (rc $rc)"
exit $rc
