"""The PettingZoo AEC environment of every blot preset (bookkeeping only: the live deal sits
behind the deal interface of :mod:`blot_env.deal`, stepped by the compiled engine or the
reference engine, ``engine=``).

Quick start::

    import blot_env
    env = blot_env.env(preset="bazar")            # wrapped (illegal moves terminate)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            action = None
        else:
            action = int(np.flatnonzero(obs["action_mask"])[0])
        env.step(action)

See :class:`raw_env` for the reward model, the episode definition and the version history,
and docs/env.md for the spaces and the observation layouts.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .actions import layout_for
from .deal import ENGINES, make_deal
from .engine import deal_random
from .errors import ConfigError
from .match import MatchState, after_deal, new_match
from .observation import KINDS, ObservationEncoder
from .record import initial_state, make_record, rules_to_record
from .render import render_text
from .rules_config import PRESETS, RulesConfig, make_rules, with_overrides
from .scoring import DealResult, side_score_difference
from .state import State
from .view import seat_view
from .wrappers import classic_stack

#: behaviour version of the env; bump it (and the ids) when observations, rewards or episodes change
ENV_VERSION = 0
EPISODES = ("deal", "match")
RESET_OPTIONS = ("dealer", "deal")


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def _check_seat(name: str, value: Any, n: int) -> None:
    """``value`` is a seat ``0..n-1`` (an int, not a bool). Raises ConfigError naming ``name``."""
    if not _is_int(value) or not 0 <= value < n:
        raise ConfigError(f"{name} must be a seat 0..{n - 1}, got {value!r}")


def _check_number(name: str, value: Any) -> None:
    """``value`` is a finite real number (not a bool). Raises ConfigError naming ``name``."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)
    if not ok or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool | np.bool_):
        raise ConfigError(f"{name} must be True or False, got {value!r}")


def env_id(preset: str, version: int = ENV_VERSION) -> str:
    """The versioned env id of a preset: ``"bazar"`` -> ``"bazar_blot_v0"``,
    ``"duel-app"`` -> ``"duel_app_blot_v0"``."""
    return f"{preset.replace('-', '_')}_blot_v{version}"


def preset_of_env_id(eid: str) -> str:
    """Inverse of :func:`env_id` (accepts a ``blot/`` namespace and ``-v0``). Raises ConfigError."""
    name = eid.split("/", 1)[-1].replace("-v", "_v")
    for p in PRESETS:
        if name in (env_id(p), env_id(p).rsplit("_v", 1)[0]):
            return p
    raise ConfigError(f"unknown env id {eid!r}; known: {', '.join(env_id(p) for p in PRESETS)}")


