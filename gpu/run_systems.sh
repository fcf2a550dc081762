#!/usr/bin/env bash
# The systems experiments of §1-§4 (kv_cache, cache_size, prefill_decode, batching) on a
# CUDA machine, with the chapter's model architecture (Qwen2.5-0.5B, random weights,
# fp16) and the full sweep sizes. Needs only the machine's own python3 with torch and
# transformers (measure/ imports nothing else but numpy and tqdm, which transformers
# brings); no virtual environment, no download, no mkdocs.
#
#   gpu/run_systems.sh /tmp/gpu_data  # writes /tmp/gpu_data/<experiment>/
#
# and then, on the machine with the repository (the folder brought back):
#
#   make merge FROM=/tmp/gpu_data     # verified, from the same code, swapped in whole
#
# The full profile is sized to finish within 8 minutes on one H200; it has not yet been
# timed on one. The run prints its own estimate first (measure/lab/estimate.py): counted
# forward passes at unit costs measured on the device, plus an allowance per compilation.
# PYTHON, DEVICE, MODEL and PROFILE override the defaults (e.g. DEVICE=cpu PROFILE=smoke
# MODEL=arch:tiny to try the command without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
  echo "usage: gpu/run_systems.sh OUTPUT_FOLDER   (then: make merge FROM=OUTPUT_FOLDER)" >&2
  exit 2
fi
OUT="$1"
PYTHON="${PYTHON:-python3}"
DEVICE="${DEVICE:-cuda}"
MODEL="${MODEL:-arch:qwen2.5-0.5b}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$PYTHON" -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available(), flush=True)'
"$PYTHON" -m measure run --model "$MODEL" --device "$DEVICE" \
    --only kv_cache,cache_size,prefill_decode,batching --out "$OUT" --force \
    ${PROFILE:+--profile "$PROFILE"}
echo "written to $OUT; bring it into site_data with: make merge FROM=$OUT"
