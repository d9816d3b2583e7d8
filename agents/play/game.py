"""A game at one table: agents in some seats, humans in the others, one deal or a match.

:class:`Game` is what the terminal game (``blot-play``) and the browser viewer's live tables
(``blot-view``) drive: it deals, asks the agents for their actions, takes the humans' actions
(checked by the engine, which names the rule an illegal one breaks), keeps the match score
(:mod:`blot_env.match`: totals, dealer rotation, passed-out deals redealt, tie rules) and
writes the deal or match record (docs/deal-record.md).

Each finished deal stays on the table (``deal_over``) until :meth:`Game.next_deal` is called,
so a viewer can show its score before the next one starts.

Levels (the bazar app's difficulty names, rules text 004): ``easy`` -> ``rules``, ``medium`` ->
``rules-medium``, ``hard`` -> ``pimc-64``, ``insane`` -> ``pimc-insane``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blot_env.actions import layout_for
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions
from blot_env.errors import ConfigError
from blot_env.match import MatchState, after_deal, new_match
from blot_env.record import MATCH_FORMAT, make_record, rules_to_record
from blot_env.rules_config import RulesConfig
from blot_env.state import State
from blot_env.table import table_snapshot
from blot_env.view import seat_view

from ..base import Agent, reset_agent
from ..files import write_json_atomic
from ..registry import make_agent

LEVELS = {"easy": "rules", "medium": "rules-medium", "hard": "pimc-64", "insane": "pimc-insane"}
"""The app's four levels and the registry names they play as."""
HUMAN = "human"
"""The player name of a human seat."""


def agents_for(cfg: RulesConfig, humans: Sequence[int], names: Sequence[str] | str) -> list[Agent | None]:
    """One agent per seat (``None`` for the human seats) from registry names or levels.

    Args:
        cfg: the rules.
        humans: the human seats.
        names: one name for every other seat, or one per other seat in seat order; a name
            is a level (``easy``..``insane``) or anything :func:`agents.registry.make_agent`
            accepts (``rules``, ``pimc-64``, a ``.pt`` checkpoint path, ...).

    Raises:
        ConfigError: a bad seat, or the wrong number of names.
        agents.registry.UnknownAgentError: an unknown name.
    """
    n = cfg.num_players
    for h in humans:
        if not isinstance(h, int) or not 0 <= h < n:
            raise ConfigError(f"human seat must be 0..{n - 1} for preset {cfg.preset!r}, got {h!r}")
    others = [s for s in range(n) if s not in humans]
    if isinstance(names, str):
        names = [names] * len(others)
    if len(names) == 1:
        names = list(names) * len(others)
    if len(names) != len(others):
        raise ConfigError(f"expected 1 or {len(others)} agent names for seats {others}, got {len(names)}: "
                          f"{', '.join(names)}")
    out: list[Agent | None] = [None] * n
    for seat, name in zip(others, names):
        out[seat] = make_agent(LEVELS.get(name, name), cfg)
    return out


