"""Double-dummy tables: the exact outcome of every strain of a deal, and the deal score of any
contract read from it without solving again.

A training stage that scores auction outcomes by double-dummy solves (a bidder trained on
deals whose contracts are scored exactly, as Colver does for contree) needs, per deal, what
:func:`agents.search.solver.solve` would say about every contract the auction could reach.
Solving once per strain is enough, because of how the solver works (docs/search.md, section
1): it searches the minimax of team 0's **outcome code** ``X = 3 * p0 + c`` (``p0`` team 0's
raw card points at the end, last-trick 10 included; ``c`` 2 if team 0 took every trick, 0 if
team 1 did, 1 otherwise), and the deal score difference is ``F(X)``, a non-decreasing table
(:func:`agents.search.solver.leaf_table`) built from the contract and the combinations that
count. The card play itself (legal cards, trick winners, points) depends on the strain and
the hands only, so for the presets with an auction of bids:

* **number contracts**: ``X`` does not depend on the level, the declarer or the contra (the
  search never reads them); ``tests/test_dd_table.py`` checks it by solving the same deal
  under contracts of one strain with other levels, declarers of both teams and contra /
  recontra.
* **kaput contracts** (``bid kaput``, ``kaput+N``; rules.md 2.3) stop as soon as the
  defenders win a trick, so the kernel searches another game (the early stop, ``P[5]`` of
  the kernel) and ``X`` differs in general (the points of the tricks not played count for
  nobody). What the score needs is only whether the declaring side takes every trick, and
  the early stop does not change that: up to the first trick the defenders win, both games
  are the same, so the declarers can force all tricks in one iff they can in the other. A
  declarers' sweep is the largest ``X`` of their side (``3 * total + 2`` for team 0, ``0``
  for team 1), so it is read off the number-contract ``X``; every other outcome of a kaput
  contract scores the same (a failed kaput: ``M * b + 16 + K_A + K_D`` to the defenders,
  rules.md 2.5), which :func:`dd_score` checks on the contract's table. The test above
  compares :func:`dd_score` with ``solve`` on kaput and kaput+N contracts.
* **declarations decided in play** (``declarations="manual"``, rules.md 2.4.2-2.4.3;
  ``"announce"`` in Open Blot, 5.7.6): the solver takes every declaration decision after
  the root with a fixed policy (:func:`agents.search.solver.policy_action`: announce the
  highest class held, always show), under which the counted combinations are fixed by the
  hands, the strain and the first hand's choice; the first hand's own announcement is
  pending at the first lead, and ``solve`` maximises over it (each legal ``announce``
  gets its own value). So a row keeps the counted combinations for each of the first
  hand's options (at most :data:`MAX_OPTIONS`), and :func:`dd_score` takes the best of
  them for the first hand's side, as ``solve`` does. ``X`` does not depend on the option
  (declarations never change which cards may be played).

For the 2-player presets the trump choice changes the hands (a duel's taker draws the open
card and two more, ``name X leave`` draws three; rules.md 3, 4, 5.7.1) and there are no
levels or contra, so a row holds one solve per reachable outcome of the trump choice (the
taker and the call that fixed trump: ``take``, ``name H keep``, ...); the slot list is
:func:`slot_keys`.

Deals are reproducible: deal ``i`` of a table seeded ``S`` is dealt by :func:`deal_state`
from its own generator ``numpy.random.default_rng([S, i])`` (the dealer first, then the
cards), as ``tests/oracles/invariants.py`` deals its random deals, so any range of deals can
be built, or rebuilt, on its own.

**Rows** (:func:`row_dtype`, a numpy structured dtype per preset; ``U`` slots, ``O`` options,
``n`` seats, ``D`` cards in the deck):

================  ============  ===========================================================
field             dtype, shape  meaning
================  ============  ===========================================================
``index``         int64         the deal's index ``i``
``preset``        int8          position of the preset in :data:`blot_env.PRESETS`
``dealer``        int8          the dealer's seat
``cards``         int8[D]       card ids in deal order: seat 0's ``hand_size`` cards, seat
                                1's, ..., then the stock in draw order (Open Blot: bottom,
                                top of piles 1..8 per seat); :func:`row_deal` rebuilds the
                                deal
``cpu_seconds``   float32       CPU seconds the worker spent on the row
``strain``        int8[U]       the slot's strain (0-3 C D H S, 4 NT); -1: the slot cannot
                                be reached in this deal (a duel's ``name`` of the open card's
                                suit, anything after a turned jack)
``x``             int16[U]      the minimax outcome code ``X`` from the first lead, team 0's
                                side (0 .. 3 * 162 + 2); ``X // 3`` raw card points
``total``         int16[U]      raw points the tricks hold (162 minus ``undealt``)
``undealt``       int16[U]      raw points of the cards never dealt (duels; 0 otherwise)
``chooser``       int8[U]       the seat whose declaration choice is pending at the first
                                lead (the first hand), -1 if none
``options``       int8[U]       how many choices (1 when none is pending)
``option_action`` int16[U, O]   the action id of each choice (-1: none or padding)
``combos``        int16[U,O,n]  per choice, each seat's counted combinations (tp; raw in
                                belote), blots excluded
``blots``         int16[U, n]   each seat's blot (belote in belote; 0 or 2 tp / 20 raw)
================  ============  ===========================================================

The table files of ``scripts/dd_table.py`` (:func:`open_table`, :func:`read_table`) are
append-only: the line ``BLOTDDT\\n``, one JSON line (``format``, ``preset``, ``seed``,
``dtype``: the row dtype's ``descr`` as a string, ``itemsize``), then the rows as raw
little-endian records of :func:`row_dtype`, in the order they were finished (not sorted by
``index``). A record cut short by a kill is cut off when the file is opened again.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from blot_env.actions import layout_for
from blot_env.cards import cards_of, popcount
from blot_env.codes import KAPUT_VALUE
from blot_env.engine import apply_action, current_seat, deal_random, deck_mask, legal_actions, new_deal
from blot_env.rules_config import PRESETS, RulesConfig, make_rules
from blot_env.state import Contract, Phase, State

from . import solver

FORMAT = 1
"""Version of the table files and rows (module docstring)."""

MAGIC = b"BLOTDDT\n"
"""First line of a table file."""

MAX_OPTIONS = 5
"""Most declaration choices of the first hand at the first lead: ``announce`` none, terz,
50, 100, carre (rules.md 2.4.3 item 1)."""

PRESET_IDS: tuple[str, ...] = tuple(PRESETS)
"""The ``preset`` field of a row indexes this tuple."""


class DDTableError(ValueError):
    """A table file that does not fit the run, or a contract a row cannot score."""


# ---------------------------------------------------------------------------- deals and slots


def deal_state(cfg: RulesConfig, seed: int, index: int) -> State:
    """Deal ``index`` of a table seeded ``seed``: dealer and cards drawn from
    ``numpy.random.default_rng([seed, index])`` (the dealer first), before the first call.

    Raises:
        ValueError: ``seed`` or ``index`` is negative.
    """
    if seed < 0 or index < 0:
        raise ValueError(f"seed and index must be non-negative, got seed {seed}, index {index}")
    rng = np.random.default_rng([seed, index])
    return deal_random(cfg, rng, int(rng.integers(cfg.num_players)))


def has_bids(cfg: RulesConfig) -> bool:
    """Whether the preset's auction has bids (levels, contra): ``bazar``, ``bazar-app``,
    ``belote``; the others choose trump (rules.md 3.x, 4, 5.2)."""
    return layout_for(cfg).has("BID")


def slot_keys(cfg: RulesConfig) -> tuple[Any, ...]:
    """What each slot of a row stands for.

    Presets with bids: the strains of the layout (``int``, 0-3 C D H S, 4 NT), one slot each.
    Trump-choice presets: ``(taker seat, action id of the call that fixed trump)`` for every
    seat and every ``TAKE`` / ``NAME`` action of the layout (slots a deal cannot reach keep
    ``strain == -1``).
    """
    lay = layout_for(cfg)
    if has_bids(cfg):
        return tuple(int(s) for s in lay.strains)
    calls = [a for blk in ("TAKE", "NAME") if lay.has(blk)
             for a in range(lay.blocks[blk].start, lay.blocks[blk].stop)]
    return tuple((seat, a) for seat in range(cfg.num_players) for a in calls)


def contract_state(state: State, seat: int, strain: int, value: int | None = None, kind: str = "num",
                   plus: int = 0, double: int = 0) -> State:
    """The first-lead state of ``state``'s deal (before the first call) under one contract,
    reached by legal calls: passes up to ``seat``, its bid, then ``contra`` by the next seat
    (``double >= 1``) and ``recontra`` by the bidder's partner (``double == 2``), passes to
    the end (presets with bids only).

    Args:
        state: a deal before its first call.
        seat: the declarer.
        strain: 0-3 C D H S, 4 NT.
        value: the bid of a number contract (score-sheet units: tens, raw in belote);
            default the lowest bid.
        kind: ``num``, ``kaput`` or ``kaput_plus``.
        plus: N of kaput+N (tp).
        double: 0 none, 1 contra, 2 recontra.

    Raises:
        ValueError: the preset has no bids, the state is not before the first call, or a
            call is not legal there (the message names it).
    """
    cfg = state.cfg
    lay = layout_for(cfg)
    if not has_bids(cfg):
        raise ValueError(f"{cfg.preset} chooses trump without bids: use first_lead_states")
    if state.phase != Phase.AUCTION or state.history:
        raise ValueError("contract_state needs a deal before its first call")
    if kind == "num":
        call = lay.bid_id(cfg.bid_min if value is None else value, strain)
    elif kind == "kaput":
        call = lay.kaput_id(strain)
    elif kind == "kaput_plus":
        call = lay.kaput_plus_id(plus, strain)
    else:
        raise ValueError(f"kind must be num, kaput or kaput_plus, got {kind!r}")
    s = state

    def do(a: int) -> None:
        nonlocal s
        if a not in legal_actions(s):
            raise ValueError(f"{lay.describe(a)!r} is not legal for seat {current_seat(s)} here")
        s = apply_action(s, a)

    while s.seat != seat:
        do(lay.id("PASS"))
    do(call)
    if double >= 1:
        do(lay.id("CONTRA"))
    if double >= 2:
        do(lay.id("RECONTRA"))
    while s.phase == Phase.AUCTION:
        do(lay.id("PASS"))
    return s


def first_lead_states(state: State) -> dict[int, State]:
    """Per slot (index into :func:`slot_keys`), a state at the first lead of the slot's
    contracts: for presets with bids the first hand's lowest bid in the slot's strain (any
    number contract of the strain gives the same ``X``); for trump choices every outcome of
    the trump choice, found by playing out every legal call sequence. Slots a deal cannot
    reach are absent.

    Raises:
        ValueError: the state is not before its first call.
        RuntimeError: two call sequences fixing the same (taker, call) led to different
            positions (the slot would be ambiguous).
    """
    cfg = state.cfg
    keys = slot_keys(cfg)
    if has_bids(cfg):
        return {u: contract_state(state, state.first_hand, strain) for u, strain in enumerate(keys)}
    if state.phase != Phase.AUCTION or state.history:
        raise ValueError("first_lead_states needs a deal before its first call")
    where = {k: u for u, k in enumerate(keys)}
    out: dict[int, State] = {}
    stack = [state]
    while stack:
        s = stack.pop()
        if s.phase == Phase.AUCTION:
            stack.extend(apply_action(s, a) for a in legal_actions(s))
            continue
        if s.phase != Phase.PLAY:
            continue
        u = where[(s.contract.seat, s.contract.call)]
        if u in out:
            o = out[u]
            if (o.hands, o.face_down, o.unlaid, o.leader, o.pending, o.contract) != \
                    (s.hands, s.face_down, s.unlaid, s.leader, s.pending, s.contract):
                raise RuntimeError(f"slot {keys[u]} reached with two different first-lead positions")
            continue
        out[u] = s
    return out


# ---------------------------------------------------------------------------- rows


def row_dtype(cfg: RulesConfig) -> np.dtype:
    """The structured dtype of one row of ``cfg``'s tables (module docstring, "Rows")."""
    n = cfg.num_players
    u = len(slot_keys(cfg))
    o = 1 if cfg.declarations == "auto" else MAX_OPTIONS
    d = popcount(deck_mask(cfg))
    return np.dtype([
        ("index", "<i8"), ("preset", "i1"), ("dealer", "i1"), ("cards", "i1", (d,)), ("cpu_seconds", "<f4"),
        ("strain", "i1", (u,)), ("x", "<i2", (u,)), ("total", "<i2", (u,)), ("undealt", "<i2", (u,)),
        ("chooser", "i1", (u,)), ("options", "i1", (u,)), ("option_action", "<i2", (u, o)),
        ("combos", "<i2", (u, o, n)), ("blots", "<i2", (u, n)),
    ])


