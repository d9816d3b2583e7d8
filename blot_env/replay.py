"""``blot-replay RECORDS...`` (or ``python -m blot_env.replay``): replay deal records
(docs/deal-record.md).

Prints one JSON result per record on stdout; exits 0 when every record is legal and every
given ``result`` matches, 1 otherwise (messages on stderr name the file, the record, the
action index, the action, the seat and the reason; a file that cannot be read, is not JSON
text or holds no record is an error too), 2 on bad usage. ``.jsonl`` files are streamed: one
line in memory at a time.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import numpy as np

from .actions import layout_for
from .cards import RANKS, SUITS
from .engine import deck_mask
from .errors import ConfigError, RecordError
from .record import FORMAT, MATCH_FORMAT, compare_result, iter_records, replay_record, rules_from_record
from .rules_config import RulesConfig
from .variants import has_piles

ENGINES = ("compiled", "reference")
#: card name -> id, for the names records write (``parse_card`` takes the other spellings)
_CARD = {r + s: si * 8 + ri for si, s in enumerate(SUITS) for ri, r in enumerate(RANKS)}


class _Unsure(Exception):
    """The fast path cannot vouch for a record: the reference replay decides (and explains)."""


class CompiledReplay:
    """Replay deal records on the compiled engine (:class:`blot_env.batched.deal_row.DealRow`:
    one compiled call per record), with the reference engine's results and messages.

    A record is parsed on a short path (cached rules, card and action strings looked up in
    tables) and replayed in one compiled call. Whatever that path cannot vouch for (a field it
    does not expect, a spelling it does not know, a card problem, an illegal action, actions
    after the end, rules that do not fit a compiled row) is handed to
    :func:`blot_env.record.replay_record`, which accepts it or raises its
    :class:`~blot_env.errors.RecordError` naming the field, the action and the seat. So the
    results and the messages are the reference replay's (``tests/test_replay_cli.py`` checks
    both engines on the golden and conformance records).
    """

    def __init__(self) -> None:
        self._cfgs: dict[tuple, RulesConfig] = {}
        self._rows: dict[RulesConfig, tuple] = {}
        self.compiled = 0
        """Records replayed on the compiled engine."""
        self.by_reference = 0
        """Records handed to the reference replay (malformed, illegal, or rules too big for a row)."""

    def replay(self, rec: object) -> dict | None:
        """The result JSON of ``rec`` (None for an unfinished deal), as ``replay_record(rec)[1]``.

        Raises:
            RecordError: as :func:`blot_env.record.replay_record`.
        """
        try:
            result = self._fast(rec)
        except _Unsure:
            self.by_reference += 1
            return replay_record(rec)[1]
        self.compiled += 1
        return result

    def _setup(self, rec: dict):
        rules = rec.get("rules")
        try:
            key = (rec.get("preset"), tuple(sorted(rules.items())) if type(rules) is dict else rules)
            cfg = self._cfgs.get(key)
        except (TypeError, AttributeError):  # unhashable knob values: the reference reads them
            raise _Unsure from None
        if cfg is None:
            try:
                cfg = self._cfgs[key] = rules_from_record(rec)
            except RecordError:
                raise _Unsure from None
        hit = self._rows.get(cfg)
        if hit is None:
            from .batched.deal_row import DealRow

            lay = layout_for(cfg)
            try:
                row = DealRow(cfg)
            except ConfigError:  # rules whose deals may outgrow a compiled row
                row = None
            ids = {text: i for i, text in enumerate(lay.strings)}
            hit = self._rows[cfg] = (row, lay, ids, has_piles(cfg), deck_mask(cfg))
        if hit[0] is None:
            raise _Unsure
        return cfg, hit

    def _fast(self, rec: object) -> dict | None:
        if type(rec) is not dict or rec.get("format") != FORMAT:
            raise _Unsure
        cfg, (row, lay, ids, piles, deck) = self._setup(rec)
        n = cfg.num_players
        dealer, hands, stock = rec.get("dealer"), rec.get("hands"), rec.get("stock", "")
        texts = rec.get("actions")
        if (type(dealer) is not int or not 0 <= dealer < n or type(hands) is not list or len(hands) != n
                or type(texts) is not list):
            raise _Unsure
        try:
            parsed = [[_CARD[c] for c in h.split()] for h in hands]
            stock_ids = [_CARD[c] for c in stock.split()]
            actions = np.array([ids[a] for a in texts], dtype=np.int64)
        except (KeyError, AttributeError, TypeError):
            raise _Unsure from None
        if any(len(h) != cfg.hand_size for h in parsed):
            raise _Unsure
        # seat after seat (ascending ids; Open Blot: pile order), then the stock: lay_cards' order
        laid = [c for h in parsed for c in (h if piles else sorted(h))] + stock_ids
        seen = 0
        for c in laid:
            seen |= 1 << c
        if seen != deck or len(laid) != deck.bit_count():  # a card missing, twice, or not in the deck
            raise _Unsure
        if row.replay(dealer, np.array(laid, dtype=np.int64), actions) != len(actions):
            raise _Unsure  # an illegal action, or actions after the end: the reference explains
        result = row.result()
        return None if result is None else result.to_json(lay.describe)


def _deals(where: str, rec: Any) -> Iterator[tuple[str, Any]]:
    """The deal records inside one record of a file: itself, or a match record's deals (which
    take the match's ``preset`` and ``rules`` where they name none)."""
    if not (isinstance(rec, dict) and rec.get("format") == MATCH_FORMAT):
        yield where, rec
        return
    deals = rec.get("deals")
    if not isinstance(deals, list) or not deals:
        got = "an empty list" if isinstance(deals, list) else type(deals).__name__
        yield where, RecordError(f'field "deals": a {MATCH_FORMAT} record needs a list of deal records, got {got}')
        return
    for j, deal in enumerate(deals):
        if isinstance(deal, dict):
            deal = {"preset": rec.get("preset"), "rules": rec.get("rules")} | deal
        yield where + (f" deal {j}" if len(deals) > 1 else ""), deal


