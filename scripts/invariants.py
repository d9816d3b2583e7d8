"""Random-play invariant checks over many deals (style.md rule 8, rules.md 1-2).

Plays random deals through ``blot_env.engine`` and, after every action, checks:

* cards are conserved (hands + played cards = the deck, no card twice, hand sizes);
* the legal set is non-empty, sorted and unique until the end, empty after it, and equal
  to an independent re-implementation of rules.md 1.3 during card play;
* every legal action is accepted by ``apply_action`` (all of them at sampled steps) and a
  random illegal one raises ``IllegalActionError``;
* the next leader is the last trick's winner (independent trick-winner code, rules.md 1.2);
* raw card points of the finished tricks add up (162 when all tricks are played, 1.1);
* at the end: scores and combinations non-negative, passed-out deals score 0:0, under
  contra exactly one side scores 0 (2.5), a kaput contract stops after the defenders' first
  trick (2.3), and the full score formula of rules.md 2.5 re-computed independently for deals
  in which nobody holds a combination or a blot.

Usage::

    python scripts/invariants.py --deals 1000000 --preset bazar --workers 2 --seed 0
    python scripts/invariants.py --deals 10000 --preset bazar --rules declarations=auto

The functions ``check_deal`` and ``run_deals`` are also used by tests/test_invariants.py.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from blot_env.engine import (
    apply_action,
    current_seat,
    deal_random,
    deal_result,
    is_terminal,
    layout,
    legal_actions,
)
from blot_env.errors import IllegalActionError
from blot_env.rules_config import RulesConfig, make_rules
from blot_env.state import Phase

# --- independent reference tables (written from rules.md 1.1-1.2, not imported from blot_env)
_RANKS = "789TJQKA"
_TRUMP_STRENGTH = {r: i for i, r in enumerate("78QKTA9J")}  # ascending, rules.md 1.1
_PLAIN_STRENGTH = {r: i for i, r in enumerate("789JQKTA")}
_TRUMP_PTS = {"7": 0, "8": 0, "9": 14, "T": 10, "J": 20, "Q": 3, "K": 4, "A": 11}
_PLAIN_PTS = {"7": 0, "8": 0, "9": 0, "T": 10, "J": 2, "Q": 3, "K": 4, "A": 11}
_NT_PTS = dict(_PLAIN_PTS, A=19)
_NT = 4


def ref_points(card: int, strain: int) -> int:
    r = _RANKS[card % 8]
    if strain == _NT:
        return _NT_PTS[r]
    return (_TRUMP_PTS if card // 8 == strain else _PLAIN_PTS)[r]


def ref_winner(cards: list[int], strain: int) -> int:
    """Index of the winning card (rules.md 1.2)."""
    led = cards[0] // 8

    def key(c: int) -> tuple[int, int]:
        r = _RANKS[c % 8]
        if strain != _NT and c // 8 == strain:
            return (2, _TRUMP_STRENGTH[r])
        if c // 8 == led:
            return (1, _PLAIN_STRENGTH[r])
        return (0, 0)

    return max(range(len(cards)), key=lambda i: key(cards[i]))


def ref_legal(hand: set[int], trick: list[tuple[int, int]], strain: int, me: int, n: int) -> set[int]:
    """rules.md 1.3 with partner exemption (4 players) and free undertrump."""
    if not trick:
        return set(hand)
    led = trick[0][1] // 8
    follow = {c for c in hand if c // 8 == led}
    cards = [c for _, c in trick]
    trumps_in_trick = [c for c in cards if strain != _NT and c // 8 == strain]
    top = max((_TRUMP_STRENGTH[_RANKS[c % 8]] for c in trumps_in_trick), default=-1)
    if follow:
        if strain != _NT and led == strain:
            over = {c for c in follow if _TRUMP_STRENGTH[_RANKS[c % 8]] > top}
            return over or follow
        return follow
    if strain == _NT:
        return set(hand)
    trumps = {c for c in hand if c // 8 == strain}
    if not trumps:
        return set(hand)
    wseat = trick[ref_winner(cards, strain)][0]
    if n == 4 and wseat % 2 == me % 2:
        return set(hand)
    if trumps_in_trick:
        over = {c for c in trumps if _TRUMP_STRENGTH[_RANKS[c % 8]] > top}
        return over or set(hand)
    return trumps


def ref_round(x: int) -> int:
    """r(x) of rules.md 0, written differently from blot_env.cards.round_tens."""
    return (x + 4) // 10


def holds_any_combo(hand: int, strain: int) -> bool:
    """Conservative: any 3-run, any carre of 9..A, or the trump K+Q (rules.md 1.4)."""
    for s in range(4):
        bits = (hand >> (8 * s)) & 0xFF
        if bits & (bits >> 1) & (bits >> 2):
            return True
    for r in range(2, 8):
        if all(hand >> (s * 8 + r) & 1 for s in range(4)):
            return True
    if strain != _NT:
        k, q = strain * 8 + 6, strain * 8 + 5
        if hand >> k & 1 and hand >> q & 1:
            return True
    return False


def ref_bazar_score(contract, tricks, card_points, num_tricks: int = 8, capot: int = 25) -> tuple[list[int], bool]:
    """rules.md 2.5 with K_A = K_D = 0: (score per team, made)."""
    A = contract.seat % 2
    D = 1 - A
    b = contract.value
    mult = ((2, 3, 5) if contract.strain == _NT else (1, 2, 4))[contract.double]
    capA = tricks[A] == num_tricks
    capD = tricks[D] == num_tricks
    V = 250 if capA else card_points[A]
    made = not capD and V >= 10 * b and (contract.kind == "num" or capA)
    score = [0, 0]
    if contract.double == 0:
        if made:
            score[A] = mult * b + (capot if capA else ref_round(card_points[A]))
            score[D] = 0 if capA else ref_round(card_points[D])
        else:
            score[D] = mult * b + (capot if capD else 16)
    else:
        w, capw = (A, capA) if made else (D, capD)
        score[w] = mult * b + (capot if capw else 16)
    return score, made


class InvariantError(AssertionError):
    pass


def _fail(msg: str, state) -> None:
    lay = layout(state)
    acts = [lay.describe(a) for a in state.history]
    hands = [hex(h) for h in state.start_hands]
    raise InvariantError(f"{msg}\n  dealer={state.dealer} hands={hands}\n  actions={acts}")


@dataclass
class Stats:
    deals: int = 0
    passed_out: int = 0
    contra: int = 0
    kaput: int = 0
    kaput_stopped: int = 0
    no_combo_checked: int = 0
    made: int = 0
    steps: int = 0
    full_162: int = 0
    nt: int = 0
    counts: dict = field(default_factory=dict)

    def add(self, other: Stats) -> None:
        for k in ("deals", "passed_out", "contra", "kaput", "kaput_stopped", "no_combo_checked", "made",
                  "steps", "full_162", "nt"):
            setattr(self, k, getattr(self, k) + getattr(other, k))


def choose(state, legal: list[int], rng: np.random.Generator, pass_prob: float) -> int:
    """Random policy. Auction: pass with probability ``pass_prob``; otherwise contra/recontra
    (5% when legal), mostly a small raise (number bids up to 2 above the standing one), or any call.
    Declarations and cards: uniform over the legal actions."""
    if state.phase == Phase.AUCTION:
        if rng.random() < pass_prob:
            return legal[0]  # PASS is action 0 and always legal in the auction
        lay = layout(state)
        doubles = [a for a in legal[1:4] if lay.block_of[a] in ("CONTRA", "RECONTRA")]
        if doubles and rng.random() < 0.05:
            return doubles[int(rng.integers(len(doubles)))]
        if rng.random() < 0.9:
            cap = max(state.high_value, state.cfg.bid_min - 1) + 2
            small = [a for a in legal[1:] if lay.block_of[a] == "BID" and lay.params[a][0] <= cap]
            if small:
                return small[int(rng.integers(len(small)))]
    return legal[int(rng.integers(len(legal)))]


def check_deal(cfg: RulesConfig, rng: np.random.Generator, pass_prob: float = 0.6,
               check_all_prob: float = 0.05, stats: Stats | None = None) -> Stats:
    """Play one random deal, checking every invariant after every action. Raises InvariantError."""
    stats = stats or Stats()
    lay = layout(cfg)
    n = cfg.num_players
    dealer = int(rng.integers(n))
    state = deal_random(cfg, rng, dealer)
    deck = (1 << 32) - 1
    play_base = lay.blocks["PLAY"].start
    while not is_terminal(state):
        legal = legal_actions(state)
        seat = current_seat(state)
        if not legal:
            _fail("empty legal set before the end", state)
        if legal != sorted(set(legal)) or legal[0] < 0 or legal[-1] >= lay.num_actions:
            _fail(f"legal set not sorted/unique/in range: {legal}", state)
        if not 0 <= seat < n:
            _fail(f"bad seat to act {seat}", state)
        # cards conserved
        played = 0
        for _, c in state.plays:
            if played >> c & 1:
                _fail("a card was played twice", state)
            played |= 1 << c
        union = played
        for s in range(n):
            if union & state.hands[s]:
                _fail("a card is in two places", state)
            union |= state.hands[s]
            n_played = sum(1 for p, _ in state.plays if p == s)
            if state.hands[s].bit_count() != cfg.hand_size - n_played:
                _fail(f"seat {s} holds {state.hands[s].bit_count()} cards after playing {n_played}", state)
        if union != deck:
            _fail("cards not conserved", state)
        if state.phase == Phase.PLAY and not state.pending:
            cards = [a - play_base for a in legal]
            if any(not 0 <= c < 32 for c in cards):
                _fail(f"non-card action in a card turn: {legal}", state)
            trick = [((state.leader + i) % n, c) for i, c in enumerate(state.trick)]
            hand = {c for c in range(32) if state.hands[seat] >> c & 1}
            want = ref_legal(hand, trick, state.contract.strain, seat, n)
            if set(cards) != want:
                _fail(f"legal cards {sorted(cards)} != reference {sorted(want)} for seat {seat}", state)
        if rng.random() < check_all_prob:
            sample = legal
            if len(legal) > 12:  # auction: the lowest/highest calls and a random sample
                pick = rng.choice(len(legal), 10, replace=False)
                sample = [legal[0], legal[1], legal[-1]] + [legal[int(i)] for i in pick]
            for a in sample:
                apply_action(state, a)  # must not raise
            illegal = sorted(set(range(lay.num_actions)) - set(legal))
            if illegal:
                bad = illegal[int(rng.integers(len(illegal)))]
                try:
                    apply_action(state, bad)
                except IllegalActionError:
                    pass
                else:
                    _fail(f"illegal action {lay.describe(bad)} was accepted", state)
        a = choose(state, legal, rng, pass_prob)
        prev_tricks_done = sum(state.tricks) if state.tricks else 0
        prev_trick = state.trick
        prev_leader = state.leader
        prev_phase = state.phase
        state = apply_action(state, a)
        stats.steps += 1
        if prev_phase == Phase.PLAY and lay.block_of[a] == "PLAY" and len(prev_trick) == n - 1:
            full = list(prev_trick) + [a - play_base]
            w = (prev_leader + ref_winner(full, state.contract.strain)) % n
            if sum(state.tricks) != prev_tricks_done + 1:
                _fail("trick count did not advance", state)
            if state.leader != w:
                _fail(f"next leader {state.leader} != last trick's winner {w}", state)
            if state.trick:
                _fail("trick not cleared", state)
        # raw points of finished tricks
        if state.phase != Phase.AUCTION and state.contract is not None:
            plays = state.plays
            done = len(plays) // n
            pts = sum(ref_points(c, state.contract.strain) for _, c in plays[: done * n])
            if done == cfg.num_tricks:
                pts += 10
            if sum(state.points) != pts:
                _fail(f"points {state.points} do not add up to {pts}", state)
    # terminal
    if legal_actions(state) or current_seat(state) != -1:
        _fail("legal actions or a seat to act after the end", state)
    try:
        apply_action(state, 0)
    except IllegalActionError:
        pass
    else:
        _fail("an action was accepted after the end", state)
    res = deal_result(state)
    stats.deals += 1
    if min(res.score) < 0 or min(res.combinations) < 0 or min(res.card_points) < 0:
        _fail(f"negative entry in {res}", state)
    c = res.contract
    if c is None:
        stats.passed_out += 1
        if res.score != (0, 0) or res.made is not None or len(state.history) != n:
            _fail(f"passed-out deal scored {res}", state)
        return stats
    stats.made += bool(res.made)
    stats.nt += c.strain == _NT
    A = c.seat % 2
    tricks_played = sum(res.tricks)
    if tricks_played == cfg.num_tricks:
        stats.full_162 += 1
        if sum(res.card_points) != 162:
            _fail(f"card points {res.card_points} do not total 162", state)
    if c.is_kaput:
        stats.kaput += 1
        # the deal stops after the defenders' first trick (after trick 2 if that was trick 1)
        first_d = None
        for t in range(tricks_played):
            cards = [cd for _, cd in state.plays[t * n:(t + 1) * n]]
            w = (state.plays[t * n][0] + ref_winner(cards, c.strain)) % n
            if w % 2 != A and first_d is None:
                first_d = t
        want = cfg.num_tricks if first_d is None else max(first_d + 1, 2)
        if tricks_played != want:
            _fail(f"kaput contract stopped after {tricks_played} tricks, expected {want}", state)
        stats.kaput_stopped += tricks_played < cfg.num_tricks
    elif tricks_played != cfg.num_tricks:
        _fail(f"only {tricks_played} tricks played in a number contract", state)
    if c.double:
        stats.contra += 1
        if sorted(res.score)[0] != 0 or max(res.score) <= 0:
            _fail(f"under contra exactly one side must score 0: {res.score}", state)
    if not any(holds_any_combo(h, c.strain) for h in state.play_hands):
        stats.no_combo_checked += 1
        want_score, want_made = ref_bazar_score(c, res.tricks, res.card_points, cfg.num_tricks, cfg.capot_tp)
        if list(res.score) != want_score or res.made != want_made or res.combinations != (0, 0):
            _fail(f"score {res.score} made={res.made} != reference {want_score} made={want_made}", state)
    return stats


def run_deals(cfg: RulesConfig, seed: int, deals: int, pass_prob: float = 0.6,
              check_all_prob: float = 0.05) -> Stats:
    """Check ``deals`` random deals from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    stats = Stats()
    for _ in range(deals):
        check_deal(cfg, rng, pass_prob, check_all_prob, stats)
    return stats