def _deal_cards(state: State) -> list[int]:
    if state.piles:
        cards = [c for p in state.piles for c in p]
    else:
        cards = [c for h in state.start_hands for c in cards_of(h)]
    return cards + list(state.stock)


def build_row(cfg: RulesConfig, seed: int, index: int) -> np.ndarray:
    """Solve deal ``index`` of the table seeded ``seed`` for every slot.

    Returns:
        A 0-d array of :func:`row_dtype` (``row["x"]`` etc. are its fields).

    Raises:
        ValueError: ``seed`` or ``index`` negative.
        RuntimeError: more declaration choices at the first lead than :data:`MAX_OPTIONS`.
    """
    return row_of_deal(deal_state(cfg, seed, index), index)


def row_of_deal(state: State, index: int = -1) -> np.ndarray:
    """The row of any deal before its first call (:func:`build_row` without the seeded
    dealing; ``index`` is written to the row as given).

    Raises:
        ValueError: the state is not before its first call.
        RuntimeError: more declaration choices at the first lead than :data:`MAX_OPTIONS`.
    """
    c0 = time.process_time()
    cfg = state.cfg
    if cfg.preset not in PRESET_IDS or make_rules(cfg.preset) != cfg:
        raise ValueError(f"rows are for the presets as they are, got {cfg.preset} with other knobs")
    dt = row_dtype(cfg)
    row = np.zeros((), dtype=dt)
    row["index"] = index
    row["preset"] = PRESET_IDS.index(cfg.preset)
    row["dealer"] = state.dealer
    row["cards"] = _deal_cards(state)
    row["strain"] = -1
    row["chooser"] = -1
    row["option_action"] = -1
    o_max = dt["option_action"].shape[1]
    codes: dict[tuple, int] = {}  # the same position under another slot (Open Blot's two takers)
    for u, st in first_lead_states(state).items():
        if st.pending:
            opts = legal_actions(st)
            row["chooser"][u] = current_seat(st)
        else:
            opts = [-1]
        if len(opts) > o_max:
            raise RuntimeError(f"deal {index}: {len(opts)} declaration choices at the first lead, room for {o_max}")
        x = None
        info = None
        for k, a in enumerate(opts):
            s1 = solver.advance_declarations(st if a < 0 else apply_action(st, a))
            if x is None:
                key = (s1.hands, s1.face_down, s1.piles, s1.trick, s1.leader, s1.trick_no, s1.tricks,
                       s1.contract.strain, s1.contract.is_kaput)
                if key not in codes:
                    codes[key] = solver.position_code(s1)
                x = codes[key]
            info = solver.combo_info(solver._decl_final(s1))
            row["option_action"][u, k] = a
            row["combos"][u, k] = info.combos
            if k == 0:
                row["blots"][u] = info.blots
            elif tuple(row["blots"][u]) != info.blots:
                raise RuntimeError(f"deal {index}: blots depend on the first hand's declaration")
        row["strain"][u] = st.contract.strain
        row["x"][u] = x
        row["total"][u] = info.total
        row["undealt"][u] = info.undealt
        row["options"][u] = len(opts)
    row["cpu_seconds"] = time.process_time() - c0
    return row


