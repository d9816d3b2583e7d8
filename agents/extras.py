"""Which optional extra (pyproject.toml ``[project.optional-dependencies]``) a command needs,
and the console-script entry points that say so before they import it.

A plain ``pip install -e .`` installs every console script but only the base dependencies;
``blot-train`` needs the ``train`` extra (torch, pyyaml). Its entry point here looks the
modules up (without importing them) and, when one is missing, prints one line naming the
extra and the command that installs it, and exits 1, instead of a ``ModuleNotFoundError``
traceback.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

#: extra -> the import names a command of that extra needs
EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("torch", "yaml"),
    "plot": ("matplotlib",),
}
#: the pyproject.toml extra that provides each group above
PROVIDED_BY = {"train": "train", "plot": "train"}


class MissingExtraError(ImportError):
    """A command needs an optional extra that is not installed; the message says how to install it."""


def missing_modules(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be found (``importlib.util.find_spec``; nothing is imported)."""
    out = []
    for m in modules:
        try:
            found = importlib.util.find_spec(m) is not None
        except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
            found = False
        if not found:
            out.append(m)
    return out


def install_hint(extra: str) -> str:
    """``install the train extra: pip install -e '.[train]' (in a clone) or pip install 'blot-env[train]'``."""
    return f"install the {extra} extra: pip install -e '.[{extra}]' (in a clone) or pip install 'blot-env[{extra}]'"


def require(group: str, what: str) -> None:
    """Raise :class:`MissingExtraError` when a module of ``EXTRAS[group]`` is missing.

    ``what`` names the command or feature in the message (``"blot-train"``, ``"agent 'ppo'"``).

    Raises:
        MissingExtraError: ``"<what> needs <modules>, which the <extra> extra provides; install ..."``.
        KeyError: an unknown group.
    """
    gone = missing_modules(EXTRAS[group])
    if gone:
        extra = PROVIDED_BY[group]
        raise MissingExtraError(f"{what} needs {', '.join(gone)}, which the {extra} extra provides; "
                                f"{install_hint(extra)}")


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
    """``blot-eval`` (``agents.arena_cli:main``): base dependencies only; ``--plot`` needs matplotlib
    (train extra) and the PPO agents torch (the registry names the extra when one is asked for)."""
    plot = any(a == "--plot" or a.startswith("--plot=") for a in sys.argv[1:])
    if plot and _missing("plot", "blot-eval --plot", "blot-eval"):
        return 1
    from agents.arena_cli import main

    return int(main() or 0)


__all__ = ["EXTRAS", "MissingExtraError", "blot_eval", "blot_train", "install_hint", "missing_modules", "require"]
