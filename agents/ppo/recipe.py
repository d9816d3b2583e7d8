"""Recipes: every stage that made a shipped policy, run in order by one resumable command.

``blot-train --recipe bazar --out runs/bazar`` reads ``configs/recipes/bazar.yaml`` and runs its
stages from nothing, each in ``OUT/<stage>/``, then writes the final policy as
``OUT/ppo_<preset>.pt`` and its model card ``OUT/ppo_<preset>.json`` (:func:`run_recipe`).

**The recipe file** (YAML): ``recipe`` (its name), ``preset`` (of the final policy), ``stages``
(a list, run in order) and ``card`` (the evaluation rows of the model card). A stage has a
``name`` (its folder; letters, digits, ``_``, ``-``) and exactly one of these kinds:

* ``train: CONFIG`` - a training run (:func:`agents.ppo.build.build_trainer`) from a config file
  (relative to the recipe file) with ``set: {dotted.key: value}`` overrides; ``max_updates: N``
  stops it after update N as a stop by hand did (the learning rate still anneals over the
  config's ``total_steps``). Its network is ``{name}/policy.pt``.
* ``resume: STAGE`` - a copy of an earlier training stage's folder resumed (its checkpoint, with
  ``set`` applied, ``total_steps`` say): ``cp -r`` and ``blot-train --resume --total-steps``.
* ``clone_data: {agent, deals, seed: 0, chunk_deals: 100, obs_kind: observation}`` - the
  decisions of ``agent`` in every seat (``scripts/clone_data.py``): ``{name}/data.pkl``.
* ``transfer: {policy, preset, obs_kind, new_features}`` - a policy moved onto another preset
  (``scripts/transfer_policy.py``): ``{name}/policy.pt``.
* ``select: {run: STAGE, last: 4, updates: [], final: true, also: [], vs: rules-medium, boards: 300,
  mixed: false}`` - the best of a training stage's kept policies (the last ``last``, those of
  ``updates``, and its ``policy.pt`` when ``final``) and the ``also`` files, on dev boards against
  ``vs`` (``scripts/select_policy.py``): ``{name}/policy.pt`` and ``{name}/selection.json``.
* ``recipe: {name: RECIPE, until: STAGE}`` - another recipe's stages up to ``until`` in
  ``OUT/<name>`` (or the folder ``--use name=DIR`` gives, such as a finished run of that recipe);
  ``{name}`` is then that run's ``until`` folder.

In any string value, ``{stage}`` is the folder of the earlier stage ``stage``; a reference to an
unknown or later stage is refused when the recipe loads. ``tiny: {...}`` replaces stage keys at
``--tiny`` scale (``max_updates``, say). ``card``: ``boards`` of the preset's ``test`` suite (seed
0) against each of ``opponents``, the same in the mixed-partnership mode against each of
``mixed``, against each of ``search`` (expensive; ``search=False`` skips them), and the small
``check`` row ``{opponent, boards, seed}`` that a test replays exactly.

**Resuming.** ``<out>/recipe_state.json`` (written atomically) records each stage's status
(``running``, ``done``) and figures. A rerun skips the finished stages, resumes a stopped
training stage from its checkpoint exactly (the trainer's ``--resume``), continues a cloning
file from its finished chunks, and redoes a stopped selection or transfer; finished card rows
are kept. A state written by another recipe file, another ``--tiny`` setting or another
version of the recipe file is refused (use another ``--out``).

**--tiny** runs the same chain at toy scale, as CI does: every training stage gets
:data:`TINY_OVERRIDES` (a network of width 32, 8 envs and deals per update, 16 cloning deals, no
periodic evaluation, no collection worker) and ``total_steps`` times :data:`TINY_STEPS_PER_STEP`
(at least :data:`TINY_MIN_STEPS`); a cloning-data build plays :data:`TINY_CLONE_DEALS` deals; a
selection plays :data:`TINY_SELECT_BOARDS` boards and ignores ``updates`` (the tiny runs number
their updates otherwise); the card plays :data:`TINY_CARD_BOARDS` boards, no search rows.

This module is a command-line edge like agents/ppo/build.py: it builds agents by name with
:func:`agents.registry.make_agent` and hands the factory to the evaluation.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from blot_env.errors import ConfigError

from ..files import write_json_atomic
from .agent import CARD_FORMAT

REPO = Path(__file__).resolve().parents[2]
RECIPES_DIR = REPO / "configs" / "recipes"
"""Where ``--recipe NAME`` looks for ``NAME.yaml`` (a path works too)."""
STATE_NAME = "recipe_state.json"
STATE_FORMAT = "blot-recipe-state/1"
KINDS = ("train", "resume", "clone_data", "transfer", "select", "recipe")
"""The stage kinds (module docstring)."""
POLICY_KINDS = ("train", "resume", "transfer", "select", "recipe")
"""Kinds whose stage folder holds a network as ``policy.pt``."""

TINY_OVERRIDES = ("network.hidden=[32]", "network.critic_hidden=[16]", "rollout.num_envs=8",
                  "rollout.deals_per_rollout=8", "rollout.overlap=false", "eval.every=0", "tensorboard=false",
                  "checkpoint_every=1", "keep_checkpoints=true", "pretrain.deals=16", "pretrain.chunk_deals=8",
                  "torch_threads=1")
"""Overrides of every training stage at ``--tiny`` scale."""
TINY_STEPS_PER_STEP = 1e-5
"""``--tiny``: a training stage's ``total_steps`` is scaled by this (40M learner steps become 400)."""
TINY_MIN_STEPS = 100
TINY_CLONE_DEALS = 16
TINY_CLONE_CHUNK = 4
TINY_SELECT_BOARDS = 2
TINY_CARD_BOARDS = 4

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_REF = re.compile(r"\{([A-Za-z0-9][A-Za-z0-9_-]*)\}")
_TOP_KEYS = {"recipe", "preset", "stages", "card", "description"}
_STAGE_KEYS = {"name", "set", "max_updates", "tiny", "note"} | set(KINDS)
_SPEC_KEYS = {
    "clone_data": {"agent": None, "deals": None, "seed": 0, "chunk_deals": 100, "obs_kind": "observation"},
    "transfer": {"policy": None, "preset": None, "obs_kind": None, "new_features": "fresh"},
    "select": {"run": None, "last": 4, "updates": [], "final": True, "also": [], "vs": "rules-medium",
               "boards": 300, "mixed": False},
    "recipe": {"name": None, "until": None},
}
_CARD_KEYS = {"boards": None, "opponents": [], "mixed": [], "search": [], "check": None}


