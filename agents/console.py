"""The console-script entry points that check their optional extra before importing the command.

A plain ``pip install -e .`` installs every console script but only the base dependencies;
``blot-train`` needs the ``train`` extra (torch, pyyaml). Its entry point here looks the
modules up (without importing them, agents/extras.py) and, when one is missing, prints one line
naming the extra and the command that installs it, and exits 1, instead of a
``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import sys

from .extras import MissingExtraError, require


def _missing(group: str, what: str, command: str) -> bool:
    """Print ``command: <what> needs ...; install ...`` and return True when ``group`` is missing."""
    try:
        require(group, what)
    except MissingExtraError as e:
        print(f"{command}: {e}", file=sys.stderr)
        return True
    return False


def blot_train() -> int:
    """``blot-train``: the PPO trainer (``agents.ppo.cli:main``), which needs the train extra."""
    if _missing("train", "blot-train", "blot-train"):
        return 1
    from agents.ppo.cli import main

    return int(main() or 0)


def blot_eval() -> int:
    """``blot-eval`` (``agents.eval.cli:main``): base dependencies only; ``--plot`` needs matplotlib
    (train extra) and the PPO agents torch (the registry names the extra when one is asked for)."""
    plot = any(a == "--plot" or a.startswith("--plot=") for a in sys.argv[1:])
    if plot and _missing("plot", "blot-eval --plot", "blot-eval"):
        return 1
    from agents.eval.cli import main

    return int(main() or 0)


__all__ = ["blot_eval", "blot_train"]