class raw_env(AECEnv):
    """Blot as a PettingZoo AEC env: agents ``player_0..player_{n-1}`` sit at seats ``0..n-1``.

    Args:
        preset: a preset id of ``blot_env.PRESETS`` (rules.md "Presets").
        episode: ``"deal"`` (one deal per episode) or ``"match"`` (deals to the target).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the table as text),
            ``"rgb_array"`` (``uint8[H, W, 3]``, :mod:`blot_env.render_image`; needs Pillow, the
            ``render`` extra) or ``"human"`` (that picture in a window, else the text on stdout).
        observation_kind: ``"observation"``, ``"information_state"`` or ``"observation_voids"`` (see
            :mod:`blot_env.observation`).
        reward_scale: multiplies score-sheet rewards (deal mode, and per-deal rewards).
        deal_rewards: match mode only: also reward every deal (score difference x scale).
        dealer: fixed dealer seat of the (first) deal; ``None``: drawn from the env's RNG at reset.
        max_deals: match mode: truncate the episode after this many deals (a guard; rarely hit).
        render_seat: seat whose hand ``render()`` shows (``None``: the seat to act).
        render_all_hands: ``render()`` also shows every hand (debugging; shows hidden cards).
        rules: a ready :class:`RulesConfig` (then ``preset`` is ignored; overrides apply on top of it).
        engine: what steps the deal (:mod:`blot_env.deal`): ``"compiled"`` (one compiled row,
            :class:`blot_env.batched.deal_row.DealRow`), ``"reference"`` (the readable rules
            engine), or ``"auto"`` (default): compiled when the rules fit in a row, reference
            otherwise (knob overrides whose auction or stock may outgrow a row). Both behave
            identically; ``self.engine`` says which one runs.
        **rules_overrides: knobs of :class:`RulesConfig` set on top of the preset (or of ``rules``).

    Spaces:
        action: ``Discrete(A)``, the preset's flat layout (:mod:`blot_env.actions`); ids map
        one-to-one to the action strings of docs/deal-record.md (``describe``/``parse``).
        observation: ``Dict(observation=Box(0, hi, (D,), float32), action_mask=Box(0, 1, (A,), int8))``;
        the mask is all zeros for every agent that is not to act (and after the end).

    Reward model:
        ``episode="deal"``: at the end of the deal each agent receives
        ``reward_scale * (own side's deal score - opponents' deal score)`` in score-sheet units
        (table points for the Armenian presets, raw points for belote; rules.md 2.5). Partners
        get the same reward; rewards sum to zero. A passed-out deal (every seat passed,
        rules.md 2.1) **ends the episode with reward 0** and a result whose contract is null,
        as in OpenSpiel's and Pgx's bridge: the redeal belongs to the match, not to the deal.
        ``episode="match"``: deals are played to the target (rules.md 2.6/2.8 via
        :mod:`blot_env.match`: totals summed, dealer rotating, passed-out deals redealt by the
        next dealer, both-cross and exact-tie rules by ``tie_at_target``, optional
        ``instant_match_end``). At the end the winning side's agents receive +1 and the others
        -1; with ``deal_rewards=True`` every deal also pays its scaled score difference.
        Episodes longer than ``max_deals`` deals are truncated (reward 0).

    Episode and agents:
        the agent to act is ``agent_selection``; there are no simultaneous moves. At the end
        every agent is terminated and must step ``None`` (PettingZoo's dead-step protocol).
        ``infos[agent]`` holds ``"deal_result"`` (the record's result JSON,
        docs/deal-record.md) in the step that ends a deal, plus ``"match_totals"`` and
        ``"match_winner"`` in match mode.

    Errors:
        ``step`` with an illegal action raises :class:`blot_env.errors.IllegalActionError`
        naming the action, the seat, the rule (rules.md section) and the legal actions.
        Use :func:`env` for PettingZoo's wrapper stack, which turns it into a terminal penalty.
        A bad argument (an unknown preset, knob, episode, kind, render mode or engine; a
        ``dealer`` or ``render_seat`` that is no seat; a ``reward_scale`` that is no finite
        number; a ``max_deals`` below 1; a flag that is no bool) raises
        :class:`blot_env.errors.ConfigError` naming it, as do bad ``reset`` seeds and options.

    Other API:
        ``describe(id)``/``parse(str)`` (action strings), ``record()`` (the deal record so
        far), ``match_record()``, ``state()`` (full-information ``float32`` vector, see
        ``state_space``), ``game_state`` (the engine's immutable :class:`State`),
        ``get_state()``/``set_state()`` and ``copy.deepcopy(env)`` (clone mid-episode).
        ``reset(seed=..., options={"dealer": d, "deal": {"dealer", "hands", "stock"}})``.
        ``engine`` (``"compiled"`` or ``"reference"``) and ``deal`` (the live
        :class:`blot_env.deal.Deal`; read it, do not step it).
        No global RNG is used: ``reset(seed)`` fixes everything.

    Implementation:
        the env keeps agents, rewards, terminations, the match and the records; the live deal
        is a :class:`blot_env.deal.Deal` (``self.deal``). ``engine.deal_random`` deals (the
        env's RNG draws do not depend on the engine) and the deal object steps, observes and
        scores. With the compiled engine the deal is one row of the batched engine's layout,
        stepped by one compiled call per action; the reference engine explains illegal
        actions, and ``game_state`` is built from the row when first asked for after a step.
        Records are written when asked for. tests/test_env_fast.py checks that both engines
        behave identically.

    Version history:
        ``*_blot_v0`` (ENV_VERSION 0): first release; later gained ``observation_kind=
        "observation_voids"`` (additive: the other kinds, rewards and episodes are unchanged).
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2,
                                "name": "bazar_blot_v0", "is_parallelizable": True}

    def __init__(self, preset: str = "bazar", episode: str = "deal", render_mode: str | None = None,
                 observation_kind: str = "observation", reward_scale: float = 1.0, deal_rewards: bool = False,
                 dealer: int | None = None, max_deals: int = 1000, render_seat: int | None = None,
                 render_all_hands: bool = False, rules: RulesConfig | None = None, engine: str = "auto",
                 **rules_overrides: Any):
        super().__init__()
        if rules is not None:
            if not isinstance(rules, RulesConfig):
                raise ConfigError(f"rules must be a RulesConfig, got {type(rules).__name__}")
            cfg = with_overrides(rules, rules_overrides) if rules_overrides else rules
        else:
            cfg = make_rules(preset, **rules_overrides)
        if episode not in EPISODES:
            raise ConfigError(f"episode must be one of {EPISODES}, got {episode!r}")
        if observation_kind not in KINDS:
            raise ConfigError(f"observation_kind must be one of {KINDS}, got {observation_kind!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"render_mode must be None or one of {self.metadata['render_modes']}, "
                              f"got {render_mode!r}")
        if engine not in ENGINES:
            raise ConfigError(f"engine must be one of {ENGINES}, got {engine!r}")
        n = cfg.num_players
        if dealer is not None:
            _check_seat("dealer", dealer, n)
        if render_seat is not None:
            _check_seat("render_seat", render_seat, n)
        _check_number("reward_scale", reward_scale)
        _check_flag("deal_rewards", deal_rewards)
        _check_flag("render_all_hands", render_all_hands)
        if not _is_int(max_deals) or max_deals < 1:
            raise ConfigError(f"max_deals must be an integer of at least 1, got {max_deals!r}")
        self.cfg = cfg
        self.episode = episode
        self.render_mode = render_mode
        self.observation_kind = observation_kind
        self.reward_scale = float(reward_scale)
        self.deal_rewards = bool(deal_rewards)
        self.fixed_dealer = None if dealer is None else int(dealer)
        self.max_deals = int(max_deals)
        self.render_seat = None if render_seat is None else int(render_seat)
        self.render_all_hands = bool(render_all_hands)
        self._window = None  # render_mode="human": the window, opened on the first render()
        self.metadata = {**type(self).metadata, "name": env_id(cfg.preset)}
        self.layout = layout_for(cfg)
        self.encoder = ObservationEncoder(cfg, observation_kind, match=episode == "match")
        self._state_encoder = ObservationEncoder(cfg, "information_state", match=episode == "match")
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        A = self.layout.num_actions
        D = self.encoder.size
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, self.encoder.upper_bounds(), (D,), np.float32),
            "action_mask": spaces.Box(0, 1, (A,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        hi = np.concatenate([self._state_encoder.upper_bounds(), np.ones(4 * n * 32 + 32, np.float32)])
        self.state_space = spaces.Box(0.0, hi, (hi.size,), np.float32)
        self._rng: np.random.Generator | None = None
        self._match: MatchState | None = None
        self._records: list = []  # dicts, or (deal start, actions, result) tuples made into dicts on demand
        self._obs_cache: dict[str, dict] = {}
        self._agent_of_seat = tuple(self.possible_agents)
        #: the live deal (:class:`blot_env.deal.Deal`): compiled row or reference engine
        self.deal = make_deal(cfg, observation_kind, match=episode == "match", engine=engine)
        #: ``"compiled"`` or ``"reference"``: the engine that steps the deal
        self.engine = self.deal.engine
        self._deal0: State | None = None  # the current deal before its first action
        self._dirty = False  # rewards or infos hold values of a deal's end

    def seat_of(self, agent: str) -> int:
        """The seat of an agent name (``"player_2"`` -> 2)."""
        return self._seat_of[agent]

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``. Raises KeyError naming the agents for an unknown one."""
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``. Raises KeyError naming the agents for an unknown one."""
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def _unknown_agent(self, agent: Any) -> KeyError:
        return KeyError(f"unknown agent {agent!r}; this env's agents are {', '.join(self.possible_agents)}")

    # ------------------------------------------------------------------ actions
    def describe(self, action: int) -> str:
        """The action string of an id (docs/deal-record.md). Raises UnknownActionError."""
        return self.layout.describe(action)

    def parse(self, text: str) -> int:
        """The id of an action string. Raises UnknownActionError."""
        return self.layout.parse(text)

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode. ``seed`` seeds the env's own ``numpy.random.Generator``.

        Options: ``"dealer"`` (seat of the first dealer), ``"deal"`` (a deal-suite entry
        ``{"dealer", "hands", "stock"}`` as written by ``record.deal_fields``: play those cards).

        Raises:
            ConfigError: a seed that is no non-negative integer, options that are no dict, a
                ``"dealer"`` that is no seat or a ``"deal"`` that is no dict.
            RecordError: a ``"deal"`` whose fields are missing or malformed (the message names them).
        """
        if seed is not None or self._rng is None:
            if isinstance(seed, bool | np.bool_):
                raise ConfigError(f"seed must be None or a non-negative integer, got {seed!r}")
            try:
                self._rng = np.random.default_rng(seed)
            except (TypeError, ValueError):
                raise ConfigError(f"seed must be None or a non-negative integer, got {seed!r}") from None
        options = self._check_options(options)
        n = self.cfg.num_players
        deal = options.get("deal")
        if deal is not None:
            dealer = deal.get("dealer")
            _check_seat('options["deal"]["dealer"]', dealer, n)
            dealer = int(dealer)
        elif options.get("dealer") is not None:
            _check_seat('options["dealer"]', options["dealer"], n)
            dealer = int(options["dealer"])
        elif self.fixed_dealer is not None:
            dealer = self.fixed_dealer
        else:
            dealer = int(self._rng.integers(n))
        self._match = new_match(self.cfg, dealer) if self.episode == "match" else None
        self._records = []
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._dirty = False
        self.deal.set_match(None)
        self._start_deal(dealer, deal)

    @staticmethod
    def _check_options(options: Any) -> Mapping:
        """The reset options as a mapping ({} for None). Raises ConfigError on a non-mapping or a
        ``"deal"`` that is no mapping. Other keys are ignored (PettingZoo's ``api_test`` passes one)."""
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"reset options must be a dict with the keys {list(RESET_OPTIONS)} (or None), "
                              f"got {type(options).__name__}")
        deal = options.get("deal")
        if deal is not None and not isinstance(deal, Mapping):
            raise ConfigError('options["deal"] must be a dict {"dealer", "hands", "stock"} (a deal-suite entry), '
                              f"got {type(deal).__name__}")
        return options

    def _start_deal(self, dealer: int, deal: dict | None = None) -> None:
        if deal is not None:
            rules = rules_to_record(self.cfg)
            hands = deal.get("hands")
            state = initial_state({"format": "blot-record/1", "preset": self.cfg.preset, "rules": rules,
                                   "dealer": dealer, "hands": list(hands) if isinstance(hands, list | tuple) else hands,
                                   "stock": deal.get("stock", ""), "actions": []})
        else:
            state = deal_random(self.cfg, self._rng, dealer)
        self._deal0 = state
        self._obs_cache = {}
        self.agent_selection = self._agent_of_seat[self.deal.start(state)]

    def step(self, action: int | None) -> None:
        """The agent to act takes ``action`` (an id of the layout; ``None`` for a finished agent).

        Raises:
            IllegalActionError: the action is not legal here (message: action, seat, rule, legal ones).
            RuntimeError: the episode is over and every agent has been removed, or ``reset`` was
                never called (call ``reset``).
        """
        try:
            agent = self.agent_selection
        except AttributeError:
            raise RuntimeError("step() before reset(): call reset() first") from None
        if agent not in self.terminations:
            raise RuntimeError("step() after the episode ended: every agent is done; call reset() first")
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        return self._step_live(agent, action)

    def _step_live(self, agent: str, action: int | None) -> None:
        """``step`` of ``agent``, the agent to act, which is live (the caller checked both)."""
        seat = self.deal.step(action)  # raises IllegalActionError; the deal is then untouched
        self._obs_cache = {}
        self._cumulative_rewards[agent] = 0.0
        if self._dirty:
            self._clear_step()
        if seat >= 0:
            self.agent_selection = self._agent_of_seat[seat]
            return None  # every reward is 0: nothing to accumulate
        deal = self.deal
        result = deal.result()
        self._end_deal(result, (self._deal0, tuple(deal.history), result))
        self._accumulate_rewards()
        return None

    def _was_dead_step(self, action: None) -> None:
        """PettingZoo's ``AECEnv._was_dead_step`` (the same effect, in fewer lookups): remove the
        done agent to act, select the next done agent (else the one ``_skip_agent_selection``
        kept), and zero the rewards. Raises ValueError for an action other than None."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        terminations, truncations, rewards = self.terminations, self.truncations, self.rewards
        assert terminations[agent] or truncations[agent], "an agent that was not dead as attempted to be removed"
        del terminations[agent]
        del truncations[agent]
        del rewards[agent]
        del self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        for a in agents:
            if terminations[a] or truncations[a]:
                if getattr(self, "_skip_agent_selection", None) is None:
                    self._skip_agent_selection = agent
                self.agent_selection = a
                break
        else:
            skip = getattr(self, "_skip_agent_selection", None)
            if skip is not None:
                self.agent_selection = skip
            self._skip_agent_selection = None
        for a in rewards:
            rewards[a] = 0

    def _clear_step(self) -> None:
        """Zero the rewards and empty the infos that the end of a deal filled."""
        for a in self.rewards:
            self.rewards[a] = 0.0
        for a in self.infos:
            if self.infos[a]:
                self.infos[a] = {}
        self._dirty = False

    def _end_deal(self, result: DealResult, record: dict | tuple) -> None:
        rj = result.to_json(self.layout.describe)
        self._records.append(record)
        self._dirty = True
        scale = self.reward_scale
        for a in self.agents:
            self.infos[a] = {"deal_result": rj}
        if self._match is None:
            for a in self.agents:
                self.rewards[a] = side_score_difference(result.score, self._seat_of[a]) * scale
            self.terminations = dict.fromkeys(self.agents, True)
            return
        m = self._match = after_deal(self._match, result)
        self.deal.set_match(m.totals)
        for a in self.agents:
            seat = self._seat_of[a]
            r = side_score_difference(result.score, seat) * scale if self.deal_rewards else 0.0
            if m.over:
                r += 1.0 if seat % 2 == m.winner else -1.0
            self.rewards[a] = r
            self.infos[a].update(match_totals=list(m.totals), match_winner=m.winner, deal_index=m.num_deals - 1)
        if m.over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif m.num_deals >= self.max_deals:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            self._start_deal(m.dealer)

    # ------------------------------------------------------------------ observations
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[D], "action_mask": int8[A]}`` of ``agent`` (any agent, any time).

        The returned arrays are cached until the next ``step`` (each step makes new ones, so
        arrays kept from earlier steps stay as they were); do not modify them in place.
        """
        cached = self._obs_cache.get(agent)
        if cached is not None:
            return cached
        seat = self._seat_of.get(agent)
        if seat is None:
            raise self._unknown_agent(agent)
        if self._deal0 is None:
            raise RuntimeError("observe() before reset(): call reset() first")
        live = not (self.terminations.get(agent, True) or self.truncations.get(agent, True))
        obs, mask = self.deal.observe(seat, live)
        out = self._obs_cache[agent] = {"observation": obs, "action_mask": mask}
        return out

    def state(self) -> np.ndarray:
        """Full-information ``float32`` vector (``state_space``): seat 0's information-state
        encoding, then (absolute seats) every seat's current cards, cards at the start of play
        (0 during the auction), claimed cards and show-set cards (``n x 32`` each), and the
        undealt stock (32)."""
        s = self.game_state
        n = self.cfg.num_players
        base = self._state_encoder.encode(seat_view(s, 0), self._match.totals if self._match else None)
        masks = list(s.hands) + list(s.play_hands or (0,) * n)
        d = s.decl
        masks += [d.claim[i].mask if d is not None and d.claim[i] is not None else 0 for i in range(n)]
        masks += [sum(c.mask for c in d.show_set[i]) if d is not None else 0 for i in range(n)]
        masks.append(sum(1 << c for c in s.stock))
        bits = np.unpackbits(np.array(masks, dtype="<u4").view(np.uint8), bitorder="little").astype(np.float32)
        return np.concatenate([base, bits])

    @property
    def game_state(self) -> State:
        """The engine's immutable deal state (full information; do not give it to agents).

        With the compiled engine it is built on first access after a step (``convert.to_state``
        of the row, with the deal's actions as its history), then cached until the next step.
        """
        return self.deal.state() if self._deal0 is not None else None

    @property
    def match_state(self) -> MatchState | None:
        return self._match

    # ------------------------------------------------------------------ records
    def record(self) -> dict:
        """The deal record of the current deal so far (docs/deal-record.md, ``make_record``)."""
        return self._make_record(self._deal0, self.deal.history, self.deal.result())

    def _make_record(self, deal0: State, actions, result: DealResult | None) -> dict:
        """``make_record`` of the deal ``deal0`` after ``actions``, with ``result`` if it is over
        (the same dict, without replaying the actions)."""
        rec = make_record(replace(deal0, history=tuple(actions)), include_result=False)
        if result is not None:
            rec["result"] = result.to_json(self.layout.describe)
        return rec

    def match_record(self) -> dict:
        """``blot-match/1`` record of the finished deals (match mode; deal mode: the finished deal)."""
        recs = self._records
        for i, r in enumerate(recs):
            if isinstance(r, tuple):
                recs[i] = self._make_record(*r)
        rules = dict(recs[0]["rules"]) if recs else {}
        totals = list(self._match.totals) if self._match else None
        winner = self._match.winner if self._match else None
        return {"format": "blot-match/1", "preset": self.cfg.preset, "rules": rules,
                "deals": list(recs), "totals": totals, "winner": winner}

    # ------------------------------------------------------------------ clone
    def get_state(self) -> dict:
        """A snapshot of everything that evolves (the deal, RNG state, bookkeeping)."""
        snap = {
            "deal": self.deal.snapshot(), "deal_start": self._deal0, "match": self._match,
            "rng": copy.deepcopy(self._rng.bit_generator.state) if self._rng is not None else None,
            "agents": list(self.agents), "rewards": dict(self.rewards),
            "cumulative_rewards": dict(self._cumulative_rewards), "terminations": dict(self.terminations),
            "truncations": dict(self.truncations), "infos": copy.deepcopy(self.infos),
            "agent_selection": self.agent_selection,
            "skip_agent_selection": getattr(self, "_skip_agent_selection", None),
            "records": list(self._records),
        }
        return snap

    def set_state(self, snap: dict) -> None:
        """Restore a :meth:`get_state` snapshot (of an env with the same rules and options,
        either engine)."""
        self._match = snap["match"]
        if snap["rng"] is not None:
            self._rng = np.random.default_rng()
            self._rng.bit_generator.state = copy.deepcopy(snap["rng"])
        self.agents = list(snap["agents"])
        self.rewards = dict(snap["rewards"])
        self._cumulative_rewards = dict(snap["cumulative_rewards"])
        self.terminations = dict(snap["terminations"])
        self.truncations = dict(snap["truncations"])
        self.infos = copy.deepcopy(snap["infos"])
        self.agent_selection = snap["agent_selection"]
        self._skip_agent_selection = snap["skip_agent_selection"]
        self._records = list(snap["records"])
        self._obs_cache = {}
        self._dirty = True
        self._deal0 = snap["deal_start"]
        self.deal.set_match(self._match.totals if self._match is not None else None)
        self.deal.restore(snap["deal"])

    def __deepcopy__(self, memo: dict) -> raw_env:
        new = copy.copy(self)  # shares the immutable config, layout and encoders
        new.deal = self.deal.copy()
        new._obs_cache = {}
        if self._deal0 is not None:
            new.set_state(self.get_state())
        return new

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the table as text (:func:`blot_env.render.render_text`); ``"rgb_array"``:
        the picture, ``uint8[H, W, 3]``; ``"human"``: that picture in a window, returns None
        (:mod:`blot_env.render_image`)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode")
            return None
        text = None
        if self.render_mode != "rgb_array":
            text = render_text(self.game_state, self.render_seat, self.render_all_hands,
                               self._match.totals if self._match else None)
            if self.render_mode == "ansi":
                return text
        from . import render_image

        frame = render_image.render_state(self.game_state, self.render_seat, self.render_all_hands, self._match)
        if self.render_mode == "rgb_array":
            return frame
        self._window = self._window or render_image.HumanWindow(self.metadata["name"])
        self._window.show(frame, text)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None


