"""Pick the best of a training run's kept policies on dev boards (``scripts/select_policy.py``
and the ``select`` stage of a recipe, :mod:`agents.ppo.recipe`).

A run trained with ``keep_checkpoints: true`` keeps ``policy_<update>.pt`` at every checkpoint
(:func:`agents.ppo.trainer.kept_policies`). :func:`candidates` lists the last few of them, any
named updates, and the run's final ``policy.pt``; :func:`select_policy` plays each candidate
(and any other policy file) against one opponent on the first boards of the preset's ``dev``
suite (checkpoint selection uses ``dev``, reported figures ``test``: docs/evaluation.md) and
ranks them by the mean board score per deal, or, with ``mixed``, by the mean of the plain and
the mixed-partnership scores (the candidate and an opponent partner against two opponents).

The evaluation is :func:`agents.eval.arena.run`; agent names become agents through the
``factory`` the caller passes (``agents.registry.make_agent`` at the command-line edge), so this
module imports no registry.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from blot_env.errors import ConfigError

from .trainer import POLICY_NAME, kept_policies


def candidates(run_dir: str | Path, last: int = 4, updates: Sequence[int] = (), final: bool = True) -> list[Path]:
    """A run's candidate policy files: the policies of ``updates`` (``policy_<update>.pt``), the
    last ``last`` kept policies by update, then ``policy.pt`` when ``final`` (each file once, in
    that order).

    Raises:
        ConfigError: ``last`` < 0, or a policy of ``updates`` that the run did not keep (the
            message names the file and the updates it kept).
    """
    run_dir = Path(run_dir)
    if last < 0:
        raise ConfigError(f"last must be >= 0 (kept policies to try), got {last}")
    kept = kept_policies(run_dir)
    named = []
    for u in updates:
        p = run_dir / f"policy_{int(u):06d}.pt"
        if not p.is_file():
            have = ", ".join(str(int(k.stem.removeprefix("policy_"))) for k in kept) or "none"
            raise ConfigError(f"{run_dir}: no kept policy of update {u} ({p.name}); kept updates: {have}")
        named.append(p)
    out = named + (kept[-last:] if last > 0 else [])
    final_path = run_dir / POLICY_NAME
    if final and final_path.is_file():
        out.append(final_path)
    unique: dict[Path, Path] = {}
    for p in out:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def select_policy(files: Sequence[str | Path], vs: str = "rules-medium", boards: int = 300, mixed: bool = False,
                  workers: int = 1, seed: int = 0, factory: Any = None, out: str | Path | None = None,
                  on_row: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Evaluate each policy file against ``vs`` on the first ``boards`` dev boards and pick the best.

    Args:
        files: policy files (``policy.pt``, ``policy_<update>.pt``, checkpoints), all of one preset.
        vs: the opponent (an agent name ``factory`` knows).
        boards: dev boards per candidate (and per mode).
        mixed: also play the mixed-partnership mode (4-player presets) and rank by the mean of
            both modes' scores.
        workers: processes that play the boards.
        seed: the base seed of the agents' generators (:func:`agents.eval.arena.run`).
        factory: builds agents from names (``agents.registry.make_agent``).
        out: when given, the best file is copied there (unless it is that file).
        on_row: called with ``(file, mode, arena row)`` facts as a dict after each evaluation
            (``{"policy", "mixed", "row"}``), for a caller's progress lines.

    Returns:
        ``{"preset", "opponent", "boards", "split": "dev", "seed", "mixed", "rows", "best"}``: a row
        per file (``policy``: the path as given; ``mean``, ``ci95``, ``board_win_rate``,
        ``match_win_rate``, ``matches``, the same with a ``mixed_`` prefix when ``mixed``, and
        ``rank_score``), ``best`` the path of the best row (the first of equal ones). Scores are
        mean board scores per deal in the preset's score-sheet unit (table points; raw card
        points on belote), candidate minus opponent.

    Raises:
        ConfigError: no file, ``boards`` < 1, files of different presets (named), or ``mixed`` on
            a preset without partners.
        FileNotFoundError: a file that does not exist.
    """
    from blot_env.rules_config import make_rules

    from ..eval.arena import run
    from .agent import read_policy_file

    files = [Path(f) for f in files]
    if not files:
        raise ConfigError("no candidate policy to select from")
    if boards < 1:
        raise ConfigError(f"boards must be >= 1, got {boards}")
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"no PPO policy file at {f}")
    presets = {str(f): read_policy_file(f)["config"]["preset"] for f in files}
    preset = presets[str(files[0])]
    other = {f: p for f, p in presets.items() if p != preset}
    if other:
        raise ConfigError(f"every policy must be of preset {preset!r} ({files[0]}); "
                          + ", ".join(f"{f} is {p!r}" for f, p in other.items()))
    players = make_rules(preset).num_players
    if mixed and players != 4:
        raise ConfigError(f"--mixed needs a 4-player preset (partners); {preset!r} has {players} players")
    rows = []
    for f in files:
        row: dict[str, Any] = {"policy": str(f)}
        for m in (False, True) if mixed else (False,):
            rep = run(str(f), [vs], preset=preset, boards=boards, split="dev", seed=seed, workers=workers,
                      mixed=m, progress=False, factory=factory)["rows"][0]
            key = "mixed_" if m else ""
            row.update({f"{key}mean": rep["mean_board_score"], f"{key}ci95": rep["ci95"],
                        f"{key}board_win_rate": rep["board_win_rate"],
                        f"{key}match_win_rate": rep["match_win_rate"], f"{key}matches": rep["matches"]})
            if on_row is not None:
                on_row({"policy": str(f), "mixed": m, "row": rep})
        row["rank_score"] = (row["mean"] + row["mixed_mean"]) / 2 if mixed else row["mean"]
        rows.append(row)
    best = max(rows, key=lambda r: r["rank_score"])
    if out is not None and Path(best["policy"]).resolve() != Path(out).resolve():
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(out).with_suffix(Path(out).suffix + ".tmp")
        shutil.copyfile(best["policy"], tmp)
        tmp.replace(out)
    return {"preset": preset, "opponent": vs, "boards": boards, "split": "dev", "seed": seed, "mixed": mixed,
            "rows": rows, "best": best["policy"]}


__all__ = ["candidates", "select_policy"]
