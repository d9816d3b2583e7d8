"""Deal records (docs/deal-record.md): parse, validate, replay, and write.

``load_records(path)`` reads a ``.json`` (one record or a list) or ``.jsonl`` file;
``replay_record(obj)`` plays the actions through the engine and returns the final state
and result; ``make_record(state)`` writes the record of a deal so far.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .actions import UnknownActionError, layout_for
from .cards import cards_of, cards_str, mask_of, parse_cards
from .engine import apply_action, current_seat, deal_result, is_terminal, new_deal
from .errors import ConfigError, IllegalActionError, RecordError
from .rules_config import KNOBS, PRESETS, RulesConfig, make_rules
from .state import State

FORMAT = "blot-record/1"
MATCH_FORMAT = "blot-match/1"
RESULT_FIELDS = ("contract", "made", "tricks", "card_points", "combinations", "score")


def format_problem(fmt: Any) -> str:
    """Why a ``format`` value is not this version's deal-record format (docs/deal-record.md):
    another version of the record or match format, a match record, or no format at all."""
    supported = f'this version of blot-env reads "{FORMAT}" deal records and "{MATCH_FORMAT}" match records'
    if fmt == MATCH_FORMAT:
        return f'"{MATCH_FORMAT}" is a match record, not a deal record: replay its "deals" (blot-replay does)'
    if isinstance(fmt, str) and fmt.split("/")[0] in ("blot-record", "blot-match") and fmt.count("/") == 1:
        return f"{fmt!r} is another version of the format; {supported} (docs/deal-record.md)"
    return f'expected "{FORMAT}", got {fmt!r}'


def rules_from_record(obj: dict) -> RulesConfig:
    preset = obj.get("preset")
    if not isinstance(preset, str):
        raise RecordError(f'field "preset": expected a preset id string, got {preset!r}')
    rules = obj.get("rules")
    if rules is None:  # absent or null: no overrides
        rules = {}
    if not isinstance(rules, dict):
        raise RecordError(f'field "rules": expected an object of knob overrides, got {type(rules).__name__}')
    unknown = sorted(set(rules) - set(KNOBS) - {"preset"})
    if unknown:
        raise RecordError(f'field "rules": unknown knob(s) {unknown}')
    if "preset" in rules and rules["preset"] != preset:
        raise RecordError(f'field "rules": its "preset" is {rules["preset"]!r} but the record\'s "preset" is '
                          f"{preset!r}; leave it out or make them agree")
    knobs = {k: v for k, v in rules.items() if k != "preset"}
    try:
        if preset not in PRESETS and set(knobs) == set(KNOBS) - {"preset"}:
            # a custom rules value: the record lists every knob (docs/deal-record.md)
            return RulesConfig(preset=preset, **knobs)
        return make_rules(preset, **knobs)
    except ConfigError as e:
        field = "preset" if "preset" in str(e) and "unknown preset" in str(e) else "rules"
        raise RecordError(f'field "{field}": {e}') from None
    except TypeError as e:
        raise RecordError(f'field "rules": {e}') from None


def _parse_card_list(text: Any, field: str) -> list[int]:
    if not isinstance(text, str):
        raise RecordError(f'field "{field}": expected a string of cards, got {type(text).__name__}')
    try:
        return parse_cards(text)
    except ValueError as e:
        raise RecordError(f'field "{field}": {e}') from None


def initial_state(obj: dict) -> State:
    """The deal's state before its first action, from a record's deal fields.

    Raises:
        RecordError: a field is missing or malformed (the message names it).
    """
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    if "format" not in obj:
        raise RecordError(f'field "format": missing; a deal record starts with "format": "{FORMAT}"')
    fmt = obj["format"]
    if fmt != FORMAT:
        raise RecordError(f'field "format": {format_problem(fmt)}')
    cfg = rules_from_record(obj)
    dealer = obj.get("dealer")
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < cfg.num_players:
        raise RecordError(f'field "dealer": expected a seat 0..{cfg.num_players - 1}, got {dealer!r}')
    hands = obj.get("hands")
    if not isinstance(hands, list) or len(hands) != cfg.num_players:
        raise RecordError(f'field "hands": expected a list of {cfg.num_players} card strings')
    parsed = [_parse_card_list(h, f"hands[{i}]") for i, h in enumerate(hands)]
    stock = _parse_card_list(obj.get("stock", ""), "stock")
    from .variants import hands_from_record

    try:
        masks, stock_ids, piles = hands_from_record(cfg, parsed, stock)
        for i, cards in enumerate(parsed):
            if len(set(cards)) != len(cards):
                raise ValueError(f"hands[{i}] repeats a card")
        return new_deal(cfg, dealer, masks, stock_ids, piles or None)
    except ValueError as e:
        raise RecordError(f'field "hands"/"stock": {e}') from None


def parse_actions(obj: dict, cfg: RulesConfig) -> list[int]:
    actions = obj.get("actions")
    if not isinstance(actions, list):
        raise RecordError('field "actions": expected a list of action strings')
    lay = layout_for(cfg)
    ids = []
    for i, a in enumerate(actions):
        try:
            ids.append(lay.parse(a))
        except UnknownActionError as e:
            raise RecordError(f'field "actions"[{i}]: {e}') from None
    return ids


def replay_record(obj: dict) -> tuple[State, dict | None]:
    """Play a record's actions. Returns the final state and its result JSON (None if unfinished).

    Raises:
        RecordError: malformed record, an illegal action (with its index, string, seat and
            reason) or actions after the end of the deal.
    """
    state = initial_state(obj)
    lay = layout_for(state.cfg)
    texts = obj.get("actions")
    for i, a in enumerate(parse_actions(obj, state.cfg)):
        if is_terminal(state):
            raise RecordError(f'action {i} "{texts[i]}": the deal is already over ({len(texts) - i} extra action(s))')
        seat = current_seat(state)
        try:
            state = apply_action(state, a)
        except IllegalActionError as e:
            raise RecordError(f'action {i} "{lay.describe(a)}" by seat {seat}: {e.reason}') from None
    if not is_terminal(state):
        return state, None
    return state, deal_result(state).to_json(lay.describe)


def compare_result(expected: Any, got: dict) -> list[str]:
    """Fields of a record's ``result`` that differ from the replay's, and fields that are no
    result field (a misspelt field would otherwise go unchecked)."""
    if not isinstance(expected, dict):
        return [f'"result": expected an object, got {type(expected).__name__}']
    diffs = [f'"result.{k}": not a result field; the fields are {", ".join(RESULT_FIELDS)}'
             for k in expected if k not in RESULT_FIELDS]
    for k in RESULT_FIELDS:
        if k in expected and expected[k] != got[k]:
            diffs.append(f'"result.{k}": record has {json.dumps(expected[k])}, replay gives {json.dumps(got[k])}')
    return diffs


def make_record(state: State, include_result: bool = True) -> dict:
    """The deal record (docs/deal-record.md) of a deal so far; ``result`` when it is over."""
    cfg = state.cfg
    lay = layout_for(cfg)
    from .variants import record_hands

    hands, stock = record_hands(state)
    rec = {
        "format": FORMAT,
        "preset": cfg.preset,
        "rules": rules_to_record(cfg),
        "dealer": state.dealer,
        "hands": hands,
        "stock": stock,
        "actions": [lay.describe(a) for a in state.history],
    }
    if include_result and is_terminal(state):
        rec["result"] = deal_result(state).to_json(lay.describe)
    return rec


def rules_to_record(cfg: RulesConfig) -> dict:
    """The ``"rules"`` field of a record of ``cfg``: the knobs that differ from its preset, plus
    ``declarations`` and ``target`` always; every knob when ``cfg.preset`` is not a known preset
    (a custom rules value), which :func:`rules_from_record` accepts back."""
    base = PRESETS.get(cfg.preset)
    if base is None:
        return {k: getattr(cfg, k) for k in KNOBS if k != "preset"}
    diff = {k: getattr(cfg, k) for k in KNOBS if k != "preset" and getattr(cfg, k) != getattr(base, k)}
    return diff | {k: getattr(cfg, k) for k in ("declarations", "target")}


def _decode_error(path: str | Path, ln: int, e: UnicodeDecodeError) -> RecordError:
    return RecordError(f"cannot read {path}: line {ln} is not UTF-8 text (byte 0x{e.object[e.start]:02x}); "
                       "a deal-record file is JSON text (.json or .jsonl), is this a binary file?")


def _open_binary(path: str | Path):
    try:
        return open(path, "rb")
    except IsADirectoryError:
        raise RecordError(f"cannot read {path}: it is a directory") from None
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None


def _decode(path: str | Path, ln: int, raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _decode_error(path, ln + raw.count(b"\n", 0, e.start), e) from None
    if "\x00" in text:
        at = ln + raw.count(b"\n", 0, raw.index(b"\x00"))
        raise RecordError(f"cannot read {path}: line {at} holds NUL bytes; a deal-record file is JSON text "
                          "(.json or .jsonl), is this a binary file?")
    return text


def _lines(path: str | Path, lines, first: int = 1) -> Iterator[tuple[str, Any]]:
    for ln, raw in enumerate(lines, first):
        line = _decode(path, ln, raw) if isinstance(raw, bytes) else raw
        if not line.strip():
            continue
        try:
            yield f"line {ln}", json.loads(line)
        except json.JSONDecodeError as e:
            yield f"line {ln}", RecordError(f"not valid JSON ({e.msg} at column {e.colno})")


def iter_records(path: str | Path) -> Iterator[tuple[str, Any]]:
    """The records of a file, one at a time: ``(where, record)`` pairs.

    A ``.jsonl`` file is read line by line, in constant memory; ``where`` is ``"line N"``, and
    a line that is not valid JSON yields a :class:`RecordError` in place of the record (the
    next lines are still read). Any other file is parsed whole: one JSON object or a JSON
    list of records (``where`` is ``"record i"``), or, when it holds one JSON value per line,
    JSON Lines as above.

    Raises:
        RecordError: the file cannot be opened, is not UTF-8 text (a binary file; the message
            names the file and the line), or, parsed whole, is not valid JSON.
    """
    with _open_binary(path) as fh:
        if Path(path).suffix == ".jsonl":
            yield from _lines(path, fh)
            return
        text = _decode(path, 1, fh.read())
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and e.lineno > 1:  # JSON Lines in a file not named .jsonl
            yield from _lines(path, text.splitlines())
            return
        raise RecordError(f"not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    for i, rec in enumerate(obj if isinstance(obj, list) else [obj]):
        yield f"record {i}", rec


def load_records(path: str | Path) -> list[Any]:
    """Every record of a file as a list (see :func:`iter_records`, which streams them).

    Raises:
        RecordError: the file cannot be read, is not UTF-8 text, or holds invalid JSON (with
            the line number).
    """
    out = []
    for where, rec in iter_records(path):
        if isinstance(rec, RecordError):
            raise RecordError(f"{where}: {rec}")
        out.append(rec)
    return out


def deal_fields(state: State) -> dict:
    """The ``dealer``, ``hands`` and ``stock`` fields of a deal (a deal-suite entry)."""
    from .variants import record_hands

    hands, stock = record_hands(state)
    return {"dealer": state.dealer, "hands": hands, "stock": stock}


__all__ = [
    "cards_of",
    "cards_str",
    "compare_result",
    "deal_fields",
    "initial_state",
    "iter_records",
    "load_records",
    "make_record",
    "mask_of",
    "replay_record",
]