def row_deal(row: np.ndarray) -> State:
    """The deal of a row, before its first call (the state :func:`deal_state` dealt)."""
    cfg = make_rules(PRESET_IDS[int(row["preset"])])
    cards = [int(c) for c in row["cards"]]
    n, k = cfg.num_players, cfg.hand_size
    chunks = [cards[s * k:(s + 1) * k] for s in range(n)]
    hands = [sum(1 << c for c in ch) for ch in chunks]
    piles = tuple(tuple(ch) for ch in chunks) if cfg.auction == "open" else None
    return new_deal(cfg, int(row["dealer"]), hands, cards[n * k:], piles)


# ---------------------------------------------------------------------------- scoring from a row


def _slot_of(cfg: RulesConfig, row: np.ndarray, c: Contract) -> int:
    keys = slot_keys(cfg)
    if has_bids(cfg):
        lay = layout_for(cfg)
        kinds = ("num",) + ("kaput",) * lay.has("KAPUT") + ("kaput_plus",) * lay.has("KAPUT_PLUS")
        if c.kind not in kinds:
            raise DDTableError(f"a {cfg.preset} contract is a bid of kind {' or '.join(kinds)}, got kind {c.kind!r}")
        key: Any = c.strain
    else:
        key = (c.seat, c.call)
    if key not in keys:
        raise DDTableError(f"no slot of {cfg.preset} for contract {c} (slots: {keys})")
    u = keys.index(key)
    if int(row["strain"][u]) < 0:
        raise DDTableError(f"deal {int(row['index'])} cannot reach contract {c} (its slot {key} is empty)")
    if not has_bids(cfg) and int(row["strain"][u]) != c.strain:
        raise DDTableError(f"contract {c} has strain {c.strain}, its slot {key} strain {int(row['strain'][u])}")
    return u


