"""Agents by name: ``make_agent("rules")``, ``make_agent("ppo")``, ``make_agent("runs/x/best.pt")``.

Names (docs/evaluation.md "The baseline agents"):

* ``random`` (L0), ``rules`` (L1 "Easy"), ``rules-medium`` (L2 "Medium");
* ``pimc-K`` (L3 "Hard", K worlds; ``pimc-K:SECONDS`` adds a per-decision time budget) and
  ``pimc-insane`` (L4: at most 256 worlds per card, stopping early once the card is clear),
  agents/search/; ``pimc-insane-full``: L4 with all 256 worlds at every card (its play
  before 2026-12-07);
* ``ppo``: the shipped PPO policy of the preset (agents/data/ppo_<preset>.pt); ``ppo:PATH``:
  a policy file;
* ``ppo-search-K`` / ``ppo-search-K-eE`` / ``ppo-search-K-bM`` / ``ppo-search-K-zZ`` /
  ``...:PATH.pt``: the light search over K worlds on that network, exact solves with E tricks
  left, the K worlds kept from M by the actor's belief (agents/search/net_search.py);
* ``ppo-rollout-K`` / ``ppo-rollout-K-zZ`` / ``...:PATH.pt``: the same search valuing each card
  by playing the deal out with the network in every seat, in K worlds;
* a path to a checkpoint file (``*.pt``): a trained PPO policy;
* ``BIDDER+PLAYER``, two of the names above: an :class:`agents.base.PhaseSplitAgent` whose
  ``BIDDER`` makes the auction's calls and ``PLAYER`` the cards and declaration steps
  (``rules-medium+ppo``: the shipped network's card play after ``rules-medium``'s calls), so that
  ``blot-eval`` and ``scripts/eval_long.py`` (``--paired`` too) measure the two phases apart.

The PPO entries import ``agents.ppo.agent.load_ppo_agent`` only when asked for, so that the
rule agents work without torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from blot_env.errors import ConfigError
from blot_env.rules_config import RulesConfig, make_rules

from .base import Agent, PhaseSplitAgent
from .baselines.medium_agent import MediumAgent
from .baselines.random_agent import RandomAgent
from .baselines.rules_agent import RulesAgent

#: the rule agents: name -> factory
BUILTIN: dict[str, Callable[[], Agent]] = {
    "random": RandomAgent,
    "rules": RulesAgent,
    "rules-medium": MediumAgent,
}
#: aliases of the app's difficulty names (docs/rules.md, Sources: rules text 004)
ALIASES = {"L0": "random", "L1": "rules", "easy": "rules", "L2": "rules-medium", "medium": "rules-medium"}
KNOWN = (*BUILTIN, "pimc-K", "pimc-K:SECONDS", "pimc-insane", "pimc-insane-full", "ppo", "ppo:NAME", "ppo-search-K",
         "ppo-search-K-eE", "ppo-search-K-bM", "ppo-search-K-bM-pP", "ppo-search-K-zZ", "ppo-search-K:PATH.pt",
         "ppo-rollout-K", "ppo-rollout-K-zZ", "ppo-rollout-K:PATH.pt", "PATH.pt", "BIDDER+PLAYER")


class UnknownAgentError(ValueError):
    """An agent name that is neither a known agent nor a checkpoint path."""


def known_agents() -> tuple[str, ...]:
    """Names ``make_agent`` accepts (``ppo:NAME`` and ``PATH.pt`` are patterns)."""
    return KNOWN


def make_agent(name: str, preset: str | RulesConfig = "bazar", seed: int | None = None, *,
               allow_oracle: bool = False) -> Agent:
    """The agent called ``name`` for the rules of ``preset``.

    Args:
        name: ``random``, ``rules``, ``rules-medium`` (or the aliases L0/L1/L2, easy/medium),
            ``pimc-K``, ``pimc-insane``, ``ppo``, ``ppo:PATH``, ``ppo-search-K[:PATH]``,
            ``ppo-rollout-K[:PATH]``, the path of a ``.pt`` checkpoint, or ``BIDDER+PLAYER``
            (two of these; a :class:`~agents.base.PhaseSplitAgent` named ``name`` without its
            outer spaces). A name whose path, whole or after ``NAME:``, is an existing file is
            that file even if it holds a ``+`` (the parts of ``BIDDER+PLAYER`` hold none).
        preset: a preset id or a :class:`RulesConfig` (the PPO policy's network depends on it;
            the rule agents read the rules from each view).
        seed: unused by the rule agents (their randomness comes from the ``rng`` of each
            ``act`` call); kept so that every agent is built the same way.
        allow_oracle: load an oracle policy file (``network.oracle``) named directly
            (:func:`make_pool_agent`, a training pool's batched members); else it is refused.

    Raises:
        ConfigError: a PPO file that cannot be read, or (``ppo-search``) has no critic, or an
            oracle policy without ``allow_oracle`` (it cannot act from a seat's view).
        UnknownAgentError: an unknown name (the message lists the known ones), a
            checkpoint path that does not exist, or a ``+`` that does not join two names.
        FileNotFoundError: ``ppo:PATH`` with no file at ``PATH``.
        ImportError: a PPO agent was asked for without torch (a ``MissingExtraError`` naming the
            train extra to install).
    """
    del seed
    if not isinstance(name, str) or not name.strip():
        raise UnknownAgentError(f"agent name must be a non-empty string, got {name!r}; known: {', '.join(KNOWN)}")
    key = ALIASES.get(name.strip(), name.strip())
    if "+" in key and not _names_a_file(key):
        bidder, _, player = key.partition("+")
        if not bidder.strip() or not player.strip() or "+" in player:
            raise UnknownAgentError(f"agent {name!r}: expected BIDDER+PLAYER, two agent names joined by one '+' "
                                    "(the calls of the first, the cards of the second)")
        try:
            parts = make_agent(bidder, preset), make_agent(player, preset)
        except UnknownAgentError as e:
            if key.endswith(".pt"):
                raise UnknownAgentError(f"checkpoint {key!r} not found (read as BIDDER+PLAYER: {e})") from None
            raise
        return PhaseSplitAgent(*parts, name=key)
    if key in BUILTIN:
        agent = BUILTIN[key]()
        agent.name = key
        return agent
    if key.startswith("pimc-"):
        return _make_pimc(key)
    cfg = make_rules(preset) if isinstance(preset, str) else preset
    if key.startswith("ppo-search"):
        return _make_net_search(key, cfg, name)
    if key.startswith("ppo-rollout"):
        return _make_rollout_search(key, cfg, name)
    if key == "ppo" or key.startswith("ppo:"):
        return _load_ppo(key if key == "ppo" else key[4:], cfg, name, allow_oracle)
    p = Path(key)
    if p.suffix == ".pt":
        if not p.is_file():
            raise UnknownAgentError(f"checkpoint {key!r} not found")
        return _load_ppo(str(p), cfg, name, allow_oracle)
    if p.is_dir():
        hint = f"; the policy of a blot-train run is {p / 'policy.pt'}" if (p / "policy.pt").is_file() else ""
        raise UnknownAgentError(f"agent {name!r} is a folder, not a checkpoint (checkpoints end in .pt){hint}")
    if p.exists():
        raise UnknownAgentError(f"agent {name!r} is a file but not a checkpoint (checkpoints end in .pt); "
                                f"known: {', '.join(KNOWN)}")
    raise UnknownAgentError(f"unknown agent {name!r}; known: {', '.join(KNOWN)}")


def _names_a_file(key: str) -> bool:
    """``key``, or its part after a ``NAME:`` prefix (``ppo:PATH``, ``ppo-search-K:PATH``), is
    an existing file or folder: a path that holds a ``+``, not ``BIDDER+PLAYER``."""
    return Path(key).exists() or (":" in key and Path(key.split(":", 1)[1]).exists())


#: ``(stop_z, stop_tol)`` of ``pimc-insane``'s card decisions: stop once no other card can be
#: more than ``stop_tol`` points better by ``stop_z`` standard errors (``PIMCAgent``,
#: docs/search.md section 3)
INSANE_STOP = (2.0, 1.0)


def _make_pimc(key: str) -> Agent:
    """``pimc-K`` (L3, K worlds), ``pimc-K:SECONDS`` (with a per-decision time budget),
    ``pimc-insane`` (L4: K=256, worlds picked or weighted by the bidding model, card decisions
    stopped early at ``INSANE_STOP``), ``pimc-insane-full`` (the same with all 256 worlds at
    every card); agents/search/pimc.py."""
    from .search.pimc import PIMCAgent

    spec = key[5:]
    budget = None
    if ":" in spec:
        spec, _, sec = spec.partition(":")
        try:
            budget = float(sec)
        except ValueError:
            raise UnknownAgentError(f"bad time budget in {key!r}; expected pimc-K:SECONDS") from None
        if not 0 < budget < float("inf"):  # nan fails too
            raise UnknownAgentError(f"time budget {sec!r} in {key!r} is not a positive number of seconds; "
                                    f"expected pimc-K:SECONDS with SECONDS > 0")
    if spec == "insane":
        return PIMCAgent(k=256, time_budget=budget, weighted=True, name=key,
                         stop_z=INSANE_STOP[0], stop_tol=INSANE_STOP[1])
    if spec == "insane-full":
        return PIMCAgent(k=256, time_budget=budget, weighted=True, name=key)
    if not spec.isdigit() or int(spec) < 1:
        raise UnknownAgentError(f"unknown agent {key!r}; expected pimc-K (K >= 1), pimc-K:SECONDS, pimc-insane "
                                "or pimc-insane-full")
    return PIMCAgent(k=int(spec), time_budget=budget, name=key)


def _make_net_search(key: str, cfg: RulesConfig, label: str) -> Agent:
    """``ppo-search`` / ``ppo-search-K`` / ``ppo-search-K-eE`` / ``ppo-search-K-bM`` /
    ``ppo-search-K-bM-pP`` / ``ppo-search-K-zZ`` (the parts in this order, e.g.
    ``ppo-search-16-e8-b64-z2``) / ``...:PATH.pt``: the light search over K worlds (default 16),
    exact solves when at most E tricks are left (default 2; E at the deal's number of tricks: every
    card by exact solves), the K worlds kept from M uniform ones by the actor's likelihood of the
    other seats' actions to the power P (default off; P default 0.5; agents/search/belief.py),
    overriding the policy's card only by Z standard errors (default 2; 0 is the plain argmax), on
    the shipped policy of the preset or on a policy file (agents/search/net_search.py)."""
    spec, _, path = key.partition(":")
    m = re.fullmatch(r"ppo-search(?:-(\d+))?(?:-e(\d+))?(?:-b(\d+))?(?:-p(\d+(?:\.\d+)?))?(?:-z(\d+(?:\.\d+)?))?",
                     spec)
    k = int(m.group(1) or 16) if m is not None else 0
    if m is None or k < 1:
        raise UnknownAgentError(f"unknown agent {key!r}; expected ppo-search, ppo-search-K (K >= 1), "
                                "ppo-search-K-eE (E >= 0: tricks left solved exactly), "
                                "ppo-search-K-bM (M > K worlds weighed by the actor's belief), "
                                "ppo-search-K-bM-pP (P: the belief's power), "
                                "ppo-search-K-zZ (Z >= 0: standard errors), in that order (ppo-search-K-eE-bM-zZ), "
                                "or any of them with :PATH.pt")
    belief = int(m.group(3)) if m.group(3) is not None else 0
    if m.group(3) is not None and belief <= k:
        raise UnknownAgentError(f"agent {key!r}: -bM draws M worlds to keep K={k} of them, so M must be more "
                                f"than K (got M={belief}); e.g. ppo-search-{k}-b{4 * k}")
    if m.group(4) is not None and m.group(3) is None:
        raise UnknownAgentError(f"agent {key!r}: -pP is the power of the belief weights and needs -bM before "
                                f"it, e.g. ppo-search-{k}-b{4 * k}-p{m.group(4)}")
    from .search.net_search import NetSearchAgent

    if path and not Path(path).is_file():
        raise UnknownAgentError(f"checkpoint {path!r} of {key!r} not found")
    base = _load_ppo(path or "ppo", cfg, label)
    exact = int(m.group(2)) if m.group(2) is not None else 2
    power = float(m.group(4)) if m.group(4) is not None else 0.5
    return NetSearchAgent(base, k=k, exact_tricks=exact, z=float(m.group(5) or 2.0), name=label,
                          belief=belief, belief_power=power)


def _make_rollout_search(key: str, cfg: RulesConfig, label: str) -> Agent:
    """``ppo-rollout`` / ``ppo-rollout-K`` / ``ppo-rollout-K-zZ`` / ``...:PATH.pt``: the light search
    over K worlds (default 8) whose values are rollouts of the network in every seat, overriding
    the policy's card by Z standard errors (default 0: the plain argmax of the mean values), on
    the shipped policy of the preset or a policy file (agents/search/net_search.py, ``rollouts``)."""
    spec, _, path = key.partition(":")
    m = re.fullmatch(r"ppo-rollout(?:-(\d+))?(?:-z(\d+(?:\.\d+)?))?", spec)
    if m is None or (m.group(1) is not None and int(m.group(1)) < 1):
        raise UnknownAgentError(f"unknown agent {key!r}; expected ppo-rollout, ppo-rollout-K (K >= 1), "
                                "ppo-rollout-K-zZ (Z >= 0: standard errors) or any of them with :PATH.pt")
    from .search.net_search import NetSearchAgent

    if path and not Path(path).is_file():
        raise UnknownAgentError(f"checkpoint {path!r} of {key!r} not found")
    base = _load_ppo(path or "ppo", cfg, label)
    return NetSearchAgent(base, k=int(m.group(1) or 8), top=64, z=float(m.group(2) or 0.0), name=label,
                          rollouts=True)


def make_pool_agent(name: str, preset: str | RulesConfig = "bazar", seed: int | None = None) -> Agent:
    """:func:`make_agent` for a training pool's members (``pool.baselines``), where an oracle
    policy file (``network.oracle``) is allowed: the pool plays it batched with the hidden cards."""
    return make_agent(name, preset, seed, allow_oracle=True)


def _load_ppo(path_or_name: str, cfg: RulesConfig, label: str, allow_oracle: bool = False) -> Agent:
    from .extras import require

    require("train", f"agent {label!r}")  # MissingExtraError (an ImportError) naming the extra
    from .ppo.agent import load_ppo_agent

    agent = load_ppo_agent(path_or_name, cfg)
    if getattr(getattr(agent, "policy", None), "oracle", False) and not allow_oracle:
        raise ConfigError(f"agent {label!r}: {path_or_name} is an oracle policy (network.oracle): it reads every "
                          "seat's hidden cards and cannot act from a seat's view; it plays only as a member of a "
                          "training pool (pool.baselines, named directly)")
    if not getattr(agent, "name", None):
        agent.name = label
    return agent


__all__ = ["ALIASES", "BUILTIN", "UnknownAgentError", "known_agents", "make_agent", "make_pool_agent"]
