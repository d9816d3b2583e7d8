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
import io
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from .errors import RecordError
from .record import MATCH_FORMAT, compare_result, iter_records, replay_record


def _deals(where: str, rec: Any) -> Iterator[tuple[str, Any]]:
    """The deal records inside one record of a file: itself, or a match record's deals (which
    take the match's ``preset`` and ``rules`` where they name none)."""
    if not (isinstance(rec, dict) and rec.get("format") == MATCH_FORMAT):
        yield where, rec
        return
    deals = rec.get("deals")
    if not isinstance(deals, list):
        yield where, RecordError(f'field "deals": a {MATCH_FORMAT} record needs a list of deal records, '
                                 f"got {type(deals).__name__}")
        return
    for j, deal in enumerate(deals):
        if isinstance(deal, dict):
            deal = {"preset": rec.get("preset"), "rules": rec.get("rules")} | deal
        yield where + (f" deal {j}" if len(deals) > 1 else ""), deal


def replay_file(path: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> tuple[int, int]:
    """Replay every record of a file, streaming it; returns ``(records, failures)``.

    A file that cannot be read counts as ``(0, 1)``; one that holds no record prints a
    message and counts as ``(0, 1)`` too.
    """
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
                fails += _replay_one(where, deal, out, err)
    except RecordError as e:
        print(f"{path}: {e}" if str(path) not in str(e) else str(e), file=err)
        return count, fails + 1
    if count == 0:
        print(f"{path}: no records (an empty file); expected JSON deal records (docs/deal-record.md)", file=err)
        return 0, 1
    return count, fails


def _replay_one(where: str, deal: Any, out: TextIO, err: TextIO) -> int:
    """Replay one deal record, print its result; 1 when it fails, else 0."""
    try:
        _, result = replay_record(deal)
    except RecordError as e:
        print(f"{where}: {e}", file=err)
        return 1
    except Exception as e:  # a CLI prints one line per bad record, never a traceback
        print(f"{where}: cannot replay ({type(e).__name__}: {e})", file=err)
        return 1
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
    args = ap.parse_args(argv)
    total = fails = unreadable = 0
    for path in args.records:
        out = io.StringIO() if args.quiet else sys.stdout
        n, f = replay_file(path, out=out)
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