def env(preset: str = "bazar", episode: str = "deal", render_mode: str | None = None,
        illegal_reward: float | None = -1.0, **kwargs: Any) -> AECEnv:
    """The wrapped env: PettingZoo classic's stack around :class:`raw_env`.

    ``TerminateIllegalWrapper(illegal_reward)`` (an illegal move ends the episode, the mover
    gets ``illegal_reward``, everyone else 0; ``illegal_reward=None`` leaves it out so the raw
    env raises IllegalActionError), ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``
    (the subclasses of :mod:`blot_env.wrappers`, which behave as PettingZoo's and only take
    shorter paths: direct attribute access, and ``last``/``step`` of the common cases done by
    the outer wrapper).
    Other keyword arguments go to :class:`raw_env`.

    Raises:
        ConfigError: an ``illegal_reward`` that is neither None nor a finite number, or a bad
            argument of :class:`raw_env`.
    """
    if illegal_reward is not None:
        _check_number("illegal_reward", illegal_reward)
    return classic_stack(raw_env(preset=preset, episode=episode, render_mode=render_mode, **kwargs),
                         illegal_reward)


def parallel_env(preset: str = "bazar", **kwargs: Any):
    """The env as a PettingZoo ``ParallelEnv`` (``turn_based_aec_to_parallel(env(...))``)."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    return turn_based_aec_to_parallel(env(preset=preset, **kwargs))


def make(eid: str, **kwargs: Any) -> AECEnv:
    """``blot_env.make("bazar_blot_v0", episode="match")``: the wrapped env of a versioned id
    (``blot/`` prefix, ``-v0`` and an omitted version are accepted).

    Raises:
        ConfigError: unknown id, or an id of another version.
    """
    return env(preset=preset_of_env_id(eid), **kwargs)


def _entry(preset: str, parallel: bool = False):
    def make_env(**kwargs: Any):
        return parallel_env(preset=preset, **kwargs) if parallel else env(preset=preset, **kwargs)

    return make_env


def register_envs() -> list[str]:
    """Register ``blot/<preset>_blot_v0`` for every preset in PettingZoo's AEC and parallel registries.

    ``pettingzoo.make("aec", "blot/bazar_blot_v0")``. Returns the ids registered.
    """
    import warnings

    import pettingzoo

    if not hasattr(pettingzoo, "register"):
        return []
    ids = []
    for p in PRESETS:
        eid = f"blot/{env_id(p)}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pettingzoo.register("aec", eid, entry_point=_entry(p))
            pettingzoo.register("parallel", eid, entry_point=_entry(p, parallel=True))
        ids.append(eid)
    return ids


__all__ = ["ENV_VERSION", "env", "env_id", "make", "parallel_env", "raw_env", "register_envs"]

