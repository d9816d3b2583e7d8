#!/usr/bin/env bash
# Install the project into ./.venv, train a PPO agent briefly on Bazar Blot, evaluate it
# against the baselines on duplicate boards and print the table (the README's main job).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[train]"
.venv/bin/python scripts/main_job.py "$@"
