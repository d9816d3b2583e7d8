"""Package boundaries, read from the source: every ``import`` of every module.

1. ``blot_env`` imports nothing from ``agents`` (lazy imports inside functions included).
2. A private thing (an underscore module such as ``blot_env.batched._layout``, or an
   underscore name such as ``agents.rules_agent._by_block`` or ``MediumAgent._standing``) is
   used only inside the package that defines it: the importing module's own package must be
   the package of the module that defines it. ``blot_env.env`` may not import
   ``blot_env.batched._single`` (it uses the public ``blot_env.batched.deal_row``), and
   ``agents.search.pimc`` may not call a private method of ``agents.medium_agent``.

The checked code is the project's: ``blot_env``, ``agents``, ``scripts`` and
``integrations`` (scripts and examples belong to no package, so they use public names only).
Tests are white-box and are not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("blot_env", "agents", "scripts", "integrations")


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def module_name(path: Path) -> tuple[str, str]:
    """``(module, its package)`` of a source file relative to the root (``""``: no package)."""
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    if not (ROOT / Path(*parts[:-1]) / "__init__.py").exists():
        return ".".join(parts), ""  # a script: no package
    return ".".join(parts), ".".join(parts[:-1])


def _is_package(dotted: str) -> bool:
    return (ROOT / Path(*dotted.split(".")) / "__init__.py").exists()


def _is_module(dotted: str) -> bool:
    return (ROOT / Path(*dotted.split("."))).with_suffix(".py").exists() or _is_package(dotted)


def owner_package(dotted: str) -> str | None:
    """The package that a dotted path's first private part belongs to, or None if the path has
    no private part. ``blot_env.batched._layout.ROW`` -> ``blot_env.batched``;
    ``agents.medium_agent.MediumAgent._standing`` -> ``agents``."""
    parts = dotted.split(".")
    for i, p in enumerate(parts):
        if _private(p):
            j = i
            while j > 0 and not _is_module(".".join(parts[:j])):
                j -= 1  # a name inside a module (a class, a function): climb to the module
            mod = ".".join(parts[:j])
            if j == i and _is_package(mod):
                return mod  # a private module of this package
            return mod if _is_package(mod) else mod.rpartition(".")[0]
    return None


def violations(source: str, module: str, package: str) -> list[str]:
    """The boundary violations of one module's source (module docstring)."""
    tree = ast.parse(source)
    found: list[str] = []
    names: dict[str, str] = {}  # local name -> dotted path it was imported as

    def check(dotted: str, line: int) -> None:
        if module.split(".")[0] == "blot_env" and dotted.split(".")[0] == "agents":
            found.append(f"{module}:{line}: blot_env imports agents ({dotted})")
        owner = owner_package(dotted)
        if owner is not None and owner != package:
            found.append(f"{module}:{line}: uses {dotted}, private to package {owner}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                check(a.name, node.lineno)
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for a in node.names:
                check(f"{mod}.{a.name}", node.lineno)
                names[a.asname or a.name] = f"{mod}.{a.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in names):
            check(f"{names[node.value.id]}.{node.attr}", node.lineno)
    return found


def _sources() -> list[Path]:
    return sorted(p.relative_to(ROOT) for d in CHECKED for p in (ROOT / d).rglob("*.py"))


def test_the_checked_tree_is_found():
    files = {str(p) for p in _sources()}
    assert "blot_env/env.py" in files and "agents/search/sampler.py" in files and len(files) > 60


@pytest.mark.parametrize("path", _sources(), ids=str)
def test_module_respects_the_package_boundaries(path):
    module, package = module_name(path)
    assert violations((ROOT / path).read_text(encoding="utf-8"), module, package) == []


@pytest.mark.parametrize(("source", "module", "package", "expected"), [
    ("from agents.ppo.network import ActorCritic", "blot_env.integrations.rllib", "blot_env.integrations",
     "blot_env imports agents"),
    ("def f():\n    import agents\n", "blot_env.env", "blot_env", "blot_env imports agents"),
    ("from .batched import _single", "blot_env.env", "blot_env", "private to package blot_env.batched"),
    ("from blot_env.batched._layout import ROW", "agents.search.sampler", "agents.search",
     "private to package blot_env.batched"),
    ("import blot_env.batched._layout as L", "scripts.bench", "", "private to package blot_env.batched"),
    ("from ..medium_agent import MediumAgent\nMediumAgent._standing(v)", "agents.search.pimc", "agents.search",
     "private to package agents"),
    ("from agents.ppo.config import _check_literal", "agents.integrations.rllib_config", "agents.integrations",
     "private to package agents.ppo"),
])
def test_the_checker_finds_each_kind_of_violation(source, module, package, expected):
    found = violations(source, module, package)
    assert len(found) == 1 and expected in found[0], found


def test_the_checker_allows_a_package_its_own_private_modules():
    assert violations("from . import _core\nfrom ._layout import ROW", "blot_env.batched.engine",
                      "blot_env.batched") == []
    assert violations("from . import _kernel as K\nK._gen_moves", "agents.search.solver", "agents.search") == []
