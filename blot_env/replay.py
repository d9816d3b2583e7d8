"""``python -m blot_env.replay RECORD.json [...]``: replay deal records (spec/deal-record.md).

Prints one JSON result per record on stdout; exits 0 when every record is legal and every
given ``result`` matches, 1 otherwise (messages on stderr name the file, the record, the
action index, the action, the seat and the reason), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import RecordError
from .record import MATCH_FORMAT, compare_result, load_records, replay_record


def replay_file(path: str, out=sys.stdout, err=sys.stderr) -> tuple[int, int]:
    """Replay every record of a file; returns (records, failures)."""
    try:
        records = load_records(path)
    except RecordError as e:
        print(f"{path}: {e}", file=err)
        return 0, 1
    count = fails = 0
    for i, rec in enumerate(records):
        deals = rec.get("deals") if isinstance(rec, dict) and rec.get("format") == MATCH_FORMAT else [rec]
        if not isinstance(deals, list):
            print(f'{path}: record {i}: field "deals": a {MATCH_FORMAT} record needs a list of deal records, '
                  f"got {type(deals).__name__}", file=err)
            count += 1
            fails += 1
            continue
        for j, deal in enumerate(deals):
            where = f"{path}: record {i}" + (f" deal {j}" if len(deals) > 1 else "")
            count += 1
            try:
                if isinstance(deal, dict) and isinstance(rec, dict) and deal is not rec:
                    deal = {"preset": rec.get("preset"), "rules": rec.get("rules")} | deal
                _, result = replay_record(deal)
            except RecordError as e:
                print(f"{where}: {e}", file=err)
                fails += 1
                continue
            except Exception as e:  # a CLI prints one line per bad record, never a traceback
                print(f"{where}: cannot replay ({type(e).__name__}: {e})", file=err)
                fails += 1
                continue
            print(json.dumps(result), file=out)
            if result is None:
                print(f"{where}: the deal is not finished", file=err)
                fails += 1
                continue
            if isinstance(deal, dict) and "result" in deal:
                diffs = compare_result(deal["result"], result)
                if diffs:
                    fails += 1
                    for d in diffs:
                        print(f"{where}: {d}", file=err)
    return count, fails


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m blot_env.replay", description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", help="record files: .json (object or list) or .jsonl")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print results, only errors")
    args = ap.parse_args(argv)
    total = fails = unreadable = 0
    import io

    for path in args.records:
        out = io.StringIO() if args.quiet else sys.stdout
        n, f = replay_file(path, out=out)
        if n == 0 and f:  # the file itself could not be read
            unreadable += 1
        else:
            total += n
            fails += f
    bad = f"; {unreadable} file(s) could not be read" if unreadable else ""
    print(f"{total - fails} of {total} records replayed with their results{bad}", file=sys.stderr)
    return 1 if fails or unreadable else 0


if __name__ == "__main__":
    sys.exit(main())
