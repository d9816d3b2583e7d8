#!/usr/bin/env bash
# The package as users install it (docs/reliability.md, "The wheel test"): build the wheel and
# the sdist from the checkout's files, check that every data file of the repository is in them,
# install the wheel into a fresh virtualenv (torch==2.13.0 first, the CPU build, then the wheel
# with its train and play extras; no --system-site-packages), and from a temporary folder
# outside the checkout run
#   * the README's environment snippet (its first python block, extracted here);
#   * blot-eval with the shipped ppo policy of each of the six presets (2 boards each);
#   * blot-replay on a record the installed env writes, a golden record and the frozen records;
#   * blot-play, scripted through its standard input, for one deal, and blot-replay on its record.
# Exits non-zero at the first failure. About 2-3 minutes with pip's cache warm.
#
# Usage: bash scripts/wheel_test.sh            (PYTHON=python3.12 bash scripts/wheel_test.sh for another Python)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORK=$(mktemp -d -t blot-wheel-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
t0=$SECONDS
step() { echo "== wheel test [$((SECONDS - t0)) s]: $*"; }

pip_q() {  # pip_q PYTHON ARGS...: quiet pip that keeps its status
    local py=$1; shift
    "$py" -m pip install --quiet "$@" 2> >(grep -v "^WARNING: Location" >&2)
}

# ---------------------------------------------------------------- build (from a copy of the checkout's files)
step "building the wheel and the sdist"
mkdir -p "$WORK/src" "$WORK/dist"
# the files a clone of this checkout would hold (tracked or new, not ignored; not the deleted ones)
git ls-files --cached --others --exclude-standard -z \
    | "$PY" -c "import os, sys; sys.stdout.write(''.join(p + '\0' for p in sys.stdin.read().split('\0') if os.path.isfile(p)))" \
    | tar --null -T - -cf - | tar -xf - -C "$WORK/src"
if "$PY" -m build --version >/dev/null 2>&1; then
    "$PY" -m build --wheel --sdist --outdir "$WORK/dist" "$WORK/src" >"$WORK/build.log" 2>&1 \
        || { cat "$WORK/build.log"; exit 1; }
else
    # no `build` module here: one in a throwaway virtualenv (pip may use the package registries)
    "$PY" -m venv "$WORK/buildenv"
    if pip_q "$WORK/buildenv/bin/python" build; then
        "$WORK/buildenv/bin/python" -m build --wheel --sdist --outdir "$WORK/dist" "$WORK/src" \
            >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
    else
        echo "wheel test: the build module cannot be installed; building the wheel only (pip wheel --no-deps)" >&2
        "$PY" -m pip wheel --quiet --no-deps -w "$WORK/dist" "$WORK/src"
    fi
fi
WHEEL=$(ls "$WORK"/dist/blot_env-*.whl)
SDIST=$(ls "$WORK"/dist/blot_env-*.tar.gz 2>/dev/null || true)

# ---------------------------------------------------------------- the data files are in the wheel (and the sdist)
step "checking the files of $(basename "$WHEEL")${SDIST:+ and $(basename "$SDIST")}"
"$PY" - "$WHEEL" "$SDIST" <<'EOF'
import os, subprocess, sys, tarfile, zipfile
wheel, sdist = sys.argv[1], sys.argv[2]
tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "blot_env", "agents"],
                         capture_output=True, text=True, check=True).stdout.split()
# every module, and every data file: the suites, the shipped policies, the viewer's static files
want = sorted(p for p in tracked if "__pycache__" not in p and os.path.isfile(p))
data = [p for p in want if not p.endswith(".py")]
assert any(p.startswith("agents/data/suites/") for p in data) and any(p.endswith(".pt") for p in data), data
assert any(p.startswith("agents/view/static/") for p in data), data
in_wheel = set(zipfile.ZipFile(wheel).namelist())
missing = [p for p in want if p not in in_wheel]
if missing:
    sys.exit(f"wheel test: {len(missing)} file(s) of the repository missing from the wheel: {missing}")
if sdist:
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    missing = [p for p in want if p not in names]
    if missing:
        sys.exit(f"wheel test: {len(missing)} file(s) of the repository missing from the sdist: {missing}")
print(f"wheel test: {len(want)} files ({len(data)} data files) in the wheel" + (" and the sdist" if sdist else ""))
EOF

# ---------------------------------------------------------------- a clean virtualenv
step "installing torch==2.13.0 and the wheel into a fresh virtualenv"
"$PY" -m venv "$WORK/venv"
VPY=$WORK/venv/bin/python
BIN=$WORK/venv/bin
pip_q "$VPY" --upgrade pip
pip_q "$VPY" "torch==2.13.0"
pip_q "$VPY" "$WHEEL[train,play]"

# ---------------------------------------------------------------- run it from outside the checkout
RUN=$WORK/run
mkdir -p "$RUN"
cd "$RUN"
"$VPY" - "$WORK/venv" <<'EOF'
import sys
import agents, blot_env
for m in (agents, blot_env):
    assert m.__file__.startswith(sys.argv[1]), f"{m.__name__} imported from {m.__file__}, not the virtualenv"
EOF

step "the README's environment snippet"
"$VPY" - "$REPO/README.md" > readme_snippet.py <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
print(re.search(r"^```python\n(.*?)^```", text, flags=re.M | re.S).group(1))
EOF
out=$("$VPY" readme_snippet.py)
echo "$out" | tail -1
echo "$out" | tail -1 | grep -q "'score'" || { echo "wheel test: the README snippet printed no deal result" >&2; exit 1; }

step "blot-eval with the shipped ppo policy of every preset"
for preset in bazar bazar-app duel duel-app open belote; do
    "$BIN/blot-eval" --agent ppo --vs random --preset "$preset" --boards 2 --split dev --no-progress --json \
        > "eval_$preset.json"
    "$VPY" - "eval_$preset.json" "$preset" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1], encoding="utf-8"))
[row] = rep["rows"]
assert rep["preset"] == sys.argv[2] and (row["agent"], row["opponent"], row["boards"]) == ("ppo", "random", 2), row
print(f"  {sys.argv[2]}: ppo vs random, 2 boards, mean board score {row['mean_board_score']:+.1f}")
EOF
done

step "blot-replay on a record of the installed env, a golden record and the frozen records"
"$VPY" - <<'EOF'
import json
import numpy as np
import blot_env
env = blot_env.env(preset="duel")
env.reset(seed=3)
rng = np.random.default_rng(3)
for agent in env.agent_iter():
    obs, _, term, trunc, _ = env.last()
    env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
json.dump(env.unwrapped.record(), open("env_record.json", "w", encoding="utf-8"))
EOF
cp "$REPO"/tests/golden/a22_9H_made_terz_vs_blot.json "$REPO"/tests/records_frozen/*.jsonl .
"$BIN/blot-replay" -q env_record.json a22_9H_made_terz_vs_blot.json ./*.jsonl
"$BIN/blot-replay" -q --engine reference env_record.json a22_9H_made_terz_vs_blot.json

step "blot-play, scripted: one deal of duel-app against rules"
"$VPY" -c "print('1\n' * 300, end='')" > moves.txt
"$BIN/blot-play" --preset duel-app --agents rules --seed 5 --save played.json --no-color < moves.txt > play.log 2>&1 \
    || { tail -20 play.log; exit 1; }
grep -q "record saved to" play.log || { tail -20 play.log; echo "wheel test: blot-play saved no record" >&2; exit 1; }
"$BIN/blot-replay" played.json

step "passed in $((SECONDS - t0)) s"