class RecipeError(ConfigError):
    """A recipe file that is not valid, or a run folder that does not fit the recipe."""


@dataclass(frozen=True)
class Stage:
    """One stage of a recipe: ``kind`` (of :data:`KINDS`) and its ``spec`` (the kind's value,
    a config path for ``train``, a stage name for ``resume``, a mapping for the others)."""

    name: str
    kind: str
    spec: Any
    set: dict[str, Any] = field(default_factory=dict)
    max_updates: int | None = None
    tiny: dict[str, Any] = field(default_factory=dict)

    def at_scale(self, tiny: bool) -> Stage:
        """The stage with its ``tiny`` keys applied when ``tiny``."""
        if not tiny or not self.tiny:
            return self
        t = dict(self.tiny)
        spec = {**self.spec, **t.pop("spec", {})} if isinstance(self.spec, dict) else self.spec
        return Stage(self.name, self.kind, spec, {**self.set, **t.pop("set", {})},
                     t.pop("max_updates", self.max_updates), {})


@dataclass(frozen=True)
class Recipe:
    """A loaded, checked recipe file (:func:`load_recipe`)."""

    name: str
    preset: str
    path: Path
    digest: str
    """SHA-256 of the file's bytes."""
    stages: tuple[Stage, ...]
    card: dict[str, Any]

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise RecipeError(f"{self.path}: no stage {name!r}; stages: {', '.join(s.name for s in self.stages)}")

    @property
    def policy_name(self) -> str:
        """The file name of the final policy: ``ppo_<preset>.pt``."""
        return f"ppo_{self.preset}.pt"


# --------------------------------------------------------------------------- loading


def recipe_path(name_or_path: str | Path) -> Path:
    """The file of a recipe name (``configs/recipes/<name>.yaml``) or a path to one.

    Raises:
        RecipeError: no such recipe (the message lists the known names).
    """
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise RecipeError(f"no recipe file {p}")
        return p
    q = RECIPES_DIR / f"{name_or_path}.yaml"
    if not q.is_file():
        known = sorted(r.stem for r in RECIPES_DIR.glob("*.yaml"))
        raise RecipeError(f"unknown recipe {str(name_or_path)!r}; known: {', '.join(known) or 'none'} "
                          f"({RECIPES_DIR}), or give a recipe file's path")
    return q


