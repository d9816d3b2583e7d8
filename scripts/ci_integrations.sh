#!/usr/bin/env bash
# CI step for the RL-library integrations (docs/integrations.md), called by .ci/run.
#
# Ray RLlib pins its own gymnasium, so each library gets its own virtualenv:
#   .venv-rllib    pip install -e ".[rllib]"             tests_integrations/rllib
#   .venv-torchrl  pip install -e ".[torchrl,tianshou]"  tests_integrations/torchrl, tests_integrations/tianshou
# The CPU build of torch==2.13.0 is installed first in each, so pip never pulls a CUDA build.
# The main test suite (tests/, scripts/test.sh) does not collect these tests.
#
# Usage: bash scripts/ci_integrations.sh [rllib|torchrl ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Ray: no usage reporting.
export RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_DOCKER_CPU_WARNING=1
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(rllib torchrl)

pip_install() {  # pip_install VENV ARGS...: quiet, without the "Location ... is ignored" noise; keeps pip's status
    local venv=$1; shift
    "$venv/bin/python" -m pip install --quiet "$@" 2> >(grep -v "^WARNING: Location" >&2)
}

setup() {  # setup VENV EXTRAS
    local venv=$1 extras=$2
    [ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
    pip_install "$venv" --upgrade pip
    pip_install "$venv" "torch==2.13.0"
    pip_install "$venv" -e ".[$extras]" "pytest>=8"
    "$venv/bin/python" -c "import blot_env, torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
}

for s in "${suites[@]}"; do
    case "$s" in
        rllib)
            echo "== integrations: Ray RLlib (.venv-rllib)"
            setup .venv-rllib rllib
            .venv-rllib/bin/python -m pytest tests_integrations/rllib -p no:cacheprovider
            ;;
        torchrl)
            echo "== integrations: TorchRL and Tianshou (.venv-torchrl)"
            setup .venv-torchrl torchrl,tianshou
            .venv-torchrl/bin/python -m pytest tests_integrations/torchrl tests_integrations/tianshou \
                -p no:cacheprovider
            ;;
        *) echo "unknown suite $s (rllib, torchrl)" >&2; exit 2 ;;
    esac
done
