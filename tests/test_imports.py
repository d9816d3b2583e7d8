"""Package boundaries, read from the source: every ``import`` of every module.

1. ``blot_env`` imports nothing from ``agents`` (lazy imports inside functions included).
2. A private thing (an underscore module such as ``blot_env.batched._layout``, or an
   underscore name such as ``agents.baselines.rules_agent._by_block`` or ``MediumAgent._standing``) is
   used only inside the package that defines it: the importing module's own package must be
   the package of the module that defines it. ``blot_env.env`` may not import
   ``blot_env.batched._single`` (it uses the public ``blot_env.batched.deal_row``), and
   ``agents.search.pimc`` may not call a private method of ``agents.baselines.medium_agent``.

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
    ``agents.baselines.medium_agent.MediumAgent._standing`` -> ``agents``."""
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


# ---------------------------------------------------------------------------- circles
#
# 3. The import graph of ``blot_env`` and ``agents`` has no circle. Every import counts, at the
#    top of a module or inside a function (a lazy import hides a circle from Python's loader,
#    not from a reader): an edge goes from a module to the module it names (``from X import Y``
#    names ``X.Y`` when that is a module, else ``X``). docs/architecture.md gives the layers.

GRAPHED = ("blot_env", "agents")


def import_edges(source: str, module: str, package: str, is_module=None) -> set[str]:
    """The project modules that one module's source imports (dotted names, module docstring 3)."""
    is_module = is_module or _is_module
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if is_module(f"{mod}.{a.name}") else mod for a in node.names]
        else:
            continue
        out.update(t for t in targets if t.split(".")[0] in GRAPHED and t != module)
    return out


def find_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative),
    each sorted: every circle of ``graph`` lies inside one of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next((w for w in it if w in graph), None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def project_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(p.relative_to(ROOT) for d in GRAPHED for p in (ROOT / d).rglob("*.py")):
        module, package = module_name(path)
        graph[module] = import_edges((ROOT / path).read_text(encoding="utf-8"), module, package)
    return graph


def test_the_import_graph_has_no_circle():
    graph = project_graph()
    assert "agents.eval.arena" in graph and "blot_env.batched.engine" in graph
    assert find_circles(graph) == []


def test_the_circle_check_finds_a_circle_put_in_on_purpose():
    graph = project_graph()
    # the circle this layout closed: the engine (under the arena) building agents by name
    # through the registry, and the registry reaching the arena
    graph["agents.eval.board_pool"] = graph["agents.eval.board_pool"] | import_edges(
        "def f():\n    from ..registry import make_agent\n", "agents.eval.board_pool", "agents.eval")
    graph["agents.registry"] = graph["agents.registry"] | {"agents.eval.arena"}
    circles = find_circles(graph)
    assert len(circles) == 1 and {"agents.eval.arena", "agents.registry", "agents.eval.board_pool"} <= set(circles[0])


def test_the_circle_check_reads_lazy_and_relative_imports():
    mods = {"agents.x", "agents.x.a", "agents.x.b", "agents.x.c"}
    a = import_edges("import os\ndef f():\n    from . import b\n", "agents.x.a", "agents.x", mods.__contains__)
    b = import_edges("from .c import thing\n", "agents.x.b", "agents.x", mods.__contains__)
    c = import_edges("import numpy\nfrom agents.x import a\n", "agents.x.c", "agents.x", mods.__contains__)
    assert (a, b, c) == ({"agents.x.b"}, {"agents.x.c"}, {"agents.x.a"})
    assert find_circles({"agents.x.a": a, "agents.x.b": b, "agents.x.c": c}) == [["agents.x.a", "agents.x.b",
                                                                                 "agents.x.c"]]
    assert find_circles({"agents.x.a": a, "agents.x.b": b, "agents.x.c": set()}) == []


# 4. Names become agents at the command-line edge: the evaluation and the trainer core receive
#    a factory (``factory=agents.registry.make_agent``) and never import the registry themselves.

LOW = ("agents.base", "agents.baselines", "agents.search", "agents.eval.arena", "agents.eval.board_pool",
       "agents.eval.league", "agents.eval.stats", "agents.ppo.rollout", "agents.ppo.async_rollout",
       "agents.ppo.trainer", "agents.ppo.pretrain", "agents.ppo.demos", "agents.ppo.clone_data",
       "agents.ppo.network", "agents.ppo.config", "agents.ppo.agent")


def registry_importers(graph: dict[str, set[str]]) -> list[str]:
    """The modules under :data:`LOW` that import ``agents.registry`` (directly)."""
    low = [m for m in graph if any(m == p or m.startswith(p + ".") for p in LOW)]
    return sorted(m for m in low if "agents.registry" in graph[m])


def test_nothing_low_imports_the_registry():
    graph = project_graph()
    assert "agents.eval.cli" in graph and "agents.registry" in graph["agents.eval.cli"]  # the edge does
    assert registry_importers(graph) == []


def test_the_registry_check_finds_an_import_put_in_on_purpose():
    graph = project_graph()
    graph["agents.eval.board_pool"] = graph["agents.eval.board_pool"] | import_edges(
        "def _agent(name):\n    from ..registry import make_agent\n", "agents.eval.board_pool", "agents.eval")
    assert registry_importers(graph) == ["agents.eval.board_pool"]
