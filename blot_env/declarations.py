"""Declarations: the manual announce/show protocol of rules.md 2.4.2-2.4.3 as decision
steps (4 players, or 2 in ``duel`` with one opponent), the automatic mode of 2.8 (also
``duel-app`` and ``belote``), Open Blot's ``announce`` mode of 5.7.6 (one ``announce X``
before each player's trick-1 card, from his face-up cards, no heights and no show step),
and the resolution of which combinations count.

Pure functions over :class:`~blot_env.state.State`; the engine calls them at each seat's
turn (``steps_for_turn``), after each declaration action (``apply_step``), at the end of
trick 1 (``fix_leader``) and when scoring (``resolve``).
"""

from __future__ import annotations

from dataclasses import replace

from .actions import CLS_CARRE, ActionLayout
from .cards import NT
from .codes import EVENT_CONCEDE, EVENT_HEIGHT, EVENT_HEIGHT_TRUMP, EVENT_REVEAL
from .combos import Combo, best_of_class, best_set, classes_held, has_blot, seniority
from .state import Declarations, Right, State, Step


def initial(n: int) -> Declarations:
    return Declarations(
        announced=(-1,) * n, claim=(None,) * n, show_set=((),) * n, conceded=(False,) * n, events=(),
        leader=-1, rights=(0,) * n, decided=(-1,) * n, announce_order=(),
    )


def _key(state: State, seat: int) -> tuple:
    return seniority(state.decl.claim[seat], state.trick1_pos(seat))


def steps_for_turn(state: State, seat: int) -> tuple[State, tuple[tuple[int, int], ...]]:
    """Decision steps due before ``seat`` plays its card now; may let a pass-on right lapse."""
    cfg = state.cfg
    d = state.decl
    if d is None or cfg.declarations == "auto":
        return state, ()
    t = state.trick_no
    if t == 0:
        if d.announced[seat] == -1:
            return state, ((Step.ANNOUNCE, seat),)
        return state, ()
    if cfg.declarations != "manual" or t > 2 or d.decided[seat] != -1 or not d.rights[seat]:
        return state, ()
    r = d.rights[seat]
    if r == Right.LEADING_PAIR:
        return state, ((Step.SHOW, seat),)
    if r == Right.PASS_ON:
        lead_team = d.leader % 2
        shown = [_key(state, s) for s in range(state.n) if s % 2 == lead_team and d.decided[s] == 1]
        if all(_key(state, seat) > k for k in shown):
            return state, ((Step.SHOW, seat),)
        rights = list(d.rights)
        rights[seat] = Right.NONE
        return replace(state, decl=replace(d, rights=tuple(rights))), ()
    return state, ((Step.SHOW, seat),)


def announce_classes(state: State, seat: int) -> set[int]:
    """Classes ``seat`` may announce now (rules.md 2.4.3 item 1), 0 (silent) included."""
    cfg = state.cfg
    hand = _decl_hand(state, seat)
    return {0} | classes_held(hand, state.contract.strain, cfg.long_run, cfg.carre_table)


def _decl_hand(state: State, seat: int) -> int:
    if state.cfg.auction == "open":
        return state.hands[seat] & ~state.face_down[seat]
    return state.hands[seat]


def legal_steps(state: State, lay: ActionLayout) -> list[int]:
    """Legal action ids for the pending decision step."""
    kind, seat = state.pending[0]
    d = state.decl
    if kind == Step.ANNOUNCE:
        return sorted(lay.announce_id(c) for c in announce_classes(state, seat))
    if kind == Step.HEIGHT:
        c = d.claim[seat]
        out = [lay.id("HEIGHT")]
        if c.cls != CLS_CARRE and c.suit == state.contract.strain:
            out.append(lay.id("HEIGHT_TRUMP"))
        return out
    if kind == Step.ANSWER:
        return [lay.id("CONCEDE"), lay.id("REVEAL")]
    return [lay.id("SHOW"), lay.id("NOSHOW")]