def dd_score(row: np.ndarray, contract: Contract) -> int:
    """The deal score difference, team 0 (seats 0 and 2; 2 players: seat 0) minus team 1, of
    the row's deal played double-dummy under ``contract`` from the first lead: what
    ``solve`` returns at the first-lead state of that contract, turned to team 0's side.

    Score-sheet units (tp for the Armenian presets, raw points for belote; rules.md 2.5, 3-6),
    from :func:`agents.search.solver.leaf_table` (the formulas of
    :func:`blot_env.scoring.score_outcome`) read at the row's ``X``; with a declaration
    choice pending at the first lead, the best choice for the chooser's side.

    Args:
        row: a row of :func:`build_row` or :func:`read_table` (0-d, or one element of a row array).
        contract: presets with bids: any ``num``, ``kaput`` or ``kaput_plus`` contract (seat,
            strain, value in score-sheet units, plus, double; ``call`` is not read); trump
            choices: the contract the engine wrote (``seat`` the taker and ``call`` the call
            that fixed trump select the slot).

    Raises:
        DDTableError: the contract has no slot in the row (a strain the preset lacks, a
            trump choice the deal cannot reach), or a kaput contract whose table is not
            constant off the declarers' sweep (then its score is not a function of the
            number-contract ``X``; no preset's rules do this).
    """
    cfg = make_rules(PRESET_IDS[int(row["preset"])])
    u = _slot_of(cfg, row, contract)
    x = int(row["x"][u])
    total = int(row["total"][u])
    undealt = int(row["undealt"][u])
    blots = tuple(int(b) for b in row["blots"][u])
    chooser = int(row["chooser"][u])
    sign = -1 if chooser >= 0 and chooser % 2 == 1 else 1
    best = None
    for k in range(int(row["options"][u])):
        info = solver.ComboInfo(tuple(int(v) for v in row["combos"][u, k]), blots, undealt, total)
        table = solver.leaf_table(cfg, contract, info)
        v = int(table[_kaput_code(table, contract, x, total) if contract.is_kaput else x])
        if best is None or sign * v > sign * best:
            best = v
    assert best is not None
    return best