def load_recipe(name_or_path: str | Path, _chain: tuple[Path, ...] = ()) -> Recipe:
    """Read and check a recipe: its keys, each stage's kind and keys, that every ``{stage}``
    reference names an earlier stage, that config files and nested recipes exist and load.

    Raises:
        RecipeError: the first problem found, naming the file, the stage and the key.
    """
    from blot_env.rules_config import PRESETS

    path = recipe_path(name_or_path)
    if path.resolve() in _chain:
        raise RecipeError(f"{path}: recipes that run each other in a cycle: "
                          + " -> ".join(str(p) for p in (*_chain, path.resolve())))
    raw = path.read_bytes()
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise RecipeError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a YAML mapping with the keys {', '.join(sorted(_TOP_KEYS))}")
    unknown = sorted(set(data) - _TOP_KEYS, key=str)
    if unknown:
        raise RecipeError(f"{path}: unknown key(s) {unknown}; known: {', '.join(sorted(_TOP_KEYS))}")
    name, preset = data.get("recipe"), data.get("preset")
    if not isinstance(name, str) or not _NAME.match(name):
        raise RecipeError(f"{path}: recipe must be a name (letters, digits, _ and -), got {name!r}")
    if preset not in PRESETS:
        raise RecipeError(f"{path}: preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    stages_raw = data.get("stages")
    if not isinstance(stages_raw, list) or not stages_raw:
        raise RecipeError(f"{path}: stages must be a non-empty list of stages")
    stages: list[Stage] = []
    kinds: dict[str, str] = {}
    for i, s in enumerate(stages_raw):
        stage = _parse_stage(path, i, s, kinds, preset, (*_chain, path.resolve()))
        kinds[stage.name] = stage.kind
        stages.append(stage)
    if stages[-1].kind not in POLICY_KINDS:
        raise RecipeError(f"{path}: the last stage ({stages[-1].name}) must leave a policy "
                          f"({', '.join(POLICY_KINDS)}), not {stages[-1].kind}")
    card = _parse_card(path, data.get("card"))
    return Recipe(name, preset, path, hashlib.sha256(raw).hexdigest(), tuple(stages), card)


def _parse_stage(path: Path, i: int, s: Any, earlier: dict[str, str], preset: str,
                 chain: tuple[Path, ...]) -> Stage:
    where = f"{path}: stage {i + 1}"
    if not isinstance(s, dict):
        raise RecipeError(f"{where}: expected a mapping with a name and one of {', '.join(KINDS)}, got {s!r}")
    name = s.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise RecipeError(f"{where}: name must be a folder name (letters, digits, _ and -), got {name!r}")
    where = f"{path}: stage {name!r}"
    if name in earlier:
        raise RecipeError(f"{where}: two stages share this name")
    unknown = sorted(set(s) - _STAGE_KEYS, key=str)
    if unknown:
        raise RecipeError(f"{where}: unknown key(s) {unknown}; known: {', '.join(sorted(_STAGE_KEYS))}")
    kind = [k for k in KINDS if k in s]
    if len(kind) != 1:
        raise RecipeError(f"{where}: needs exactly one of {', '.join(KINDS)}, got {kind or 'none'}")
    kind = kind[0]
    spec = s[kind]
    sets = s.get("set", {}) or {}
    if not isinstance(sets, dict) or not all(isinstance(k, str) for k in sets):
        raise RecipeError(f"{where}: set must be a mapping of dotted config keys to values, got {sets!r}")
    if sets and kind not in ("train", "resume"):
        raise RecipeError(f"{where}: set applies to train and resume stages only")
    max_updates = s.get("max_updates")
    if max_updates is not None and (kind not in ("train", "resume") or isinstance(max_updates, bool)
                                    or not isinstance(max_updates, int) or max_updates < 1):
        raise RecipeError(f"{where}: max_updates must be a positive integer on a train or resume stage, "
                          f"got {max_updates!r}")
    tiny = s.get("tiny", {}) or {}
    if not isinstance(tiny, dict) or set(tiny) - {"max_updates", "set", "spec"}:
        raise RecipeError(f"{where}: tiny may hold max_updates, set and spec, got {tiny!r}")
    if kind == "train":
        if not isinstance(spec, str):
            raise RecipeError(f"{where}: train must name a config file (relative to {path.parent}), got {spec!r}")
        cfg_path = path.parent / spec
        if not cfg_path.is_file():
            raise RecipeError(f"{where}: no config file {cfg_path}")
        from .config import load_config

        try:
            load_config(cfg_path)
        except ConfigError as e:
            raise RecipeError(f"{where}: {e}") from None
    elif kind == "resume":
        if earlier.get(spec) not in ("train", "resume"):
            raise RecipeError(f"{where}: resume must name an earlier train or resume stage, got {spec!r}")
    else:
        spec = _parse_spec(where, kind, spec)
        if kind == "select" and earlier.get(spec["run"]) not in ("train", "resume"):
            raise RecipeError(f"{where}: select.run must name an earlier train or resume stage, got {spec['run']!r}")
        if kind == "recipe":
            sub = load_recipe(spec["name"], chain)
            if spec["until"] is not None:
                sub.stage(spec["until"])
                if sub.stage(spec["until"]).kind not in POLICY_KINDS:
                    raise RecipeError(f"{where}: recipe.until must be a stage that leaves a policy")
    refs = [*_refs(spec), *_refs(sets)]
    for ref in refs:
        if ref not in earlier:
            raise RecipeError(f"{where}: {{{ref}}} names no earlier stage (earlier: {', '.join(earlier) or 'none'})")
    return Stage(name, kind, spec, dict(sets), max_updates, dict(tiny))


def _parse_spec(where: str, kind: str, spec: Any) -> dict[str, Any]:
    keys = _SPEC_KEYS[kind]
    if not isinstance(spec, dict):
        raise RecipeError(f"{where}: {kind} must be a mapping with the keys {', '.join(keys)}, got {spec!r}")
    unknown = sorted(set(spec) - set(keys), key=str)
    if unknown:
        raise RecipeError(f"{where}: {kind}: unknown key(s) {unknown}; known: {', '.join(keys)}")
    out = {**keys, **spec}
    missing = [k for k, v in out.items() if v is None and keys[k] is None and k not in ("obs_kind", "until")]
    if missing:
        raise RecipeError(f"{where}: {kind} needs {', '.join(missing)}")
    for key in ("deals", "chunk_deals", "boards"):
        v = out.get(key)
        if key in out and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise RecipeError(f"{where}: {kind}.{key} must be a positive integer, got {v!r}")
    for key in ("updates", "also"):
        if key in out and not isinstance(out[key], list):
            raise RecipeError(f"{where}: {kind}.{key} must be a list, got {out[key]!r}")
    if kind == "select" and (isinstance(out["last"], bool) or not isinstance(out["last"], int) or out["last"] < 0):
        raise RecipeError(f"{where}: select.last must be an integer >= 0, got {out['last']!r}")
    return out


def _parse_card(path: Path, card: Any) -> dict[str, Any]:
    if not isinstance(card, dict):
        raise RecipeError(f"{path}: card must be a mapping with the keys {', '.join(_CARD_KEYS)}")
    unknown = sorted(set(card) - set(_CARD_KEYS), key=str)
    if unknown:
        raise RecipeError(f"{path}: card: unknown key(s) {unknown}; known: {', '.join(_CARD_KEYS)}")
    out = {**_CARD_KEYS, **card}
    if isinstance(out["boards"], bool) or not isinstance(out["boards"], int) or out["boards"] < 1:
        raise RecipeError(f"{path}: card.boards must be a positive integer, got {out['boards']!r}")
    for key in ("opponents", "mixed", "search"):
        if not isinstance(out[key], list) or not all(isinstance(o, str) for o in out[key]):
            raise RecipeError(f"{path}: card.{key} must be a list of agent names, got {out[key]!r}")
    chk = out["check"]
    if not (isinstance(chk, dict) and set(chk) == {"opponent", "boards", "seed"}):
        raise RecipeError(f"{path}: card.check must be {{opponent, boards, seed}}, got {chk!r}")
    return out


def _refs(value: Any) -> list[str]:
    if isinstance(value, str):
        return _REF.findall(value)
    if isinstance(value, dict):
        return [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _fill(value: Any, dirs: dict[str, Path]) -> Any:
    """``value`` with every ``{stage}`` replaced by that stage's folder."""
    if isinstance(value, str):
        return _REF.sub(lambda m: str(dirs[m.group(1)]), value)
    if isinstance(value, dict):
        return {k: _fill(v, dirs) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, dirs) for v in value]
    return value


# --------------------------------------------------------------------------- state


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def git_commit() -> dict[str, Any]:
    """``{"commit": full hash or None, "dirty": whether tracked files differ from it (None: unknown)}``
    of the checkout this package runs from."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=20, cwd=REPO)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit.strip() if commit else None, "dirty": None if status is None else bool(status.strip())}


def machine() -> dict[str, Any]:
    """The CPUs and software a run used (for the model card)."""
    import torch

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    return {"cpus": os.cpu_count(), "cpus_usable": usable, "platform": platform.platform(),
            "python": platform.python_version(), "torch": torch.__version__}


class _State:
    """``<out>/recipe_state.json``: per stage ``status`` and figures; saved after every change."""

    def __init__(self, out: Path, recipe: Recipe, tiny: bool):
        self.path = out / STATE_NAME
        fresh = {"format": STATE_FORMAT, "recipe": recipe.name, "recipe_file": str(recipe.path),
                 "recipe_sha256": recipe.digest, "tiny": tiny, "created": _now(), "stages": {}, "card": {}}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise RecipeError(f"{self.path}: not a readable recipe state file ({e}); use another --out") from None
            if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
                raise RecipeError(f"{self.path}: not a {STATE_FORMAT} file; use another --out")
            for key, want in (("recipe", recipe.name), ("tiny", tiny), ("recipe_sha256", recipe.digest)):
                if data.get(key) != want:
                    what = {"recipe": "another recipe", "tiny": "another --tiny setting",
                            "recipe_sha256": "another version of the recipe file"}[key]
                    raise RecipeError(f"{out}: this folder holds a run of {what} ({key} {data.get(key)!r}, now "
                                      f"{want!r}); continue it with the same recipe and flags, or use another --out")
            self.data = data
        else:
            self.data = fresh
            self.save()

    def stage(self, name: str) -> dict[str, Any]:
        return self.data["stages"].setdefault(name, {"status": "pending"})

    def save(self) -> None:
        write_json_atomic(self.path, self.data)


# --------------------------------------------------------------------------- running


def tiny_steps(total_steps: int) -> int:
    """``total_steps`` at ``--tiny`` scale (0, a cloning-only run, stays 0)."""
    return 0 if total_steps == 0 else max(TINY_MIN_STEPS, math.ceil(total_steps * TINY_STEPS_PER_STEP))


def _config_digest(cfg: Any) -> str:
    return hashlib.sha256(json.dumps(cfg.to_dict(), sort_keys=True).encode()).hexdigest()


@dataclass
class _Run:
    """What one call of :func:`run_recipe` needs at every stage."""

    recipe: Recipe
    out: Path
    tiny: bool
    workers: int
    use: dict[str, Path]
    max_updates: int | None
    progress: bool
    say: Callable[[str], None]
    dirs: dict[str, Path] = field(default_factory=dict)


def run_recipe(recipe: Recipe | str | Path, out: str | Path, tiny: bool = False, search: bool = True,
               workers: int = 2, use: dict[str, str | Path] | None = None, until: str | None = None,
               max_updates: int | None = None, progress: bool = True, card: bool = True,
               say: Callable[[str], None] = print) -> dict[str, Any] | None:
    """Run (or continue) every stage of ``recipe`` under ``out``, then write the final policy
    ``out/ppo_<preset>.pt`` and its model card ``out/ppo_<preset>.json`` (module docstring).

    Args:
        recipe: a :class:`Recipe`, a recipe name or a recipe file.
        out: the run folder (``out/<stage>/`` per stage, ``out/recipe_state.json``).
        tiny: the toy scale of the module docstring.
        search: compute the card's ``search`` rows (CPU-hours); False lists them as skipped.
        workers: processes that play the selections' and the card's boards and the cloning deals.
        use: ``{stage name: folder}`` for ``recipe`` stages: run (or reuse) that recipe in this
            folder instead of ``out/<stage>``.
        until: stop after this stage (no card); a later call continues.
        max_updates: stop after this many updates of training in this call (a later call
            continues, resuming the stopped stage exactly).
        progress: the trainer's and the evaluations' progress bars.
        card: write the final policy and its card after the last stage.
        say: where the stage lines go (``stage k of n: name (kind): status``).

    Returns:
        The model card, or None when the run stopped before it (``until``, ``max_updates``).

    Raises:
        RecipeError: a bad recipe, a ``use`` or ``until`` naming no stage, or an ``out`` that holds
            a run of another recipe, version or scale.
        ConfigError, OSError: from a stage (a config, a policy file, a suite that does not fit).
        KeyboardInterrupt: Ctrl-C; the state stays consistent and a later call continues.
    """
    rec = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    out = Path(out)
    names = [s.name for s in rec.stages]
    use = {k: Path(v) for k, v in (use or {}).items()}
    for k in use:
        if k not in names or rec.stage(k).kind != "recipe":
            raise RecipeError(f"--use {k}=...: {rec.path} has no recipe stage {k!r} (recipe stages: "
                              f"{', '.join(s.name for s in rec.stages if s.kind == 'recipe') or 'none'})")
    if until is not None and until not in names:
        raise RecipeError(f"--until {until}: {rec.path} has no such stage; stages: {', '.join(names)}")
    out.mkdir(parents=True, exist_ok=True)
    state = _State(out, rec, tiny)
    run = _Run(rec, out, tiny, workers, use, max_updates, progress, say)
    n = len(rec.stages)
    for k, stage in enumerate(rec.stages, 1):
        st = state.stage(stage.name)
        run.dirs[stage.name] = _stage_dir(run, stage)
        label = f"[recipe {rec.name}] stage {k} of {n}: {stage.name} ({_describe(stage)})"
        if st["status"] == "done":
            say(f"{label}: done before, skipped")
        else:
            say(f"{label}: {'continuing' if st['status'] == 'running' else 'running'}")
            st.update(status="running", kind=stage.kind, started=st.get("started", _now()))
            state.save()
            t0 = time.perf_counter()
            try:
                result = _run_stage(run, stage.at_scale(tiny), st)
            finally:
                st["wall_s"] = st.get("wall_s", 0.0) + (time.perf_counter() - t0)
                state.save()
            if result is None:
                say(f"{label}: stopped (rerun the same command to continue)")
                return None
            st.update(result, status="done", finished=_now(), commit=git_commit()["commit"])
            state.save()
            say(f"{label}: done{_figures(st)}")
        if stage.name == until:
            say(f"[recipe {rec.name}] stopped after stage {until} (--until)")
            return None
    if not card:
        return None
    return _write_card(run, state, search)


def _stage_dir(run: _Run, stage: Stage) -> Path:
    """The folder that ``{stage}`` names: ``OUT/<stage>``, or for a recipe stage the nested
    run's ``until`` folder."""
    if stage.kind != "recipe":
        return run.out / stage.name
    base = run.use.get(stage.name, run.out / stage.name)
    sub = load_recipe(stage.spec["name"])
    return base / (stage.spec["until"] or sub.stages[-1].name)


def _describe(stage: Stage) -> str:
    if stage.kind == "train":
        return f"train {Path(stage.spec).name}"
    if stage.kind == "resume":
        return f"resume a copy of {stage.spec}"
    if stage.kind == "select":
        return f"select from {stage.spec['run']}"
    if stage.kind == "recipe":
        return f"recipe {stage.spec['name']}" + (f" until {stage.spec['until']}" if stage.spec["until"] else "")
    return stage.kind.replace("_", " ")


def _figures(st: dict[str, Any]) -> str:
    parts = []
    if "learner_steps" in st:
        parts.append(f"{st['learner_steps']:,} learner steps, {st['updates']:,} updates")
    if "best" in st:
        parts.append(f"best {st['best']}")
    if "deals" in st:
        parts.append(f"{st['deals']:,} deals")
    parts.append(f"{st.get('wall_s', 0.0):.0f} s")
    return ": " + ", ".join(parts)


def _run_stage(run: _Run, stage: Stage, st: dict[str, Any]) -> dict[str, Any] | None:
    """Run one stage; its figures for the state, or None when it stopped before its end."""
    d = run.dirs[stage.name]
    if stage.kind in ("train", "resume"):
        return _train_stage(run, stage, d)
    if stage.kind == "clone_data":
        return _clone_stage(run, stage, d)
    if stage.kind == "transfer":
        from .transfer import transfer_policy

        spec = _fill(stage.spec, run.dirs)
        d.mkdir(parents=True, exist_ok=True)
        report = transfer_policy(spec["policy"], spec["preset"], d / "policy.pt", obs_kind=spec["obs_kind"],
                                 new_features=spec["new_features"])
        return {"transfer": {k: report[k] for k in ("source_digest", "obs_mapped", "obs_size", "actions_mapped",
                                                    "num_actions", "obs_dropped")}}
    if stage.kind == "select":
        return _select_stage(run, stage, d)
    sub = load_recipe(stage.spec["name"])
    base = run.use.get(stage.name, run.out / stage.name)
    run_recipe(sub, base, tiny=run.tiny, workers=run.workers, until=stage.spec["until"], max_updates=run.max_updates,
               progress=run.progress, card=False, say=lambda line: run.say("  " + line))
    sub_state = json.loads((base / STATE_NAME).read_text(encoding="utf-8"))
    last = stage.spec["until"] or sub.stages[-1].name
    if sub_state["stages"].get(last, {}).get("status") != "done":
        return None
    names = [s.name for s in sub.stages]
    kept = names[:names.index(last) + 1]
    return {"recipe_run": str(base), "recipe_sha256": sub.digest,
            "substages": {n: sub_state["stages"][n] for n in kept}}


def _train_stage(run: _Run, stage: Stage, d: Path) -> dict[str, Any] | None:
    from .agent import read_policy_file
    from .build import build_trainer
    from .config import apply_overrides, config_from_saved, load_config
    from .trainer import CHECKPOINT_NAME

    sets = _fill(stage.set, run.dirs)
    if stage.kind == "resume" and not (d / CHECKPOINT_NAME).exists():
        src = run.dirs[stage.spec]
        if not (src / CHECKPOINT_NAME).exists():
            raise RecipeError(f"stage {stage.name}: the run to resume, {src}, holds no {CHECKPOINT_NAME}")
        tmp = d.with_name(d.name + ".copying")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp)
        shutil.rmtree(d, ignore_errors=True)
        os.replace(tmp, d)
    resume = (d / CHECKPOINT_NAME).exists()
    if resume:  # as blot-train --out DIR --resume: the checkpoint's own config
        cfg = config_from_saved(read_policy_file(d / CHECKPOINT_NAME)["config"])
        if stage.kind == "resume" and sets:
            cfg = apply_overrides(cfg, sets)
    else:
        cfg = load_config(run.recipe.path.parent / stage.spec, TINY_OVERRIDES if run.tiny else ())
        cfg = apply_overrides(cfg, sets) if sets else cfg
    if run.tiny and ("total_steps" in sets or not resume):  # a resumed train stage's checkpoint is tiny already
        cfg = apply_overrides(cfg, {"total_steps": tiny_steps(int(sets.get("total_steps", cfg.total_steps)))})
    trainer = build_trainer(cfg, d, resume=resume)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "config.yaml", "w", encoding="utf-8") as f:
        yaml.safe_dump(cfg.to_dict(), f, sort_keys=False)
    start_steps = _start_steps(run, stage)
    left = None if stage.max_updates is None else max(0, stage.max_updates - trainer.update_no)
    budget = run.max_updates if left is None else left if run.max_updates is None else min(left, run.max_updates)
    trainer.train(max_updates=budget, progress=run.progress)
    finished = trainer.done or (stage.max_updates is not None and trainer.update_no >= stage.max_updates)
    if not finished:
        return None
    fig = {"learner_steps": int(trainer.global_step), "added_steps": int(trainer.global_step) - start_steps,
           "updates": int(trainer.update_no), "deals": int(trainer.deals), "trainer_wall_s": float(trainer.wall_time),
           "config_sha256": _config_digest(cfg)}
    if stage.kind == "train":
        fig["config"] = str(Path(stage.spec).name)
    if trainer.pretrain_metrics:
        fig["cloning"] = {k: float(v) for k, v in trainer.pretrain_metrics.items()
                          if k in ("bc_samples", "bc_accuracy", "bc_seconds")}
    return fig


