"""Helpers shared by the integration tests (no third-party RL library imported here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from blot_env.engine import legal_mask

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("ray", "torchrl", "tensordict", "tianshou")


def heavy_modules_after_import_blot_env() -> list[str]:
    """Third-party RL libraries that ``import blot_env`` pulls in (must be none)."""
    code = ("import sys, blot_env, blot_env.integrations; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return [m for m in out.stdout.strip().split(",") if m]


def engine_mask(raw_env) -> np.ndarray:
    """``bool[A]``: the legal actions of the raw env's current state, straight from the engine."""
    return legal_mask(raw_env.game_state).astype(bool)


def expected_deal_rewards(result: dict, num_players: int, scale: float) -> list[float]:
    """Per seat, ``scale * (own side's deal score - opponents')`` from a deal record's result."""
    diff = (result["score"][0] - result["score"][1]) * scale
    return [diff if s % 2 == 0 else -diff for s in range(num_players)]