def apply_step(state: State, lay: ActionLayout, action: int) -> State:
    """Apply a legal declaration action; returns the state with ``pending`` advanced."""
    cfg = state.cfg
    kind, seat = state.pending[0]
    rest = state.pending[1:]
    d = state.decl
    block = lay.block_of[action]
    if kind == Step.ANNOUNCE:
        cls = lay.params[action][0]
        announced = list(d.announced)
        announced[seat] = cls
        claim, show = list(d.claim), list(d.show_set)
        d2 = replace(d, announced=tuple(announced), announce_order=d.announce_order + (seat,))
        if cls:
            hand = _decl_hand(state, seat)
            strain = state.contract.strain
            c = best_of_class(hand, strain, cls, cfg.long_run, cfg.carre_table)
            claim[seat] = c
            show[seat] = best_set(hand, strain, cfg.long_run, cfg.carre_table, max_cls=cls, include=c)
            d2 = replace(d2, claim=tuple(claim), show_set=tuple(show))
            if cfg.declarations == "manual":
                earlier = [q for q in d.announce_order if q % 2 != seat % 2 and d.announced[q] == cls]
                if earlier:
                    rest = ((Step.HEIGHT, seat),) + rest
        return replace(state, decl=d2, pending=rest)
    if kind == Step.HEIGHT:
        c = d.claim[seat]
        ev = (seat, EVENT_HEIGHT_TRUMP if block == "HEIGHT_TRUMP" else EVENT_HEIGHT, c.top)
        answers = tuple((Step.ANSWER, q) for q in d.announce_order
                        if q % 2 != seat % 2 and d.announced[q] == d.announced[seat] and not d.conceded[q])
        return replace(state, decl=replace(d, events=d.events + (ev,)), pending=answers + rest)
    if kind == Step.ANSWER:
        if block == "CONCEDE":
            conceded = list(d.conceded)
            conceded[seat] = True
            d2 = replace(d, conceded=tuple(conceded), events=d.events + ((seat, EVENT_CONCEDE, -1),))
        else:
            d2 = replace(d, events=d.events + ((seat, EVENT_REVEAL, d.claim[seat].top),))
        return replace(state, decl=d2, pending=rest)
    # SHOW / NOSHOW
    decided = list(d.decided)
    rights = list(d.rights)
    show = block == "SHOW"
    decided[seat] = 1 if show else 0
    if not show and seat == d.leader:
        for q in range(state.n):
            if q % 2 != seat % 2 and d.announced[q] > 0 and decided[q] == -1:
                rights[q] = Right.PASS_ON
    if show and d.rights[seat] in (Right.PASS_ON, Right.PARTNER) and state.n == 4:
        partner = (seat + 2) % 4
        if d.announced[partner] > 0 and decided[partner] == -1:
            rights[partner] = Right.PARTNER
    return replace(state, decl=replace(d, decided=tuple(decided), rights=tuple(rights)), pending=rest)


def fix_leader(state: State) -> State:
    """End of trick 1: the leader (best non-conceded claim) and the leading pair's rights."""
    d = state.decl
    if d is None or state.cfg.declarations != "manual":
        return state
    cands = [s for s in range(state.n) if d.announced[s] > 0 and not d.conceded[s]]
    if not cands:
        return state
    leader = max(cands, key=lambda s: _key(state, s))
    rights = list(d.rights)
    for s in cands:
        if s % 2 == leader % 2:
            rights[s] = Right.LEADING_PAIR
    return replace(state, decl=replace(d, leader=leader, rights=tuple(rights)))


def _auto_sets(state: State) -> list[tuple[Combo, ...]]:
    cfg = state.cfg
    strain = state.contract.strain
    return [best_set(state.play_hands[s], strain, cfg.long_run, cfg.carre_table) for s in range(state.n)]


def counted_sets(state: State) -> list[tuple[Combo, ...]]:
    """Per seat, the combinations that count (rules.md 1.4 item 4, 2.4.2 RESOLUTION).

    Manual: only shown sets compete; auto: every seat's best set; announce (open): the
    announced sets. The side holding the single senior one counts all of its sets.
    """
    cfg = state.cfg
    n = state.n
    if cfg.declarations == "auto":
        sets = _auto_sets(state)
    elif cfg.declarations == "manual":
        d = state.decl
        sets = [d.show_set[s] if d.decided[s] == 1 else () for s in range(n)]
    else:
        d = state.decl
        sets = [d.show_set[s] if d.announced[s] > 0 else () for s in range(n)]
    best_seat, best_key = -1, None
    for s in range(n):
        if sets[s]:
            k = _set_key(state, s, sets[s][0])
            if best_key is None or k > best_key:
                best_seat, best_key = s, k
    if best_seat < 0:
        return [() for _ in range(n)]
    if best_key_is_tied(state, sets, best_seat, best_key):
        return [() for _ in range(n)]
    return [sets[s] if s % 2 == best_seat % 2 else () for s in range(n)]


def _set_key(state: State, seat: int, top: Combo) -> tuple:
    if state.cfg.declarations == "announce":
        # open (5.7.6): ties go to trump, then to the first to announce
        pos = state.decl.announce_order.index(seat)
        return top.key + (-pos,)
    if state.cfg.declaration_tie == "nobody":
        return top.key  # classic: a complete tie scores nobody (RES-36)
    return seniority(top, state.trick1_pos(seat))


def best_key_is_tied(state: State, sets, best_seat: int, best_key: tuple) -> bool:
    if state.cfg.declaration_tie != "nobody":
        return False  # "trick1_order": seniority by trick-1 position never ties (RES-36 A)
    return any(s % 2 != best_seat % 2 and sets[s] and _set_key(state, s, sets[s][0]) == best_key
               for s in range(state.n))


def blots(state: State) -> list[bool]:
    """Per seat: holds the blot (trump K+Q at the start of play; never in NT)."""
    strain = state.contract.strain
    if strain == NT:
        return [False] * state.n
    return [has_blot(state.play_hands[s], strain) for s in range(state.n)]


def set_value(sets: tuple[Combo, ...]) -> int:
    return sum(c.value for c in sets)
