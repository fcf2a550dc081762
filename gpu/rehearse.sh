#!/usr/bin/env bash
# A rehearsal of gpu/run_systems.sh on this CPU with the GPU machine's library versions,
# so that an API difference is found before GPU time is spent. The device's image runs
# transformers 5.17 (and torch 2.11, whose CPU build is not on PyPI: the rehearsal keeps
# this checkout's torch). transformers 5.17 and its dependencies are installed once into
# .rehearsal/ and put first on the path; the Qwen2.5-0.5B architecture the GPU command
# measures runs with the smoke profile.
#
#   gpu/rehearse.sh OUT     # writes OUT/<experiment>/, as the GPU command would
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: gpu/rehearse.sh OUTPUT_FOLDER" >&2; exit 2; }
DEVICE_TRANSFORMERS="5.17.0"  # the GPU machine's image (see the device notes of the project)
TARGET=".rehearsal/transformers-$DEVICE_TRANSFORMERS"
PYTHON="${PYTHON:-.venv/bin/python}"
if [ ! -f "$TARGET/.installed" ]; then
  # --no-compile: pip byte-compiles file by file; Python compiles what the run imports
  "$PYTHON" -m pip install --quiet --no-compile --target "$TARGET" "transformers==$DEVICE_TRANSFORMERS"
  touch "$TARGET/.installed"
fi
PYTHONPATH="$PWD/$TARGET" PYTHON="$PYTHON" DEVICE=cpu PROFILE=smoke MODEL="${MODEL:-arch:qwen2.5-0.5b}" \
  gpu/run_systems.sh "$1"