def _start_steps(run: _Run, stage: Stage) -> int:
    """Learner steps a resume stage's copy held when it began (0 for a train stage)."""
    if stage.kind != "resume":
        return 0
    st = json.loads((run.out / STATE_NAME).read_text(encoding="utf-8"))["stages"].get(stage.spec, {})
    return int(st.get("learner_steps", 0))


def _clone_stage(run: _Run, stage: Stage, d: Path) -> dict[str, Any] | None:
    from blot_env.rules_config import make_rules

    from ..registry import make_agent
    from .clone_data import CloneJob, build_clone_data

    spec = stage.spec
    deals, chunk = (TINY_CLONE_DEALS, TINY_CLONE_CHUNK) if run.tiny else (spec["deals"], spec["chunk_deals"])
    cfg = make_rules(run.recipe.preset)
    make_agent(spec["agent"], cfg)  # an unknown name fails here, before any worker starts
    job = CloneJob(cfg, spec["agent"], int(spec["seed"]), chunk, spec["obs_kind"], factory=make_agent)
    res = build_clone_data(job, d / "data.pkl", deals, 1 if run.tiny else run.workers, progress=run.progress)
    if not res["complete"]:
        return None
    return {"deals": res["wanted"] * chunk, "chunks": res["wanted"], "data_bytes": (d / "data.pkl").stat().st_size}