def replay_file(path: str, out: TextIO | None = sys.stdout, err: TextIO = sys.stderr,
                engine: str = "compiled") -> tuple[int, int]:
    """Replay every record of a file, streaming it; returns ``(records, failures)``.

    Results go to ``out`` as one JSON line each (``None``: not written), messages to ``err``.

    ``engine``: ``"compiled"`` (:class:`CompiledReplay`, the default) or ``"reference"``
    (:func:`blot_env.record.replay_record` only); both print the same results and messages.
    A file that cannot be read counts as ``(0, 1)``; one that holds no record prints a
    message and counts as ``(0, 1)`` too.

    Raises:
        ValueError: an unknown ``engine``.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    replay = CompiledReplay().replay if engine == "compiled" else (lambda rec: replay_record(rec)[1])
    count = fails = 0
    try:
        for where0, rec in iter_records(path):
            for where, deal in _deals(where0, rec):
                where = f"{path}: {where}"
                count += 1
                if isinstance(deal, RecordError):
                    print(f"{where}: {deal}", file=err)
                    fails += 1
                    continue
                fails += _replay_one(where, deal, replay, out, err)
    except RecordError as e:
        print(f"{path}: {e}" if str(path) not in str(e) else str(e), file=err)
        return count, fails + 1
    if count == 0:
        print(f"{path}: no records (an empty file); expected JSON deal records (docs/deal-record.md)", file=err)
        return 0, 1
    return count, fails


def _replay_one(where: str, deal: Any, replay, out: TextIO | None, err: TextIO) -> int:
    """Replay one deal record, print its result; 1 when it fails, else 0."""
    try:
        result = replay(deal)
    except RecordError as e:
        print(f"{where}: {e}", file=err)
        return 1
    except Exception as e:  # a CLI prints one line per bad record, never a traceback
        print(f"{where}: cannot replay ({type(e).__name__}: {e})", file=err)
        return 1
    if out is not None:
        print(json.dumps(result), file=out)
    if result is None:
        print(f"{where}: the deal is not finished", file=err)
        return 1
    if isinstance(deal, dict) and "result" in deal:
        diffs = compare_result(deal["result"], result)
        for d in diffs:
            print(f"{where}: {d}", file=err)
        return 1 if diffs else 0
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="blot-replay", description=__doc__.splitlines()[0].replace("``", ""))
    ap.add_argument("records", nargs="+", help="record files: .json (object or list) or .jsonl (one per line)")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print results, only errors")
    ap.add_argument("--engine", choices=ENGINES, default="compiled",
                    help="compiled (default, the fast one) or reference; the same results and messages")
    args = ap.parse_args(argv)
    total = fails = unreadable = 0
    for path in args.records:
        n, f = replay_file(path, out=None if args.quiet else sys.stdout, engine=args.engine)
        if n == 0 and f:  # the file itself could not be read, or held nothing
            unreadable += 1
        else:
            total += n
            fails += f
    bad = f"; {unreadable} file(s) could not be read or held no record" if unreadable else ""
    print(f"{total - fails} of {total} records replayed with their results{bad}", file=sys.stderr)
    return 1 if fails or unreadable else 0


if __name__ == "__main__":
    sys.exit(main())
