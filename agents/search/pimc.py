"""PIMC agents: ``pimc-K`` (L3 "Hard") and ``pimc-insane`` (L4), docs/evaluation.md.

Perfect-information Monte Carlo: sample worlds consistent with the seat's view
(:func:`agents.search.sampler.sample_worlds`), solve each with the double-dummy solver on the
deal-score objective (:mod:`agents.search.solver`), and take the action of best (weighted)
mean score difference for the seat's side.

* **Cards**: ``K`` worlds; each legal card gets the solver's exact value in each world; the
  card with the highest mean wins (ties: the lowest card id). ``time_budget`` (seconds per
  decision) stops solving worlds once spent (at least one world is always solved).
  With ``stop_z`` (adaptive early stopping) the worlds are drawn and solved in
  batches (``min_worlds``, then ``stop_every`` at a time, at most ``K``; the same worlds, in
  the same order, as one draw of ``K``) and the decision stops at a batch's end once every
  other card is either *separated* from the leader (the weighted mean of the leader's value
  minus the card's, paired per world, exceeds ``stop_z`` standard errors less ``stop_tol``
  points, the error from the weighted spread over the effective number of worlds
  ``(sum w)^2 / sum w^2``) or *equivalent* to it (:func:`equivalent_cards`: same suit and
  points, nothing left in play between them but the seat's own such cards, so the same value
  in every world; the lowest card id among them is played, as with the full ``K``). Cards
  that only happened to score the same in the worlds so far are not equivalent: over 400
  bazar positions they were most of the early stops that chose another card than ``K = 256``.
* **Bazar / belote auction, contra, recontra** (Monte-Carlo bidding): ``bid_worlds``
  completions of the hand; for each candidate strain (the two best by the L1 estimate plus
  the standing strain when it is the partner's) and each world, every level, kaput, contra
  and recontra of that strain is scored with its leaf table (combinations counted
  automatically, rules.md 2.8) at the double-dummy outcome code of the first lead, read
  through :class:`~agents.search.solver.CodeBounds` (null-window searches only as far as
  the tables asked about need). A call other than pass must gain, on average over the
  worlds, ``margin`` table points over passing plus ``z`` standard errors of that mean gain
  (the gain per world is paired with passing in the same world); among the calls that clear
  it, the largest mean gain is chosen. The worlds are drawn at the seat's first call of the
  auction and their solves kept for its later calls.
* **2-player trump choices** (take / name) use the L1 rule agent's choice.
* **Declarations**: the solver's fixed policy (announce the highest class held, plain
  height, reveal, show), so that the agent plays as its solver assumes.
* ``pimc-insane`` (L4): ``K = 256`` (its cards stopped early, ``registry.INSANE_STOP``;
  ``pimc-insane-full``: always the 256 worlds), and the worlds follow
  :func:`agents.search.sampler.bidding_weight`, the L2 bidding model's reading of the other
  seats' bids. In the play each world is drawn uniformly among the consistent ones, then
  importance weighted. In the auction the seat draws a pool of ``bid_pool`` worlds at its
  first call and, at every call, evaluates the ``bid_worlds`` of them picked by weighted
  sampling without replacement (:func:`pick_weighted`: one fixed key per world, so a world
  whose weight and rank do not change stays picked and its solves are reused); the picked
  worlds count equally. Importance weights on the 8 bidding worlds themselves left a median
  of 4.1 effective worlds (a tenth of the calls below 1.5) once another seat had bid, and
  the ``z`` guard, computed from the weighted spread, then rested on one or two worlds
  (docs/search.md, section 3). The limit of the pool: when its own effective size
  ``(sum w)^2 / sum w^2`` is below ``bid_worlds`` (about 4% of such calls with a pool of
  512 on bazar), some picked worlds are ones the model rates unlikely.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from blot_env.actions import layout_for
from blot_env.cards import card_points, strength
from blot_env.codes import KAPUT_VALUE
from blot_env.declarations import initial as initial_declarations
from blot_env.state import Contract, Phase, State
from blot_env.view import SeatView

from ..base import BaseAgent, legal_or_raise
from ..baselines.rules_agent import RulesAgent, standing_contract, team_estimate
from . import solver
from .sampler import bidding_weight, sample_worlds


class PIMCAgent(BaseAgent):
    """L3/L4 search agent (see the module docstring).

    Args:
        k: worlds per card decision.
        time_budget: seconds per decision (None: no limit); worlds beyond it are dropped.
        weighted: weight worlds by the bidding model (L4).
        bid_worlds: worlds per auction state (default ``min(k, 8)``: every world costs
            null-window solves from the first lead per candidate strain).
        bid_pool: worlds drawn at the seat's first call of an auction when ``weighted``,
            of which ``bid_worlds`` are picked at each call (default ``64 * bid_worlds``;
            unused when not ``weighted``).
        margin: table points a bid, contra or recontra must gain over passing, on average
            over the worlds.
        z: and beyond ``margin``, this many standard errors of that mean gain (paired over
            the worlds): a guard against picking the luckiest of many noisy estimates.
        stop_z: adaptive early stopping of the card decisions (module docstring): stop once
            the leading card's paired mean advantage over every other card exceeds this many
            standard errors less ``stop_tol`` (or the card is equivalent to it); ``None``
            (default): always ``k`` worlds (the agent before 2026-12-07). Finite and ``>= 0``.
        stop_tol: with ``stop_z``, deal-score points (the solver's units) by which another
            card may still be better when the search stops (``>= 0``; 0: the leader must be
            ahead): cards this close are not worth more worlds.
        min_worlds: with ``stop_z``, worlds solved before the first test (``>= 2``; at or
            above ``k``: never stops early).
        stop_every: with ``stop_z``, worlds solved between two tests (``>= 1``).

    Raises:
        ValueError: ``k < 1``, ``z < 0``, ``bid_pool < bid_worlds`` (weighted), ``stop_z`` or
            ``stop_tol`` negative, infinite or NaN, ``min_worlds < 2`` or ``stop_every < 1``.
    """

    def __init__(self, k: int = 64, time_budget: float | None = None, weighted: bool = False,
                 bid_worlds: int | None = None, margin: float = 3.0, z: float = 1.5,
                 name: str | None = None, bid_pool: int | None = None, stop_z: float | None = None,
                 stop_tol: float = 0.0, min_worlds: int = 32, stop_every: int = 16):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if stop_z is not None and not 0 <= float(stop_z) < float("inf"):  # nan fails too
            raise ValueError(f"stop_z must be None or a finite number >= 0 (standard errors), got {stop_z}")
        if not 0 <= float(stop_tol) < float("inf"):
            raise ValueError(f"stop_tol must be a finite number >= 0 (deal-score points), got {stop_tol}")
        if int(min_worlds) != min_worlds or min_worlds < 2:
            raise ValueError(f"min_worlds must be an integer >= 2 (a spread needs two worlds), got {min_worlds}")
        if int(stop_every) != stop_every or stop_every < 1:
            raise ValueError(f"stop_every must be an integer >= 1, got {stop_every}")
        self.k = int(k)
        self.stop_z = None if stop_z is None else float(stop_z)
        self.stop_tol = float(stop_tol)
        self.min_worlds = int(min_worlds)
        self.stop_every = int(stop_every)
        self.time_budget = time_budget
        self.weighted = weighted
        self.bid_worlds = int(bid_worlds) if bid_worlds else min(self.k, 8)
        self.bid_pool = int(bid_pool) if bid_pool is not None else 64 * self.bid_worlds
        if weighted and self.bid_pool < self.bid_worlds:
            raise ValueError(f"bid_pool ({self.bid_pool}) must be at least bid_worlds ({self.bid_worlds})")
        self.margin = margin
        if z < 0:
            raise ValueError(f"z must be >= 0, got {z}")
        self.z = z
        self.name = name or (f"pimc-{k}" if not weighted else "pimc-insane")
        self._rules = RulesAgent()
        self._cache: dict = {}

    def reset(self) -> None:
        self._cache.clear()

    # ------------------------------------------------------------------ dispatch
    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_or_raise(view)
        if len(legal) == 1:
            return legal[0]
        lay = layout_for(view.cfg)
        if view.phase == Phase.AUCTION:
            if view.cfg.auction in ("bazar", "belote") and view.cfg.num_players == 4:
                return self._call(view, rng)
            return self._rules.act(view, rng)
        blocks = {lay.block_of[a] for a in legal}
        if blocks == {"PLAY"}:
            return self._card(view, rng)
        return self._declare(view)

    def _weight(self):
        return bidding_weight if self.weighted else None

    # ------------------------------------------------------------------ declarations
    @staticmethod
    def _declare(view: SeatView) -> int:
        lay = layout_for(view.cfg)
        by = {}
        for a in view.legal:
            by.setdefault(lay.block_of[a], []).append(a)
        if "ANNOUNCE" in by:
            return max(by["ANNOUNCE"], key=lambda a: lay.params[a][0])
        for block in ("SHOW", "REVEAL", "HEIGHT"):
            if block in by:
                return by[block][0]
        return view.legal[0]

    # ------------------------------------------------------------------ cards
    def _card(self, view: SeatView, rng: np.random.Generator) -> int:
        if self.stop_z is not None:
            return self._card_adaptive(view, rng)
        lay = layout_for(view.cfg)
        t0 = time.perf_counter()
        worlds = sample_worlds(view, self.k, rng, weight=self._weight())
        sign = 1 if view.seat % 2 == 0 else -1
        tot: dict[int, float] = {}
        wsum = 0.0
        for i, w in enumerate(worlds):
            if i and self.time_budget is not None and time.perf_counter() - t0 > self.time_budget:
                break
            vals = solver.card_values_team0(w.state)
            for c, v in vals.items():
                tot[c] = tot.get(c, 0.0) + w.weight * sign * v
            wsum += w.weight
        if not tot:  # no world could be drawn: fall back on the rule agent
            return self._rules.act(view, rng)
        best = max(sorted(tot), key=lambda c: tot[c])
        return lay.play_id(best)

    def _card_adaptive(self, view: SeatView, rng: np.random.Generator) -> int:
        """``_card`` with early stopping (``stop_z``): batches of worlds drawn one after the
        other from ``rng`` (each draw of the sampler uses the generator alike, so the first
        ``n`` worlds are those of one draw of ``k``), tested by :func:`card_decided` after
        ``min_worlds`` and then every ``stop_every`` worlds. The batches share the sampler's
        budget of ``50 * k`` draws (a full batch is counted as its size: where most draws are
        rejected, a few more worlds than one draw of ``k`` finds can come)."""
        lay = layout_for(view.cfg)
        t0 = time.perf_counter()
        sign = 1 if view.seat % 2 == 0 else -1
        tot: dict[int, float] = {}
        rows: list[dict[int, int]] = []
        weights: list[float] = []
        classes = equivalent_cards(view, [lay.card_of(a) for a in view.legal])
        out_of_time = False
        tries = 50 * self.k  # the sampler's draws for k worlds at once (sample_worlds' default)
        while len(rows) < self.k and not out_of_time:
            want = min(self.min_worlds if not rows else self.stop_every, self.k - len(rows))
            batch = sample_worlds(view, want, rng, weight=self._weight(), max_tries=tries)
            tries -= want  # at least that many draws; a short batch spent them all
            for w in batch:
                if rows and self.time_budget is not None and time.perf_counter() - t0 > self.time_budget:
                    out_of_time = True
                    break
                vals = solver.card_values_team0(w.state)
                for c, v in vals.items():
                    tot[c] = tot.get(c, 0.0) + w.weight * sign * v
                rows.append(vals)
                weights.append(w.weight)
            if out_of_time or len(batch) < want or tries <= 0:  # the sampler ran out of draws
                break
            if len(rows) < self.k and len(rows) >= self.min_worlds:
                best = max(sorted(tot), key=lambda c: tot[c])
                same = {c for c, r in classes.items() if r == classes.get(best, best)}
                if card_decided(rows, weights, sign, best, self.stop_z, self.stop_tol, same):
                    break
        if not tot:  # no world could be drawn: fall back on the rule agent
            return self._rules.act(view, rng)
        best = max(sorted(tot), key=lambda c: tot[c])
        return lay.play_id(best)

    # ------------------------------------------------------------------ auction
    def _call(self, view: SeatView, rng: np.random.Generator) -> int:
        cfg = view.cfg
        lay = layout_for(cfg)
        me = view.seat
        my_sign = 1 if me % 2 == 0 else -1
        by: dict[str, list[int]] = {}
        for a in view.legal:
            by.setdefault(lay.block_of[a], []).append(a)
        # Worlds are drawn once per auction (at the seat's first call) and their solves are kept:
        # the calls of the other seats do not restrict their hands (only kaput+N needs held
        # combinations, which is not re-checked here), they only change the weights, which
        # are recomputed at every call (and with them which worlds of the pool are picked).
        key = (cfg, me, view.dealer, view.hand)
        if len(self._cache) > 32:
            self._cache.clear()
        entry = self._cache.get(key)
        if entry is None:
            pool = sample_worlds(view, self.bid_pool if self.weighted else self.bid_worlds, rng)
            entry = {"worlds": pool, "codes": {},
                     "keys": rng.random(len(pool)) if self.weighted else None}
            self._cache[key] = entry
        pool = entry["worlds"]
        if not pool:
            return self._rules.act(view, rng)
        if self.weighted:
            w_pool = np.array([bidding_weight(view, w.hands) for w in pool], dtype=float)
            picked = pick_weighted(w_pool, entry["keys"], self.bid_worlds)
        else:
            picked = list(range(len(pool)))
        worlds = [pool[i] for i in picked]

        def codes(strain: int) -> list[solver.CodeBounds]:
            got = []
            for i in picked:
                x = entry["codes"].get((strain, i))
                if x is None:
                    x = solver.CodeBounds(_first_lead(cfg, view.dealer, pool[i].hands, strain))
                    entry["codes"][(strain, i)] = x
                got.append(x)
            return got

        wts = np.full(len(worlds), 1.0 / len(worlds))

        def scores(seat: int, strain: int, value: int, kind: str, plus: int, double: int) -> np.ndarray:
            """Per world: the seat's side's deal score difference under this contract."""
            c = Contract(seat=seat, strain=strain, value=value, kind=kind, plus=plus, double=double, call=-1)
            out = np.empty(len(worlds))
            for i, (w, x) in enumerate(zip(worlds, codes(strain))):
                st = _first_lead(cfg, view.dealer, w.hands, strain)
                table = solver.leaf_table(st.cfg, c, solver.combo_info(replace(st, contract=c)))
                out[i] = my_sign * x.lookup(table)
            return out

        n_eff = 1.0 / float(wts @ wts)

        def gain(vec: np.ndarray, base: np.ndarray) -> tuple[float, bool]:
            """Mean gain of a call over passing, and whether it clears ``margin + z * se``
            (paired over the same worlds; ``se`` is the weighted standard deviation of the
            gain over the square root of the effective number of worlds, 0 with one world)."""
            d = vec - base
            m = float(wts @ d)
            se = float(np.sqrt(float(wts @ (d - m) ** 2) / n_eff))
            return m, m > self.margin + self.z * se

        high = _standing(view)
        pass_id = by["PASS"][0]
        base = scores(*high, view.double) if high else np.zeros(len(worlds))
        best, best_gain = pass_id, 0.0

        def consider(a: int, vec: np.ndarray) -> bool:
            nonlocal best, best_gain
            m, ok = gain(vec, base)
            if ok and m > best_gain:
                best, best_gain = a, m
                return True
            return False

        if view.double:
            if "RECONTRA" in by and high:
                consider(by["RECONTRA"][0], scores(*high, 2))
            return best
        if "CONTRA" in by and high:
            consider(by["CONTRA"][0], scores(*high, 1))
        strains = self._strains(view, high)
        for s in strains:
            fails = 0
            for a in sorted((a for a in by.get("BID", []) if lay.params[a][1] == s), key=lambda a: lay.params[a][0]):
                if consider(a, scores(me, s, lay.params[a][0], "num", 0, 0)):
                    fails = 0
                else:
                    fails += 1
                    if fails >= 2:
                        break
        for a in by.get("KAPUT", []):
            s = lay.params[a][0]
            if s in strains:
                consider(a, scores(me, s, KAPUT_VALUE, "kaput", 0, 0))
        for a in by.get("KAPUT_PLUS", []):
            plus, s = lay.params[a]
            if s in strains:
                consider(a, scores(me, s, KAPUT_VALUE + plus, "kaput_plus", plus, 0))
        return best

    @staticmethod
    def _strains(view: SeatView, high) -> list[int]:
        lay = layout_for(view.cfg)
        est = {s: team_estimate(view.hand, s, view.cfg) for s in lay.strains}
        out = sorted(est, key=lambda s: -est[s])[:2]
        if high and high[1] not in out and high[0] % 2 == view.seat % 2:
            out.append(high[1])
        return out


def equivalent_cards(view: SeatView, cards: list[int]) -> dict[int, int]:
    """Classes of ``cards`` (the seat's legal cards) that have the same value in every world.

    Two cards are equivalent when they are of one suit, score the same raw points under the
    contract's strain, and every card of that suit ranked between them (trick strength, the
    trump order in the trump suit) is out of play (in a finished trick) or one of ``cards`` of
    the same points: whoever holds the hidden cards, playing one or the other leads to the same
    tricks and points (the solver merges such cards as well, ``solver._root_order``).

    Args:
        view: the seat's view in the play phase.
        cards: card ids (0..31) the seat may play.

    Returns:
        ``{card: representative}`` for every card of ``cards``; the representative is the
        lowest card id of its class (a card alone is its own).
    """
    trump = view.contract_strain
    out = {c for _, c in view.plays} - set(view.trick)
    legal = set(cards)
    rep: dict[int, int] = {c: c for c in cards}
    for suit in {c >> 3 for c in cards}:
        in_play = [c for c in range(suit * 8, suit * 8 + 8) if c not in out]
        in_play.sort(key=lambda c: -strength(c, suit, trump))
        run: list[int] = []
        for c in in_play + [-1]:
            if c in legal and run and card_points(c, trump) == card_points(run[-1], trump):
                run.append(c)
                continue
            low = min(run) if run else -1
            for x in run:
                rep[x] = low
            run = [c] if c in legal else []
    return rep


def card_decided(rows: list[dict[int, int]], weights: list[float], sign: int, best: int, stop_z: float,
                 stop_tol: float = 0.0, equivalent: set[int] | frozenset[int] = frozenset()) -> bool:
    """Whether ``best`` is decided: against every other card, either separated (the weighted
    mean of ``best``'s value minus the card's, paired per world, is above ``stop_z`` standard
    errors less ``stop_tol``) or equivalent to it (in ``equivalent`` and of the same value in
    every world so far).

    Args:
        rows: per world, ``{card: team-0 value}`` (:func:`solver.card_values_team0`, deal-score
            units); a card missing from a world counts 0 there, as in the mean itself.
        weights: per world, its weight (``>= 0``).
        sign: ``+1`` for team 0's seats, ``-1`` for team 1's (the values are negated).
        best: the leading card (the highest weighted mean, ties to the lowest card id).
        stop_z: standard errors; the error is the weighted standard deviation of the paired
            difference over the square root of the effective number of worlds
            ``(sum w)^2 / sum w^2``.
        stop_tol: deal-score points another card may still be ahead by.
        equivalent: cards known to be worth ``best``'s value in every world
            (:func:`equivalent_cards`).

    Returns:
        True when every other card is separated or equivalent (also when there is none);
        False when the weights sum to zero.
    """
    cards = sorted({c for r in rows for c in r})
    others = [c for c in cards if c != best]
    if not others:
        return True
    w = np.asarray(weights, dtype=float)
    wsum = float(w.sum())
    if wsum <= 0:
        return False
    vals = sign * np.array([[r.get(c, 0) for c in cards] for r in rows], dtype=float)  # [n, cards]
    b = cards.index(best)
    d = vals[:, [b]] - vals[:, [cards.index(c) for c in others]]  # [n, others]
    same = np.array([c in equivalent for c in others]) & np.all(d == 0, axis=0)
    m = (w @ d) / wsum
    var = (w @ (d - m) ** 2) / wsum
    n_eff = wsum * wsum / float(w @ w)
    se = np.sqrt(var / n_eff)
    return bool(np.all(same | (m - stop_z * se > -stop_tol)))


def pick_weighted(weights: np.ndarray, keys: np.ndarray, m: int) -> list[int]:
    """Indices of ``m`` items drawn without replacement with probabilities following
    ``weights`` (Efraimidis and Spirakis, "Weighted random sampling with a reservoir", 2006:
    the ``m`` largest ``keys ** (1 / weights)``), in ascending order.

    Args:
        weights: ``float[N]``, non-negative; an item of weight 0 is picked only when fewer
            than ``m`` items have a positive weight.
        keys: ``float[N]`` uniform draws in ``[0, 1)``, one per item (fixed per item, so
            that items keep their rank while their weights do not change).
        m: how many to pick (all ``N`` if ``m >= N``).

    Raises:
        ValueError: shapes differ or a weight is negative.
    """
    weights = np.asarray(weights, dtype=float)
    keys = np.asarray(keys, dtype=float)
    if weights.shape != keys.shape or weights.ndim != 1:
        raise ValueError(f"weights {weights.shape} and keys {keys.shape} must be 1-D of one length")
    if np.any(weights < 0):
        raise ValueError("weights must be non-negative")
    score = np.where(weights > 0, np.log(np.maximum(keys, 1e-300)) / np.maximum(weights, 1e-300), -np.inf)
    order = np.argsort(-score, kind="stable")
    return sorted(int(i) for i in order[:m])


def _standing(view: SeatView):
    """``(seat, strain, value, kind, plus)`` of the standing bid, or None."""
    high = standing_contract(view)
    return None if high[0] < 0 else high


def _first_lead(cfg, dealer: int, hands: tuple[int, ...], strain: int) -> State:
    """The state at the first lead of a 4-player deal with a plain contract in ``strain``,
    combinations counted automatically (rules.md 2.8); the bidding evaluation's position."""
    scfg = cfg.replace(declarations="auto") if cfg.declarations != "auto" else cfg
    n = cfg.num_players
    c = Contract(seat=(dealer + 1) % n, strain=strain, value=cfg.bid_min, kind="num", plus=0, double=0, call=-1)
    return State(cfg=scfg, dealer=dealer, start_hands=tuple(hands), stock=(), phase=Phase.PLAY, seat=0, history=(),
                 hands=tuple(hands), contract=c, play_hands=tuple(hands), leader=(dealer + 1) % n, trick_no=0,
                 tricks=(0,) * n, points=(0,) * n, decl=initial_declarations(n))


__all__ = ["PIMCAgent", "card_decided", "equivalent_cards", "pick_weighted"]