def _select_stage(run: _Run, stage: Stage, d: Path) -> dict[str, Any]:
    from ..registry import make_agent
    from .select import candidates, select_policy

    spec = _fill(stage.spec, run.dirs)
    files = candidates(run.dirs[spec["run"]], spec["last"], () if run.tiny else spec["updates"], spec["final"])
    files += [Path(f) for f in spec["also"]]
    boards = min(spec["boards"], TINY_SELECT_BOARDS) if run.tiny else spec["boards"]
    d.mkdir(parents=True, exist_ok=True)

    def line(r: dict[str, Any]) -> None:
        rep = r["row"]
        run.say(f"    {_rel(run, r['policy'])}: {rep['mean_board_score']:+.2f} [{rep['ci95'][0]:+.2f}, "
                f"{rep['ci95'][1]:+.2f}] vs {spec['vs']}{' (mixed)' if r['mixed'] else ''}, {boards} dev boards")

    res = select_policy(files, spec["vs"], boards, spec["mixed"], 1 if run.tiny else run.workers,
                        factory=make_agent, out=d / "policy.pt", on_row=line)
    write_json_atomic(d / "selection.json", res)
    return {"best": _rel(run, res["best"]), "candidates": len(files), "boards": boards}


def _rel(run: _Run, path: str | Path) -> str:
    p = Path(path).resolve()
    base = run.out.resolve()
    return str(p.relative_to(base)) if p.is_relative_to(base) else str(path)