def _worker(args: tuple) -> Stats:
    cfg, seed, deals, pass_prob, check_all_prob = args
    return run_deals(cfg, seed, deals, pass_prob, check_all_prob)


def _parse_rules(items: list[str]) -> dict:
    out = {}
    for it in items:
        k, _, v = it.partition("=")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=1_000_000, help="number of random deals (default 1,000,000)")
    ap.add_argument("--preset", default="bazar", help="rules preset (default bazar)")
    ap.add_argument("--rules", nargs="*", default=[], metavar="KNOB=VALUE", help="knob overrides")
    ap.add_argument("--seed", type=int, default=0, help="base seed of the deals")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--chunk", type=int, default=500, help="deals per task")
    ap.add_argument("--pass-prob", type=float, default=0.6, help="auction pass probability of the random policy")
    ap.add_argument("--check-all-prob", type=float, default=0.05,
                    help="probability per step of applying every legal action and one illegal one")
    args = ap.parse_args(argv)
    from tqdm import tqdm

    cfg = make_rules(args.preset, **_parse_rules(args.rules))
    if cfg.scoring != "bazar" or cfg.num_players != 4:
        ap.error(f"preset {args.preset!r}: these checks cover the 4-player bazar family (bazar, bazar-app)")
    seeds = np.random.SeedSequence(args.seed).generate_state((args.deals + args.chunk - 1) // args.chunk)
    tasks = []
    left = args.deals
    for s in seeds:
        k = min(args.chunk, left)
        tasks.append((cfg, int(s), k, args.pass_prob, args.check_all_prob))
        left -= k
    total = Stats()
    t0 = time.perf_counter()
    with tqdm(total=args.deals, unit="deal", smoothing=0.05) as bar:
        if args.workers <= 1:
            results = map(_worker, tasks)
            for st in results:
                total.add(st)
                bar.update(st.deals)
        else:
            with mp.get_context("fork").Pool(args.workers) as pool:
                for st in pool.imap_unordered(_worker, tasks):
                    total.add(st)
                    bar.update(st.deals)
    wall = time.perf_counter() - t0
    summary = {k: v for k, v in vars(total).items() if k != "counts"}
    summary.update(preset=args.preset, declarations=cfg.declarations, wall_s=round(wall, 1),
                   deals_per_s=round(total.deals / wall, 1))
    print(json.dumps(summary), file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
