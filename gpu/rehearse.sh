#!/usr/bin/env bash
# A rehearsal of gpu/run_systems.sh on this CPU with the GPU machine's library versions,
# so that an API difference is found before GPU time is spent. The device's image runs
# transformers 5.17 (and torch 2.11, whose CPU build is not on PyPI: the rehearsal keeps
# this checkout's torch). transformers 5.17 and its dependencies are installed once into
# a virtual environment of their own, .rehearsal/venv-transformers-5.17.0/, whose site
# folder names this checkout's after its own (a .pth file): its transformers first, then
# torch and the rest as the checkout has them. The command runs with that environment's
# python, from the checkout's root as on the GPU machine; the Qwen2.5-0.5B architecture
# it measures runs with the smoke profile.
#
#   gpu/rehearse.sh OUT     # writes OUT/<experiment>/, as the GPU command would
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: gpu/rehearse.sh OUTPUT_FOLDER" >&2; exit 2; }
DEVICE_TRANSFORMERS="5.17.0"  # the GPU machine's image (see the device notes of the project)
REHEARSAL=".rehearsal/venv-transformers-$DEVICE_TRANSFORMERS"
PYTHON="${PYTHON:-.venv/bin/python}"
site_folder() { "$1" -c 'import sysconfig; print(sysconfig.get_path("purelib"))'; }
if [ ! -f "$REHEARSAL/.installed" ]; then
  rm -rf "$REHEARSAL"
  "$PYTHON" -m venv --without-pip "$REHEARSAL"
  # --no-compile: pip byte-compiles file by file; Python compiles what the run imports
  "$PYTHON" -m pip --python "$REHEARSAL/bin/python" install --quiet --no-compile "transformers==$DEVICE_TRANSFORMERS"
  # written after the install, so that pip installed every dependency of its own
  site_folder "$PYTHON" >"$(site_folder "$REHEARSAL/bin/python")/checkout.pth"
  touch "$REHEARSAL/.installed"
fi
PYTHON="$REHEARSAL/bin/python" DEVICE=cpu PROFILE=smoke MODEL="${MODEL:-arch:qwen2.5-0.5b}" gpu/run_systems.sh "$1"