class Game:
    """One table: ``agents[seat]`` plays each seat, ``None`` marks a human seat.

    Args:
        cfg: the rules; ``cfg.target`` is the match target.
        agents: an agent or ``None`` (human) per seat.
        seed: seeds the deals and the agents' generators (one ``SeedSequence([seed, deal, seat])``
            per agent and deal).
        match: play deals to ``cfg.target`` (``True``) or one deal (``False``).
        dealer: the first dealer (default: drawn from the seed).
        names: a name per seat for the records and the table (default: agent names, ``human``).

    Raises:
        ConfigError: ``agents`` has the wrong length.
    """

    def __init__(self, cfg: RulesConfig, agents: Sequence[Agent | None], seed: int = 0, match: bool = False,
                 dealer: int | None = None, names: Sequence[str] | None = None):
        n = cfg.num_players
        if len(agents) != n:
            raise ConfigError(f"expected {n} seats of agents for preset {cfg.preset!r}, got {len(agents)}")
        self.cfg = cfg
        self.agents = list(agents)
        self.layout = layout_for(cfg)
        self.seed = int(seed)
        self.names = list(names) if names is not None else [
            HUMAN if a is None else str(getattr(a, "name", type(a).__name__)) for a in agents]
        self._deal_rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0xDEA1]))
        first = int(self._deal_rng.integers(n)) if dealer is None else int(dealer)
        self.match: MatchState | None = new_match(cfg, first) if match else None
        self.records: list[dict] = []
        self.deal_index = -1
        self.state: State = None  # type: ignore[assignment]  # set by _start
        self.last_action: tuple[int, int] | None = None
        self._start(first)

    # ------------------------------------------------------------------ dealing
    def _start(self, dealer: int) -> None:
        self.deal_index += 1
        self.state = deal_random(self.cfg, self._deal_rng, dealer)
        self.last_action = None
        self._rngs = [np.random.default_rng(np.random.SeedSequence([self.seed, self.deal_index, s]))
                      for s in range(self.cfg.num_players)]
        for a in self.agents:
            if a is not None:
                reset_agent(a)

    @property
    def deal_over(self) -> bool:
        """The current deal is finished (its score is in the match totals)."""
        return is_terminal(self.state)

    @property
    def over(self) -> bool:
        """Nothing more to play: the one deal is finished, or the match has a winner."""
        return self.deal_over and (self.match is None or self.match.over)

    def next_deal(self) -> None:
        """Deal the next deal of the match (the dealer rotates; a passed-out deal is redealt
        by the next dealer, rules.md 2.1). Raises ValueError when nothing is left to play."""
        if not self.deal_over or self.over:
            raise ValueError("the deal is not over" if not self.deal_over else "the game is over")
        self._start(self.match.dealer)

    # ------------------------------------------------------------------ acting
    @property
    def to_act(self) -> int:
        """The seat to act, -1 when the deal is over."""
        return current_seat(self.state)

    def human_to_act(self) -> bool:
        return not self.deal_over and self.agents[self.to_act] is None

    def legal(self) -> list[int]:
        """Legal action ids of the seat to act."""
        return legal_actions(self.state)

    def act(self, action: int) -> None:
        """The seat to act takes ``action`` (an id of the preset's layout).

        Raises:
            IllegalActionError: the action is not legal here (the engine's message names the
                action, the seat, the rule and the legal actions).
        """
        seat = self.to_act
        self.state = apply_action(self.state, action)
        self.last_action = (seat, int(action))
        if self.deal_over:
            self._finish_deal()

    def bot_step(self) -> tuple[int, int]:
        """The agent of the seat to act chooses and takes its action; returns (seat, action).

        Raises:
            ValueError: the deal is over, or a human is to act.
        """
        if self.deal_over:
            raise ValueError("the deal is over")
        seat = self.to_act
        agent = self.agents[seat]
        if agent is None:
            raise ValueError(f"seat {seat} is a human seat")
        action = int(agent.act(seat_view(self.state, seat), self._rngs[seat]))
        self.act(action)
        return seat, action

    def _finish_deal(self) -> None:
        rec = make_record(self.state)
        rec["players"] = list(self.names)
        self.records.append(rec)
        if self.match is not None:
            self.match = after_deal(self.match, deal_result(self.state))

    # ------------------------------------------------------------------ views
    def snapshot(self, observer: int | None) -> dict[str, Any]:
        """The table seen by ``observer`` (``None``: every hand), see :mod:`blot_env.table`;
        the match totals include the current deal once it is over. Adds ``deal_index`` and
        ``game_over``."""
        snap = table_snapshot(self.state, observer, self.match, self.names, self.last_action)
        snap["deal_index"] = self.deal_index
        snap["game_over"] = self.over
        if self.match is not None and self.match.over:
            snap["match"]["winner"] = self.match.winner
        return snap

    def record(self) -> dict:
        """The finished game as a record: the deal record (one deal), else a ``blot-match/1``
        record of the finished deals. Each deal record has the optional ``"players"`` field."""
        if self.match is None:
            if self.records:
                return self.records[-1]
            return make_record(self.state) | {"players": list(self.names)}
        m = self.match
        return {"format": MATCH_FORMAT, "preset": self.cfg.preset, "rules": rules_to_record(self.cfg),
                "deals": list(self.records), "totals": list(m.totals), "winner": m.winner if m.over else None}

    def save(self, path: str | Path) -> Path:
        """Write :meth:`record` as JSON to ``path``, whole or not at all (folders created). Returns the path."""
        return write_json_atomic(path, self.record())


def board_records(deal: State, first: Agent, second: Agent, seed: int = 0) -> list[dict]:
    """A duplicate board (docs/evaluation.md): ``deal`` played at two tables, ``first`` in the
    even seats and ``second`` in the odd ones at table 1, swapped at table 2 (2 players: seat
    0, then seat 1). Returns the two deal records, each with its ``"players"`` field; the
    seats' generators are ``SeedSequence([seed, seat])`` at both tables.

    Raises:
        IllegalActionError: an agent returned an illegal action.
    """
    n = deal.cfg.num_players
    out = []
    for table in (0, 1):
        seats = [first if (s + table) % 2 == 0 else second for s in range(n)]
        for agent in {id(a): a for a in seats}.values():
            reset_agent(agent)
        rngs = [np.random.default_rng(np.random.SeedSequence([seed, s])) for s in range(n)]
        state = deal
        while not is_terminal(state):
            seat = current_seat(state)
            state = apply_action(state, int(seats[seat].act(seat_view(state, seat), rngs[seat])))
        out.append(make_record(state) | {"players": [str(getattr(a, "name", type(a).__name__)) for a in seats]})
    return out


__all__ = ["HUMAN", "LEVELS", "Game", "agents_for", "board_records"]