def _kaput_code(table: np.ndarray, c: Contract, x: int, total: int) -> int:
    """The code to read a kaput contract's table at (module docstring): ``x`` when the
    declarers sweep, else any other code of a deal the declarers did not sweep (the table must
    be constant there)."""
    sweep = 3 * total + 2 if c.seat % 2 == 0 else 0
    if x == sweep:
        return x
    other = 0 if c.seat % 2 == 0 else 3 * total + 2  # the defenders' sweep: cut short by the early stop
    rest = np.array([y for y in range(3 * total + 3) if y not in (sweep, other)])
    vals = table[rest]
    if np.any(vals != vals[0]):
        raise DDTableError(f"kaput contract {c}: the score of a failed kaput varies with the points, it cannot "
                           f"be read from the number-contract X")
    return int(rest[0])


def kaput_contract(seat: int, strain: int, plus: int = 0, double: int = 0) -> Contract:
    """A ``kaput`` (``plus == 0``) or ``kaput+N`` contract for :func:`dd_score`."""
    return Contract(seat=seat, strain=strain, value=KAPUT_VALUE + plus, kind="kaput_plus" if plus else "kaput",
                    plus=plus, double=double, call=-1)


def number_contract(seat: int, strain: int, value: int, double: int = 0) -> Contract:
    """A number contract for :func:`dd_score` (``value`` in score-sheet units: tens, raw in belote)."""
    return Contract(seat=seat, strain=strain, value=value, kind="num", plus=0, double=double, call=-1)


# ---------------------------------------------------------------------------- table files


def _header(cfg: RulesConfig, seed: int) -> dict:
    dt = row_dtype(cfg)
    return {"format": FORMAT, "preset": cfg.preset, "seed": seed, "dtype": str(dt.descr), "itemsize": dt.itemsize}


