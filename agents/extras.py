"""Which optional extra (pyproject.toml ``[project.optional-dependencies]``) a command or an
agent needs, and the error that names it (the console scripts that check it before importing
their command are in agents/console.py).
"""

from __future__ import annotations

import importlib.util
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


__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "missing_modules", "require"]