# --------------------------------------------------------------------------- the model card


def _row(rep: dict[str, Any], policy: Path, preset: str, opponent: str, mixed: bool, boards: int,
         seed: int) -> dict[str, Any]:
    from blot_env.rules_config import make_rules
    from blot_env.scoring import score_unit

    unit = "raw card points per deal" if score_unit(make_rules(preset)) == "raw" else "table points per deal"
    return {"opponent": opponent, "mode": "mixed" if mixed else "plain", "split": "test", "boards": boards,
            "seed": seed, "mean": rep["mean_board_score"], "ci95": list(rep["ci95"]),
            "board_win_rate": rep["board_win_rate"], "match_win_rate": rep["match_win_rate"],
            "match_win_rate_ci95": list(rep.get("match_win_rate_ci95") or []), "matches": rep["matches"],
            "unit": unit, "seconds": rep.get("seconds"),
            "command": eval_command(policy, preset, opponent, boards, seed, mixed)}


def eval_command(policy: str | Path, preset: str, opponent: str, boards: int, seed: int = 0,
                 mixed: bool = False) -> str:
    """The ``blot-eval`` command line that plays one card row."""
    return (f"blot-eval --agent {policy} --vs {opponent} --preset {preset} --boards {boards} --split test "
            f"--seed {seed}{' --mixed' if mixed else ''} --json")