def _read_header(f: BinaryIO, path: str | Path) -> dict:
    if f.readline() != MAGIC:
        raise DDTableError(f"{path} is not a double-dummy table (it does not start with {MAGIC!r})")
    try:
        head = json.loads(f.readline())
    except ValueError as e:
        raise DDTableError(f"{path}: unreadable header ({e})") from None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise DDTableError(f"{path}: table format {head.get('format') if isinstance(head, dict) else head!r}, "
                           f"this version reads format {FORMAT}")
    if head.get("preset") not in PRESET_IDS:
        raise DDTableError(f"{path}: unknown preset {head.get('preset')!r}")
    if head.get("dtype") != _header(make_rules(head["preset"]), 0)["dtype"]:
        raise DDTableError(f"{path}: rows of another layout than this version writes for {head['preset']}")
    return head


def read_table(path: str | Path) -> tuple[dict, np.ndarray]:
    """The header and the complete rows of a table file (a row cut short at the end is
    ignored; a deal saved twice is kept once), sorted by ``index``.

    Returns:
        ``(header, rows)``: the JSON header (``format``, ``preset``, ``seed``, ``dtype``,
        ``itemsize``) and a 1-d array of :func:`row_dtype`.

    Raises:
        DDTableError: not a table file, or one of another format or row layout.
        FileNotFoundError: no such file.
    """
    with open(path, "rb") as f:
        head = _read_header(f, path)
        start = f.tell()
        dt = row_dtype(make_rules(head["preset"]))
        size = os.fstat(f.fileno()).st_size
        count = (size - start) // dt.itemsize
        rows = np.fromfile(f, dtype=dt, count=count)
    _, first = np.unique(rows["index"], return_index=True)  # the first row of each deal, by deal
    return head, rows[first]


def open_table(path: str | Path, cfg: RulesConfig, seed: int) -> tuple[BinaryIO, np.ndarray]:
    """Open a table file for appending rows of ``cfg`` seeded ``seed`` (created with its
    header if missing), after cutting off a row cut short by a kill.

    Returns:
        The file (binary, append mode) and the rows it already holds (see :func:`read_table`).

    Raises:
        DDTableError: the file holds a table of another preset or seed, or is no table file.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if not p.exists() or p.stat().st_size == 0:
        with open(p, "wb") as f:
            f.write(MAGIC + json.dumps(_header(cfg, seed)).encode() + b"\n")
            f.flush()
            os.fsync(f.fileno())
        return open(p, "ab"), np.zeros(0, dtype=row_dtype(cfg))
    with open(p, "rb") as f:
        head = _read_header(f, p)
        start = f.tell()
    if head["preset"] != cfg.preset or head["seed"] != seed:
        raise DDTableError(f"{p} holds the table of preset {head['preset']} seed {head['seed']}, not "
                           f"{cfg.preset} seed {seed}: choose another output file")
    item = row_dtype(cfg).itemsize
    good = start + (p.stat().st_size - start) // item * item
    if good < p.stat().st_size:
        with open(p, "r+b") as f:
            f.truncate(good)
    return open(p, "ab"), read_table(p)[1]


def append_row(f: BinaryIO, row: np.ndarray) -> None:
    """Append one row in a single write, flushed to disk."""
    f.write(np.asarray(row).tobytes())
    f.flush()
    os.fsync(f.fileno())


# ---------------------------------------------------------------------------- pool task


@dataclass(frozen=True)
class TableJob:
    """What every task of a table run shares (sent once to each worker of
    :func:`agents.eval.board_pool.make_pool`)."""

    cfg: RulesConfig
    seed: int


def solve_task(index: int) -> np.ndarray:
    """The row of deal ``index`` of the worker's :class:`TableJob` (a pool task of
    :func:`agents.eval.board_pool.run_tasks`)."""
    from agents.eval.board_pool import worker_job

    job: TableJob = worker_job()
    return build_row(job.cfg, job.seed, index)


__all__ = [
    "FORMAT",
    "MAGIC",
    "MAX_OPTIONS",
    "PRESET_IDS",
    "DDTableError",
    "TableJob",
    "append_row",
    "build_row",
    "contract_state",
    "dd_score",
    "deal_state",
    "first_lead_states",
    "has_bids",
    "kaput_contract",
    "number_contract",
    "open_table",
    "read_table",
    "row_deal",
    "row_dtype",
    "row_of_deal",
    "slot_keys",
    "solve_task",
]
