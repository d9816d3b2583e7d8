"""The one agent protocol: ``act(view, rng) -> action id``.

An agent sees a :class:`blot_env.view.SeatView` (what its seat may know: its own cards,
public calls and cards, public declaration info) and never a :class:`blot_env.state.State`,
so it cannot read hidden cards. Randomness is explicit: the caller passes a
``numpy.random.Generator`` to every ``act`` call (no global random state).

Adapters:

* :func:`as_policy` binds an agent to a generator and gives a ``Callable[[SeatView], int]``,
  the form the env's single-agent wrapper accepts for the other seats.
* :class:`CallableAgent` wraps any ``(view, rng) -> int`` function as an agent.
* :class:`PhaseSplitAgent` lets one agent bid and another play the cards, to tell which part
  of a game an agent wins or loses (``blot-eval --agent BIDDER+PLAYER``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from blot_env.state import Phase
from blot_env.view import SeatView


@runtime_checkable
class Agent(Protocol):
    """What every agent provides. ``act`` returns an action id from ``view.legal``."""

    name: str

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        """Choose an action for ``view.seat`` (which is to act: ``view.legal`` is non-empty).

        Args:
            view: the seat's information set (no hidden cards).
            rng: the generator for any random choice; agents hold no global RNG.

        Returns:
            An action id of the preset's layout that is in ``view.legal``.
        """
        ...

    def reset(self) -> None:
        """Forget per-deal caches; called before each deal (optional for simple agents)."""
        ...


def legal_or_raise(view: SeatView) -> tuple[int, ...]:
    """The legal action ids of ``view`` (its seat is to act).

    Raises:
        ValueError: the seat is not to act (no legal actions).
    """
    if not view.legal:
        raise ValueError(f"seat {view.seat} is not to act (no legal actions)")
    return view.legal


class BaseAgent:
    """Convenience base: a ``name`` and a no-op ``reset``. Subclasses implement ``act``."""

    name: str = "agent"

    def act(self, view: SeatView, rng: np.random.Generator) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def reset(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class CallableAgent(BaseAgent):
    """An agent from a function ``fn(view, rng) -> int``."""

    def __init__(self, fn: Callable[[SeatView, np.random.Generator], int], name: str = "callable"):
        self.fn = fn
        self.name = name

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        return int(self.fn(view, rng))


class PhaseSplitAgent(BaseAgent):
    """``bidder`` makes the calls of the auction (``Phase.AUCTION``; rules.md 2.2 on bazar) and
    ``player`` every later decision: the cards and the declaration steps (rules.md 2.3-2.4).

    Each part acts on the same :class:`SeatView` with the generator the caller passes, as it
    would alone; ``reset`` resets both.

    Args:
        bidder: the agent of the auction's calls.
        player: the agent of the cards and the declaration steps.
        name: the agent's name; default ``"BIDDER+PLAYER"`` from the parts' names.
    """

    def __init__(self, bidder: Agent, player: Agent, name: str | None = None) -> None:
        self.bidder = bidder
        self.player = player
        self.name = name or f"{getattr(bidder, 'name', 'agent')}+{getattr(player, 'name', 'agent')}"

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        part = self.bidder if view.phase == Phase.AUCTION else self.player
        return int(part.act(view, rng))

    def reset(self) -> None:
        reset_agent(self.bidder)
        reset_agent(self.player)


class AgentPolicy:
    """``policy(view) -> action id``: an agent bound to its own generator (see :func:`as_policy`)."""

    policy_input = "view"
    """Tells the env's single-agent wrapper (blot_env.gym_env) to pass a SeatView."""

    def __init__(self, agent: Agent, rng: np.random.Generator):
        self.agent = agent
        self.rng = rng
        self.name = getattr(agent, "name", type(agent).__name__)

    def __call__(self, view: SeatView) -> int:
        return int(self.agent.act(view, self.rng))

    def reset(self) -> None:
        reset_agent(self.agent)


def as_policy(agent: Agent, rng: np.random.Generator | int | None = None) -> AgentPolicy:
    """Bind ``agent`` to a generator: a ``Callable[[SeatView], int]`` for the env wrappers.

    Args:
        agent: any object with ``act(view, rng)``.
        rng: a ``numpy.random.Generator``, or a seed for ``numpy.random.default_rng``.
    """
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return AgentPolicy(agent, rng)


def reset_agent(agent: object) -> None:
    """Call ``agent.reset()`` when the agent has one."""
    fn = getattr(agent, "reset", None)
    if callable(fn):
        fn()


def check_action(view: SeatView, action: int, who: str = "agent") -> int:
    """``action`` as an int if it is in ``view.legal``.

    Raises:
        ValueError: the action is not legal for this view (names the agent and the legal ids).
    """
    a = int(action)
    if a not in view.legal:
        from blot_env.actions import layout_for

        lay = layout_for(view.cfg)
        desc = lay.describe(a) if 0 <= a < lay.num_actions else str(a)
        raise ValueError(f"{who} returned {desc!r} for seat {view.seat}, not legal here; legal: "
                         f"{', '.join(lay.describe(x) for x in view.legal[:12])}")
    return a


__all__ = ["Agent", "AgentPolicy", "BaseAgent", "CallableAgent", "PhaseSplitAgent", "as_policy", "check_action",
           "reset_agent"]