def measure_row(policy: str | Path, preset: str, opponent: str, boards: int, seed: int = 0, mixed: bool = False,
                workers: int = 1, progress: bool = False, shown: str | None = None) -> dict[str, Any]:
    """One model-card row: ``policy`` against ``opponent`` on the first ``boards`` boards of the
    preset's ``test`` suite (:func:`agents.eval.arena.run` with the registry's agents); ``mean``
    and ``ci95`` in the preset's score-sheet unit (``unit``), ``command`` the ``blot-eval`` line
    that plays the same boards (with ``shown`` as the agent)."""
    from ..eval.arena import run
    from ..registry import make_agent

    rep = run(str(policy), [opponent], preset=preset, boards=boards, split="test", seed=seed, mixed=mixed,
              workers=workers, progress=progress, factory=make_agent)["rows"][0]
    return _row(rep, Path(shown or policy), preset, opponent, mixed, boards, seed)


def _write_card(run: _Run, state: _State, search: bool) -> dict[str, Any]:
    from ..eval.board_pool import weights_digest
    from ..registry import make_agent

    rec = run.recipe
    last = rec.stages[-1]
    final = run.out / rec.policy_name
    card_path = final.with_suffix(".json")
    if state.data["card"].get("written") and card_path.is_file() and final.is_file():
        run.say(f"[recipe {rec.name}] card: done before ({card_path})")
        return json.loads(card_path.read_text(encoding="utf-8"))
    src = run.dirs[last.name] / "policy.pt"
    digest = weights_digest(make_agent(str(src), rec.preset))
    if not final.exists() or weights_digest(make_agent(str(final), rec.preset)) != digest:
        tmp = final.with_name(final.name + ".tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, final)
    cs = state.data["card"]
    if cs.get("weights_digest") != digest:  # rows of another policy do not carry over
        cs.clear()
        cs["weights_digest"] = digest
    rows = cs.setdefault("rows", {})
    c = rec.card
    boards = min(c["boards"], TINY_CARD_BOARDS) if run.tiny else c["boards"]
    wanted = [(o, False, "plain") for o in c["opponents"]] + [(o, True, "mixed") for o in c["mixed"]]
    skipped = []
    for o in c["search"]:
        if search and not run.tiny:
            wanted.append((o, False, "plain"))
        else:
            skipped.append({"opponent": o, "mode": "plain", "boards": boards,
                            "reason": "--tiny" if run.tiny else "skipped (--no-search)",
                            "command": eval_command(final, rec.preset, o, boards)})
    chk = c["check"]
    check_boards = min(chk["boards"], TINY_CARD_BOARDS) if run.tiny else chk["boards"]
    todo = [(o, m, mode, boards, 0) for o, m, mode in wanted] + [(chk["opponent"], False, "check", check_boards,
                                                                    chk["seed"])]
    for o, m, mode, b, seed in todo:
        key = f"{o}|{mode}|{b}|{seed}"
        if key in rows:
            continue
        run.say(f"[recipe {rec.name}] card: {rec.policy_name} vs {o}{' (mixed)' if m else ''} on {b} test boards")
        t0 = time.perf_counter()
        rows[key] = measure_row(final, rec.preset, o, b, seed, m, 1 if run.tiny else run.workers, run.progress)
        rows[key]["wall_s"] = time.perf_counter() - t0
        state.save()
    stages = []
    for s in rec.stages:
        st = state.data["stages"][s.name]
        if s.kind == "recipe":
            for sub_name, sub_st in st.get("substages", {}).items():
                stages.append(_card_stage(f"{s.name}/{sub_name}", sub_st))
        else:
            stages.append(_card_stage(s.name, st, s))
    steps = {s["stage"]: s["added_steps"] for s in stages if "added_steps" in s}
    card = {
        "format": CARD_FORMAT,
        "preset": rec.preset,
        "policy": rec.policy_name,
        "weights_digest": digest,
        "source": "recipe run" + (" (--tiny)" if run.tiny else ""),
        "recipe": {"name": rec.name, "file": _repo_rel(rec.path), "sha256": rec.digest},
        "git": git_commit(),
        "stages": stages,
        "learner_steps": {"per_stage": steps, "total": sum(steps.values())},
        "wall_time_s": sum(s.get("wall_s", 0.0) for s in stages),
        "machine": machine(),
        "test_rows": [rows[f"{o}|{mode}|{boards}|0"] for o, m, mode in wanted],
        "skipped_rows": skipped,
        "check_row": rows[f"{chk['opponent']}|check|{check_boards}|{chk['seed']}"],
        "written": _now(),
    }
    write_json_atomic(card_path, card)
    cs["written"] = card["written"]
    state.save()
    run.say(f"[recipe {rec.name}] {final} (weights {digest}) and its card {card_path}")
    return card


def _card_stage(name: str, st: dict[str, Any], stage: Stage | None = None) -> dict[str, Any]:
    keep = ("learner_steps", "added_steps", "updates", "deals", "trainer_wall_s", "wall_s", "config",
            "config_sha256", "best", "boards", "candidates", "commit", "finished")
    out = {"stage": name, "kind": stage.kind if stage else st.get("kind")}
    out.update({k: st[k] for k in keep if k in st})
    return out


def _repo_rel(path: Path) -> str:
    p = path.resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(path)


__all__ = [
    "CARD_FORMAT",
    "KINDS",
    "RECIPES_DIR",
    "STATE_NAME",
    "TINY_OVERRIDES",
    "Recipe",
    "RecipeError",
    "Stage",
    "eval_command",
    "git_commit",
    "load_recipe",
    "machine",
    "measure_row",
    "recipe_path",
    "run_recipe",
    "tiny_steps",
    "write_json_atomic",
]
