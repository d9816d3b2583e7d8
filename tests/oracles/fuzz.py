"""Property-based fuzz targets: every input a user hands over (docs/reliability.md).

Each :class:`Target` is a property over Hypothesis-generated inputs, most of them mutations
of valid inputs (golden and random-play deal records, the shipped training configs, deal
suites, save files of board records), so that the fuzzer gets past the first check. The
property: the code under test either accepts the input (and then behaves: a replay gives
the same result on both engines, an accepted rules config plays a deal, a refused action
leaves the env as it was) or refuses it with one of the target's ``allowed`` errors, whose
message is not empty. Anything else (an ``IndexError``, ``KeyError``, ``AttributeError`` or
``TypeError`` from deep inside, a state changed by a refused action, the two replay engines
disagreeing) is a failure.

The same targets run in two profiles:

* ``tests/test_fuzz.py``: each target's Hypothesis test with a small ``max_examples``
  (profile ``fuzz-ci``), as part of the test suite;
* ``scripts/fuzz.py --cases N``: case ``i`` of a target is the Hypothesis example built from
  the bytes of ``numpy.random.default_rng([seed, target, i])`` (``fuzz_one_input``), so a
  long run is resumable and every failure reproducible from its case number.

Importable as ``oracles.fuzz`` with ``tests/`` on ``sys.path``.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import math
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from blot_env.cards import RANKS, SUITS
from blot_env.engine import apply_action, deal_random, deal_result, is_terminal, legal_actions
from blot_env.errors import BlotError, ConfigError, IllegalActionError, RecordError
from blot_env.record import FORMAT, MATCH_FORMAT, load_records, make_record, replay_record
from blot_env.rules_config import _LITERALS, KNOBS, PRESETS, make_rules, with_overrides

from .invariants import choose

REPO = Path(__file__).resolve().parents[2]
PRESET_IDS = tuple(PRESETS)


class FuzzFailure(AssertionError):
    """A property of a fuzz target failed (an input accepted wrongly, a state changed by a
    refused input, two engines disagreeing, an error without a message)."""


def _check(ok: bool, msg: str) -> None:
    if not ok:
        raise FuzzFailure(msg)


def outcome(fn: Callable[[], Any], allowed: tuple[type[BaseException], ...], what: str) -> tuple:
    """``("ok", value)`` of ``fn()``, or ``("error", type name, message)`` when it raises one of
    ``allowed`` with a message. Any other exception propagates (a failure of the target).

    Raises:
        FuzzFailure: an allowed error with an empty message.
    """
    try:
        return ("ok", fn())
    except allowed as e:
        msg = str(e)
        _check(bool(msg.strip()), f"{what}: {type(e).__name__} without a message")
        return ("error", type(e).__name__, msg)


_TMP: list[Path] = []


def tmp_dir() -> Path:
    """One scratch folder per process for the files the targets write."""
    if not _TMP:
        _TMP.append(Path(tempfile.mkdtemp(prefix="blot-fuzz-")))
    return _TMP[0]


# --------------------------------------------------------------------------- generic values

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
"""Any JSON value (NaN and infinities included, as Python's ``json`` reads them)."""

CARDS = tuple(r + s for s in SUITS for r in RANKS)
CARD_TOKENS = st.sampled_from(CARDS) | st.text(max_size=4) | st.sampled_from(
    ["10H", "jh", "Jh", "XX", "", "1", "TT", "AH,", "JHH", "0S", "10", "7", "J", "\u00a0", "JH\x00"])


@cache
def _all_action_strings() -> tuple[str, ...]:
    from blot_env.actions import layout_for

    out: set[str] = set()
    for p in PRESET_IDS:
        out.update(layout_for(make_rules(p)).strings)
    return tuple(sorted(out))


ACTION_TOKENS = (st.sampled_from(_all_action_strings()) | st.sampled_from(
    ["PLAY JH", "play 10h", "play  JH", " pass ", "bid 9h", "bid kaput nt", "bid 8", "play", "take it",
     "announce", "name", "bid 9NT extra"]) | st.text(max_size=12))


def _mutate_bytes(draw: Any, raw: bytes, max_ops: int = 3, insert: bool = True) -> bytes:
    """``raw`` after a few byte-level edits: truncation, flips, deletions, copies of a range
    and (``insert``) random bytes."""
    buf = bytearray(raw)
    kinds = ["truncate", "flip", "delete", "copy"] + (["insert"] if insert else [])
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(kinds))
        n = len(buf)
        i = draw(st.integers(0, max(n - 1, 0)))
        if kind == "truncate":
            del buf[i:]
        elif kind == "flip" and n:
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete" and n:
            del buf[i:i + draw(st.integers(1, 16))]
        elif kind == "copy" and n:
            j = draw(st.integers(0, n - 1))
            buf[j:j] = buf[i:i + draw(st.integers(1, 32))]
        elif kind == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=8))
    return bytes(buf)


# --------------------------------------------------------------------------- record corpus


def _random_record(preset: str, seed: int, **overrides: Any) -> dict:
    cfg = make_rules(preset, **overrides)
    rng = np.random.default_rng([seed, 17])
    s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
    while not is_terminal(s):
        s = apply_action(s, choose(s, legal_actions(s), rng, 0.5))
    return make_record(s)


@cache
def record_corpus() -> tuple[dict, ...]:
    """Valid deal records: the golden and conformance records of tests/, two random-play
    records per preset (and per declaration mode of bazar), and a ``blot-match/1`` record."""
    out: list[dict] = []
    tests = REPO / "tests"
    for folder in ("golden", "golden_2p", "golden_belote"):
        for p in sorted((tests / folder).glob("*.json")):
            out.extend(r for r in load_records(p) if isinstance(r, dict))
    for p in sorted((tests / "conformance_data").glob("*.jsonl")):
        out.extend(load_records(p)[:3])
    for i, p in enumerate(PRESET_IDS):
        out += [_random_record(p, i), _random_record(p, 100 + i)]
    out.append(_random_record("bazar", 7, declarations="auto"))
    from blot_env.env import raw_env

    env = raw_env("duel-app", episode="match", max_deals=2)
    env.reset(seed=3)
    while env.agents:
        a = env.agent_selection
        if env.terminations[a] or env.truncations[a]:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(env.observe(a)["action_mask"])[0]))
    out.append(env.match_record())
    return tuple(out)


def deals_of(preset: str) -> list[dict]:
    """The ``dealer``/``hands``/``stock`` of the corpus records of ``preset`` (suite entries)."""
    return [{"dealer": r["dealer"], "hands": list(r["hands"]), "stock": r.get("stock", "")}
            for r in record_corpus() if r.get("format") == FORMAT and r.get("preset") == preset]


FORMATS = st.sampled_from([FORMAT, FORMAT, "blot-record/0", "blot-record/2", "blot-record/1.1", "blot-record/",
                           MATCH_FORMAT, "", "BLOT-RECORD/1", FORMAT + " "]) | JSON


def _mutate_cards(draw: Any, text: Any) -> Any:
    if not isinstance(text, str) or draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    cards = text.split()
    op = draw(st.sampled_from(["replace", "drop", "add", "dup", "spacing", "case", "shuffle"]))
    if op == "replace" and cards:
        cards[draw(st.integers(0, len(cards) - 1))] = draw(CARD_TOKENS)
    elif op == "drop" and cards:
        del cards[draw(st.integers(0, len(cards) - 1))]
    elif op == "add":
        cards.insert(draw(st.integers(0, len(cards))), draw(CARD_TOKENS))
    elif op == "dup" and cards:
        cards.append(cards[draw(st.integers(0, len(cards) - 1))])
    elif op == "spacing":
        return draw(st.sampled_from(["  ", "\t", ",", ", ", "\n"])).join(cards)
    elif op == "case":
        return " ".join(cards).lower()
    elif op == "shuffle":
        cards = draw(st.permutations(cards))
    return " ".join(cards)


def _mutate_deal_fields(draw: Any, rec: dict) -> None:
    """One edit of ``dealer``, ``hands`` or ``stock`` (in place)."""
    op = draw(st.sampled_from(["dealer", "hand", "hand", "swap", "hands_len", "stock", "hands_junk"]))
    hands = rec.get("hands")
    if op == "dealer":
        rec["dealer"] = draw(st.integers(-2, 5) | JSON)
    elif op == "hand" and isinstance(hands, list) and hands:
        i = draw(st.integers(0, len(hands) - 1))
        hands[i] = _mutate_cards(draw, hands[i])
    elif op == "swap" and isinstance(hands, list) and len(hands) > 1:
        i, j = draw(st.integers(0, len(hands) - 1)), draw(st.integers(0, len(hands) - 1))
        if isinstance(hands[i], str) and isinstance(hands[j], str) and hands[i] and hands[j]:
            a, b = hands[i].split(), hands[j].split()
            ka, kb = draw(st.integers(0, len(a) - 1)), draw(st.integers(0, len(b) - 1))
            a[ka], b[kb] = b[kb], a[ka]
            hands[i], hands[j] = " ".join(a), " ".join(b)
    elif op == "hands_len" and isinstance(hands, list):
        if hands and draw(st.booleans()):
            hands.pop()
        else:
            hands.append(hands[0] if hands else "")
    elif op == "stock":
        rec["stock"] = _mutate_cards(draw, rec.get("stock", ""))
    else:
        rec["hands"] = draw(JSON)


def _mutate_actions(draw: Any, rec: dict) -> None:
    acts = rec.get("actions")
    if not isinstance(acts, list) or draw(st.integers(0, 11)) == 0:
        rec["actions"] = draw(JSON)
        return
    op = draw(st.sampled_from(["truncate", "delete", "insert", "swap", "replace", "extend", "nonstring"]))
    n = len(acts)
    i = draw(st.integers(0, max(n - 1, 0)))
    if op == "truncate":
        del acts[i:]
    elif op == "delete" and n:
        del acts[i]
    elif op == "insert":
        acts.insert(i, draw(ACTION_TOKENS))
    elif op == "swap" and n:
        j = draw(st.integers(0, n - 1))
        acts[i], acts[j] = acts[j], acts[i]
    elif op == "replace" and n:
        acts[i] = draw(ACTION_TOKENS)
    elif op == "extend":
        acts.extend(draw(st.lists(ACTION_TOKENS, max_size=3)))
    elif n:
        acts[i] = draw(JSON)


def _mutate_rules(draw: Any, rec: dict) -> None:
    rules = rec.get("rules")
    if not isinstance(rules, dict) or draw(st.integers(0, 5)) == 0:
        rec["rules"] = draw(JSON)
        return
    op = draw(st.sampled_from(["set", "set", "delete", "unknown", "preset"]))
    if op == "set":
        k = draw(st.sampled_from(KNOBS))
        rules[k] = draw(knob_value(k))
    elif op == "delete" and rules:
        del rules[draw(st.sampled_from(sorted(rules)))]
    elif op == "unknown":
        rules[draw(st.text(max_size=8))] = draw(JSON)
    else:
        rules["preset"] = draw(st.sampled_from(PRESET_IDS) | st.text(max_size=6))


def _mutate_result(draw: Any, rec: dict) -> None:
    res = rec.get("result")
    if not isinstance(res, dict) or draw(st.integers(0, 5)) == 0:
        rec["result"] = draw(JSON)
        return
    k = draw(st.sampled_from(["contract", "made", "tricks", "card_points", "combinations", "score", "scores",
                              "note"]))
    if draw(st.booleans()) and k in res:
        del res[k]
    else:
        res[k] = draw(JSON)


def _mutate_record_once(draw: Any, rec: dict) -> None:
    op = draw(st.sampled_from(["format", "preset", "rules", "deal", "deal", "actions", "actions", "actions",
                               "result", "delete", "extra"]))
    if op == "format":
        rec["format"] = draw(FORMATS)
    elif op == "preset":
        rec["preset"] = draw(st.sampled_from(PRESET_IDS) | st.text(max_size=8) | JSON)
    elif op == "rules":
        _mutate_rules(draw, rec)
    elif op == "deal":
        _mutate_deal_fields(draw, rec)
    elif op == "actions":
        _mutate_actions(draw, rec)
    elif op == "result":
        _mutate_result(draw, rec)
    elif op == "delete" and rec:
        del rec[draw(st.sampled_from(sorted(rec)))]
    else:
        rec[draw(st.text(max_size=8))] = draw(JSON)


@st.composite
def mutated_record(draw: Any, max_ops: int = 3) -> Any:
    """A corpus record after 0..``max_ops`` edits (a match record: edits of one of its deals or
    of its own fields); now and then a JSON value that is no record at all."""
    if draw(st.integers(0, 30)) == 0:
        return draw(JSON)
    rec = copy.deepcopy(draw(st.sampled_from(record_corpus())))
    target = rec
    if rec.get("format") == MATCH_FORMAT and rec.get("deals") and draw(st.booleans()):
        target = rec["deals"][draw(st.integers(0, len(rec["deals"]) - 1))]
    for _ in range(draw(st.integers(0, max_ops))):
        _mutate_record_once(draw, target)
    return rec


# --------------------------------------------------------------------------- target: records


class _Replays:
    """One :class:`blot_env.replay.CompiledReplay` reused across cases (its caches grow with
    every rules value seen, so it is renewed now and then)."""

    def __init__(self) -> None:
        self.uses = 0
        self.fast = None

    def get(self):
        from blot_env.replay import CompiledReplay

        if self.fast is None or self.uses >= 500:
            self.fast, self.uses = CompiledReplay(), 0
        self.uses += 1
        return self.fast


_REPLAYS = _Replays()


def _replay_deal(deal: Any) -> tuple:
    """The outcome of one deal record on both engines (they must agree)."""
    from blot_env.record import compare_result

    ref = outcome(lambda: replay_record(copy.deepcopy(deal))[1], (RecordError,), "replay_record")
    fast = outcome(lambda: _REPLAYS.get().replay(copy.deepcopy(deal)), (RecordError,), "CompiledReplay")
    _check(ref == fast, f"the engines disagree on a record: reference {ref}, compiled {fast}")
    if ref[0] == "error":
        msg = ref[2]
        _check(any(w in msg for w in ('field "', "action ", "a record must be")),
               f"replay_record error names no field or action: {msg}")
    elif isinstance(deal, dict) and "result" in deal and ref[1] is not None:
        diffs = compare_result(deal["result"], ref[1])
        _check(all(isinstance(d, str) for d in diffs), "compare_result gave a non-string")
    return ref


def fuzz_record(rec: Any) -> None:
    """``replay_record`` and the compiled replay of ``blot-replay`` on one (mutated) record: a
    result or a :class:`RecordError` naming the field or the action, the same on both engines."""
    from blot_env.replay import _deals

    for _, deal in _deals("record 0", rec):
        if not isinstance(deal, RecordError):
            _replay_deal(deal)


@st.composite
def record_file(draw: Any) -> tuple[bytes, str]:
    """The bytes and the suffix of a record file: records as a JSON object, a list or JSON
    Lines, the bytes of a valid file after byte edits, random bytes, or nothing."""
    kind = draw(st.sampled_from(["one", "list", "jsonl", "jsonl", "bytes", "bytes", "binary", "empty"]))
    recs = draw(st.lists(mutated_record(max_ops=2), min_size=1, max_size=3))
    if kind == "one":
        raw = json.dumps(recs[0]).encode()
    elif kind == "list":
        raw = json.dumps(recs).encode()
    elif kind == "jsonl":
        raw = "\n".join(json.dumps(r) for r in recs).encode()
    elif kind == "bytes":
        sep = draw(st.sampled_from(["\n", ""]))
        raw = _mutate_bytes(draw, (json.dumps(recs) if sep == "" else "\n".join(json.dumps(r) for r in recs)).encode())
    elif kind == "binary":
        raw = draw(st.binary(max_size=64))
    else:
        raw = draw(st.sampled_from([b"", b"\n\n", b"[]", b"{}", b"null", b" "]))
    return raw, draw(st.sampled_from([".json", ".jsonl", ".jsonl", ".txt", ""]))


def fuzz_record_file(file: tuple[bytes, str]) -> None:
    """``blot-replay`` on a (mutated) record file: never a traceback, one clear line per bad
    record, the same output on both engines, ``load_records`` refusing with a RecordError."""
    from blot_env.replay import replay_file

    raw, suffix = file
    path = tmp_dir() / f"records{suffix}"
    path.write_bytes(raw)
    runs = {}
    for engine in ("compiled", "reference"):
        out, err = io.StringIO(), io.StringIO()
        count, fails = replay_file(str(path), out, err, engine=engine)
        _check("cannot replay (" not in err.getvalue(), f"replay_file hid an exception: {err.getvalue()}")
        _check(isinstance(count, int) and 0 <= fails <= count + 1, f"replay_file returned {(count, fails)}")
        _check((fails > 0) == bool(err.getvalue()), "replay_file failures and messages disagree")
        runs[engine] = (count, fails, out.getvalue(), err.getvalue())
    _check(runs["compiled"] == runs["reference"], f"the engines print differently: {runs}")
    outcome(lambda: load_records(path), (RecordError,), "load_records")


# --------------------------------------------------------------------------- target: rules


_INT_RANGES = {"num_players": (0, 5), "hand_size": (0, 17), "num_tricks": (0, 17), "bid_min": (-1, 170),
               "bid_max": (-1, 170), "bid_step": (-1, 21), "auction_end_passes": (0, 6),
               "contra_end_passes": (0, 6), "capot_tp": (-1, 300), "target": (-1, 2000)}


def knob_value(name: str) -> st.SearchStrategy:
    """Values for rules knob ``name``: mostly of its type and near its domain, now and then
    any JSON value."""
    if name in _LITERALS:
        good = st.sampled_from(sorted(_LITERALS[name]) + ["bogus", ""])
    elif name in _INT_RANGES:
        good = st.integers(*_INT_RANGES[name])
    elif name == "preset":
        good = st.sampled_from(PRESET_IDS) | st.text(max_size=6)
    elif name in KNOBS:
        good = st.booleans()
    else:
        good = JSON
    return st.one_of(good, good, good, JSON)


@st.composite
def knob_overrides(draw: Any) -> dict:
    names = st.sampled_from(KNOBS) | st.text(max_size=8)
    out = {}
    for _ in range(draw(st.integers(0, 3))):
        k = draw(names)
        out[k] = draw(knob_value(k))
    return out


def _play_random(cfg, rng: np.random.Generator, cap: int = 3000):
    s = deal_random(cfg, rng, int(rng.integers(cfg.num_players)))
    for _ in range(cap):
        if is_terminal(s):
            return s
        legal = legal_actions(s)
        _check(bool(legal), "an accepted rules config reached a state with no legal action")
        s = apply_action(s, choose(s, legal, rng, 0.8))
    return None


def fuzz_rules(preset: Any, overrides: dict, junk: Any, seed: int) -> None:
    """``make_rules``/``with_overrides`` on any preset and knob values: a ConfigError, or a
    config that deals and plays a random deal whose record replays to its result on both
    engines (an accepted config must work)."""
    # make_rules(p, preset=...) is Python's TypeError "multiple values for argument 'preset'"
    allowed = (ConfigError, TypeError) if "preset" in overrides else (ConfigError,)
    got = outcome(lambda: make_rules(preset, **overrides), allowed, "make_rules")
    if got[0] == "error" and got[1] == "TypeError":
        return
    if isinstance(preset, str) and preset in PRESETS:
        other = outcome(lambda: with_overrides(make_rules(preset), overrides), (ConfigError,), "with_overrides")
        _check(got[0] == other[0], f"make_rules and with_overrides disagree: {got} / {other}")
    outcome(lambda: with_overrides(make_rules("bazar"), junk), (ConfigError,), "with_overrides(junk)")
    if got[0] == "error":
        return
    cfg = got[1]
    from blot_env.actions import layout_for

    _check(layout_for(cfg).num_actions > 0, "empty action layout")
    final = _play_random(cfg, np.random.default_rng(seed))
    if final is None:  # a long auction under a random policy: not a failure
        return
    rec = make_record(final)
    _check(_replay_deal(rec) == ("ok", rec["result"]), "the record of an accepted config does not replay")


# --------------------------------------------------------------------------- target: training configs


@cache
def train_bases() -> tuple[dict, ...]:
    from agents.ppo.config import read_config_file  # a config's own keys with its bases merged in

    names = ["ppo_tiny", "ppo_bazar", "ppo_belote", "ppo_duel", "ppo_open", "ppo_bazar_oracle",
             "ppo_bazar-app_transfer"]
    return tuple(read_config_file(REPO / "configs" / f"{n}.yaml") for n in names)


@cache
def train_keys() -> tuple[str, ...]:
    from agents.ppo.config import TrainConfig

    out = []
    for k, v in TrainConfig().to_dict().items():
        out += [f"{k}.{kk}" for kk in v] if isinstance(v, dict) else [k]
    return tuple(out)


TRAIN_VALUES = (JSON | st.sampled_from(["1e-3", "nan", ".nan", ".inf", "-.inf", "-1", "0", "true", "null", "[]",
                                        "{}", "auto", "random", "[random, rules]", "bazar", "1e999"])
                | st.floats() | st.integers(-10, 10 ** 6) | st.just(10 ** 400))


@st.composite
def train_config(draw: Any) -> tuple[bytes, list]:
    """The bytes of a training-config YAML file (a shipped config after edits of its keys, or
    its text after byte edits) and a list of ``key=value`` overrides."""
    import yaml

    data = copy.deepcopy(draw(st.sampled_from(train_bases())))
    known = st.sampled_from(train_keys())
    keys = st.one_of(known, known, known, st.text(max_size=10))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["set", "set", "set", "delete", "section"]))
        parts = draw(keys).split(".")
        node = data
        for p in parts[:-1]:
            nxt = node.get(p) if isinstance(node, dict) else None
            if not isinstance(nxt, dict):
                nxt = node[p] = {} if isinstance(node, dict) else None
            node = nxt
        if not isinstance(node, dict):
            continue
        if op == "set":
            node[parts[-1]] = draw(TRAIN_VALUES)
        elif op == "delete":
            node.pop(parts[-1], None)
        else:
            data[draw(st.sampled_from(["network", "ppo", "rollout", "pool", "pretrain", "eval"]))] = draw(JSON)
    text = yaml.safe_dump(data, allow_unicode=draw(st.booleans())).encode()
    if draw(st.integers(0, 5)) == 0:
        text = _mutate_bytes(draw, text)
    value_text = st.sampled_from(["1e-4", "3", "nan", "[1, 2]", "{a: 1}", "", "x: [", "'", "]", "@", "\t1",
                                  "- a\n- b", "!!python/none", "1e999"]) | st.text(max_size=8)
    overrides = draw(st.lists(st.builds(lambda k, v, sep: f"{k}{sep}{v}", keys, value_text,
                                        st.sampled_from(["=", "=", "=", " = ", ":", ""])), max_size=2))
    return text, overrides


def _finite_numbers(obj: Any, where: str = "") -> None:
    if isinstance(obj, float):
        _check(not math.isnan(obj), f"config accepted NaN at {where}")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _finite_numbers(v, f"{where}.{k}" if where else str(k))
    elif isinstance(obj, list | tuple):
        for v in obj:
            _finite_numbers(v, where)


def fuzz_train_config(case: tuple[bytes, list]) -> None:
    """``agents.ppo.config.load_config`` on a (mutated) YAML file with overrides: a ConfigError
    (or OSError) naming the key, or a config without NaN; ``apply_overrides`` likewise."""
    from agents.ppo.config import apply_overrides, load_config

    text, overrides = case
    path = tmp_dir() / "train.yaml"
    path.write_bytes(text)
    got = outcome(lambda: load_config(path, overrides), (ConfigError, OSError), "load_config")
    if got[0] == "ok":
        _finite_numbers(got[1].to_dict())
        again = outcome(lambda: apply_overrides(got[1], overrides), (ConfigError,), "apply_overrides")
        _check(again[0] == "ok", f"overrides accepted by load_config refused by apply_overrides: {again}")


# --------------------------------------------------------------------------- action values

BAD_ACTIONS = st.sampled_from([
    None, True, False, np.bool_(True), 3.0, 2.5, float("nan"), float("inf"), "pass", "play JH", "", b"1", [0],
    (1,), {}, np.array([0]), np.array([[1]]), np.array(1.0), np.array(True), np.float32(1), np.int64(-1),
    np.uint64(2 ** 63 + 1), 2 ** 64, -(2 ** 70), 10 ** 6, 1 + 0j, np.array(2, dtype=np.uint8), object(),
])

MOVES = st.lists(st.tuples(st.integers(0, 15), st.integers(0, 2 ** 16), BAD_ACTIONS), min_size=30, max_size=160)
"""Per step: a kind (0..12: a legal action; 13: an id near the action space; 14, 15: a value
that is no action id), an index, and the odd value."""


def _pick(kind: int, idx: int, bad: Any, legal: np.ndarray, num_actions: int) -> Any:
    if kind <= 12 and legal.size:
        return int(legal[idx % legal.size])
    if kind == 13:
        return idx % (num_actions + 6) - 3
    return bad


def _is_legal_id(value: Any, mask: np.ndarray) -> bool:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer | np.ndarray):
        return False
    if isinstance(value, np.ndarray) and (value.ndim != 0 or value.dtype.kind not in "iu"):
        return False
    v = int(value)
    return 0 <= v < mask.size and bool(mask[v])


@cache
def _aec(preset: str, engine: str):
    from blot_env.env import raw_env

    return raw_env(preset, engine=engine)


@st.composite
def reset_options(draw: Any, preset: str) -> Any:
    """``reset`` options: none, any JSON value, a ``"dealer"`` or a ``"deal"`` (a suite entry
    of ``preset``, edited or not)."""
    kind = draw(st.sampled_from(["none", "none", "none", "json", "dealer", "deal", "deal"]))
    if kind == "none":
        return None
    if kind == "json":
        return draw(JSON)
    if kind == "dealer":
        return {"dealer": draw(st.integers(-2, 5) | JSON)}
    deal = copy.deepcopy(draw(st.sampled_from(deals_of(preset))))
    for _ in range(draw(st.integers(0, 2))):
        _mutate_deal_fields(draw, deal)
    return {"deal": deal}


@st.composite
def aec_case(draw: Any) -> tuple:
    preset = draw(st.sampled_from(PRESET_IDS))
    return preset, draw(st.sampled_from(["compiled", "reference"])), draw(SEEDS), draw(reset_options(preset))


def fuzz_aec(case: tuple, moves: list) -> None:
    """The AEC env (``blot_env.env.raw_env``): ``reset`` with any seed and options (a
    ConfigError or RecordError), then steps of legal ids, ids out of range and values that are
    no id: an illegal one raises IllegalActionError naming the seat and leaves the env as it
    was; a finished deal's record replays to its result."""
    preset, engine, seed, options = case
    env = _aec(preset, engine)
    got = outcome(lambda: env.reset(seed=seed, options=options), (ConfigError, RecordError), "reset")
    if got[0] == "error":
        env.reset(seed=0)
    for kind, idx, bad in moves:
        if not env.agents:
            got = outcome(lambda: env.step(None), (RuntimeError,), "step after the end")
            _check(got[0] == "error", "step() after the episode was accepted")
            break
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            if kind == 14:
                got = outcome(lambda: env.step(1), (ValueError,), "dead step")
                _check(got[0] == "error", "a dead agent's action was accepted")
            env.step(None)
            continue
        obs = env.observe(agent)
        mask = obs["action_mask"]
        value = _pick(kind, idx, bad, np.flatnonzero(mask), mask.size)
        before = (len(env.deal.history), obs["observation"].copy(), mask.copy())
        legal = _is_legal_id(value, mask)
        try:
            env.step(value)
        except IllegalActionError as e:
            _check(not legal, f"legal action {value!r} refused: {e}")
            _check(e.seat == env.seat_of(agent) and str(e), "IllegalActionError names another seat")
            again = env.observe(agent)
            _check(env.agent_selection == agent and len(env.deal.history) == before[0]
                   and np.array_equal(again["observation"], before[1])
                   and np.array_equal(again["action_mask"], before[2]), "a refused action changed the env")
            continue
        _check(legal, f"illegal action {value!r} accepted")
        if all(env.terminations.values()) and env.agents:
            rec = env.record()
            _check(replay_record(rec)[1] == rec["result"], "the env's record does not replay to its result")


@cache
def _gym(preset: str, strict: bool, seat: Any):
    from blot_env.gym_env import BlotGymEnv

    return BlotGymEnv(preset, seat=seat, illegal_reward=None if strict else -1.0)


def fuzz_gym(preset: str, strict: bool, seat: Any, seed: int, moves: list) -> None:
    """The Gymnasium env (``blot_env.gym_env.BlotGymEnv``): legal ids play on; a masked-out id
    ends the episode with the illegal reward (or raises IllegalActionError and changes
    nothing, ``illegal_reward=None``); a value that is no id always raises; a step after the
    end raises ``ResetNeeded``."""
    import gymnasium

    env = _gym(preset, strict, seat)
    obs, _ = env.reset(seed=seed)
    done = False
    for kind, idx, bad in moves:
        mask = env.action_masks()
        value = _pick(kind, idx, bad, np.flatnonzero(mask), mask.size)
        if done:
            got = outcome(lambda v=value: env.step(v), (gymnasium.error.ResetNeeded,), "step after the end")
            _check(got[0] == "error", "step() after the end of the episode was accepted")
            obs, _ = env.reset(seed=idx)
            done = False
            continue
        legal = _is_legal_id(value, mask)
        an_id = _is_legal_id(value, np.ones(mask.size, dtype=bool))
        try:
            obs2, reward, term, trunc, info = env.step(value)
        except IllegalActionError as e:
            _check(not legal and (strict or not an_id), f"action {value!r} refused wrongly: {e}")
            _check(np.array_equal(env.action_masks(), mask), "a refused action changed the mask")
            continue
        _check(legal or (an_id and not strict), f"action {value!r} accepted")
        _check(obs2.shape == obs.shape and np.isfinite(reward), "bad observation or reward")
        if not legal:
            _check(term and info.get("illegal_action") is True and reward == -1.0, "masked-out id not punished")
        done = term or trunc


@cache
def _batched(preset: str, autoreset: bool):
    from blot_env.batched import BatchedEngine

    return BatchedEngine(preset, num_envs=3, seed=0, autoreset=autoreset)


BATCH_EDITS = st.sampled_from(["none"] * 40 + ["illegal", "range", "shape", "float", "bool", "object", "uint64",
                                              "list", "scalar", "rows", "release"])


def fuzz_batched(preset: str, autoreset: bool, seed: Any, steps: list) -> None:
    """``BatchedEngine.step`` (and ``reset``, ``reset_rows``, ``release_rows``) with action
    arrays of legal ids and edited ones: wrong shapes and dtypes raise ValueError, an
    illegal id IllegalActionError naming the row and the seat, and a refused call leaves the
    buffers as they were."""
    eng = _batched(preset, autoreset)
    got = outcome(lambda: eng.reset(seed), (ValueError,), "reset")
    if got[0] == "error":
        eng.reset(0)
    B, A = eng.num_envs, eng.num_actions
    for edit, picks, row, value in steps:
        out = eng.buffers()
        seat, mask, obs = out.seat.copy(), out.action_mask.copy(), out.obs.copy()
        acts = np.zeros(B, dtype=np.int64)
        for b in range(B):
            legal = np.flatnonzero(mask[b])
            acts[b] = legal[picks[b] % legal.size] if legal.size else 0
        r = row % B
        arg: Any = acts
        if edit == "illegal":
            bad = np.flatnonzero(mask[r] == 0)
            if bad.size:
                acts[r] = bad[value % bad.size]
        elif edit == "range":
            acts[r] = value % 7 - 3 if value % 2 else A + value % 5
        elif edit == "shape":
            arg = acts[: value % B] if value % 2 else acts.reshape(B, 1)
        elif edit == "float":
            arg = acts.astype(np.float64)
        elif edit == "bool":
            arg = acts.astype(bool)
        elif edit == "object":
            arg = np.array([str(x) for x in acts])
        elif edit == "uint64":
            arg = acts.astype(np.uint64)
            arg[r] = np.uint64(2 ** 63 + value)
        elif edit == "list":
            arg = acts.tolist()
        elif edit == "scalar":
            arg = int(acts[0])
        elif edit == "rows":
            rows, keys = [r, value % (B + 3) - 1], [value, -value]
            outcome(lambda: eng.reset_rows(rows, keys=keys), (ValueError,), "reset_rows")  # noqa: B023
            continue
        elif edit == "release":
            rows = [value % (B + 2) - 1]
            outcome(lambda: eng.release_rows(rows), (ValueError,), "release_rows")  # noqa: B023
            continue
        active = seat >= 0
        ok = (np.asarray(arg).shape == (B,) and np.asarray(arg).dtype.kind in "iu"
              and all(bool(mask[b][int(acts[b])]) if 0 <= int(np.asarray(arg)[b]) < A else False
                      for b in np.flatnonzero(active)))
        try:
            eng.step(arg)
        except (ValueError, IllegalActionError) as e:
            _check(not ok, f"a legal batch was refused: {e}")
            now = eng.buffers()
            _check(np.array_equal(now.seat, seat) and np.array_equal(now.action_mask, mask)
                   and np.array_equal(now.obs, obs), "a refused step changed the buffers")
            if isinstance(e, IllegalActionError):
                _check("row " in str(e), f"IllegalActionError names no row: {e}")
            continue
        _check(ok, f"an illegal batch was accepted: {arg!r}")
        if not autoreset and not (eng.buffers().seat >= 0).any():
            eng.reset_rows(np.arange(B))


# --------------------------------------------------------------------------- target: deal suites


@st.composite
def suite_file(draw: Any) -> tuple[str, bytes, bool]:
    preset = draw(st.sampled_from(PRESET_IDS))
    deals = []
    for _ in range(draw(st.integers(0, 3))):
        d = copy.deepcopy(draw(st.sampled_from(deals_of(preset))))
        for _ in range(draw(st.integers(0, 2))):
            _mutate_deal_fields(draw, d)
        if draw(st.integers(0, 9)) == 0:
            d.pop(draw(st.sampled_from(["dealer", "hands", "stock"])), None)
        deals.append(d if draw(st.integers(0, 15)) else draw(JSON))
    raw = json.dumps(deals if draw(st.integers(0, 9)) else draw(JSON)).encode()
    if draw(st.integers(0, 3)) == 0:
        raw = _mutate_bytes(draw, raw)
    gz = draw(st.integers(0, 4)) == 0
    if gz:
        raw = gzip.compress(raw)
        if draw(st.booleans()):
            raw = _mutate_bytes(draw, raw, insert=False)
    return preset, raw, gz


def fuzz_suite(case: tuple[str, bytes, bool]) -> None:
    """``agents.eval.arena.load_suite`` on a (mutated) suite file, then ``deal_state`` on each
    of its deals: a ValueError or OSError naming the file or the field, or deals that play."""
    from agents.eval.arena import deal_state, load_suite

    preset, raw, gz = case
    folder = tmp_dir() / "suites"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    path = folder / f"{preset}_dev.json{'.gz' if gz else ''}"
    path.write_bytes(raw)
    got = outcome(lambda: load_suite(preset, "dev", folder), (ValueError, OSError), "load_suite")
    if got[0] == "error":
        _check(str(folder) in got[2], f"load_suite error names no file: {got[2]}")
        return
    cfg = make_rules(preset)
    for deal in got[1][:2]:
        st_ = outcome(lambda deal=deal: deal_state(cfg, deal), (ValueError,), "deal_state")
        if st_[0] == "ok":
            s = st_[1]
            rng = np.random.default_rng(0)
            while not is_terminal(s):
                s = apply_action(s, choose(s, legal_actions(s), rng, 0.5))
            deal_result(s)


# --------------------------------------------------------------------------- target: save files


@cache
def board_records() -> tuple[dict, ...]:
    """Board records as ``agents.eval.board_pool.play_task`` writes them (two presets, random
    and rule agents)."""
    from agents.baselines.random_agent import RandomAgent
    from agents.eval.arena import Timing, play_board
    from agents.eval.board_pool import RECORD_FORMAT

    out = []
    for preset in ("bazar", "duel"):
        cfg = make_rules(preset)
        for i, deal in enumerate(deals_of(preset)[:2]):
            a, b = RandomAgent(name="random"), RandomAgent(pass_prob=0.5, name="random-half")
            board = play_board(cfg, deal, i, a, b, 0, False, Timing())
            out.append({"format": RECORD_FORMAT, "agent": "random", "vs": "random-half", "preset": preset,
                        "split": "dev", "seed": 0, "mixed": False, "index": i, "board": board, "timing": Timing(),
                        "names": ("random", "random-half"), "cpu_seconds": 0.01, "seconds": 0.01,
                        "commit": None, "weights": (None, None)})
    return tuple(out)


@st.composite
def save_file(draw: Any) -> bytes:
    recs = []
    for _ in range(draw(st.integers(0, 4))):
        r = dict(draw(st.sampled_from(board_records())))
        for _ in range(draw(st.integers(0, 2))):
            k = draw(st.sampled_from(sorted(r) + ["extra"]))
            if draw(st.booleans()):
                r.pop(k, None)
            else:
                r[k] = draw(JSON | st.sampled_from([1, 2, 3, (), ("a",), (None, None)]))
        recs.append(r if draw(st.integers(0, 20)) else draw(JSON))
    raw = b"".join(pickle.dumps(r) for r in recs)
    if draw(st.booleans()):
        # no random bytes: a pickle of random bytes could name any importable callable
        raw = _mutate_bytes(draw, raw, insert=False)
    return raw


def fuzz_save_file(raw: bytes) -> None:
    """``agents.eval.board_pool.read_records``/``open_save`` on a (mutated) save file of board
    records, and the league's readers on what it accepts: a SaveFormatError (a ValueError)
    naming the file, or records the league reads; after ``open_save`` and one appended record
    the file reads back whole (nothing half written stays in it)."""
    from agents.eval import league
    from agents.eval.board_pool import append_record, open_save, read_records

    path = tmp_dir() / "boards.pkl"
    path.write_bytes(raw)
    got = outcome(lambda: read_records(path), (ValueError,), "read_records")
    if got[0] == "error":
        _check(str(path) in got[2], f"read_records error names no file: {got[2]}")
        return
    records = got[1][0]
    for a, b in {(r["agent"], r["vs"]) for r in records}:
        for preset, split, seed in {(r["preset"], r["split"], r["seed"]) for r in records}:
            league.pair_deltas(records, a, b, preset, split, seed)
            league.pair_cpu(records, a, b, preset, split, seed, 10)
    f, old = open_save(path)
    try:
        append_record(f, board_records()[0])
    finally:
        f.close()
    _check(len(old) == len(records), "open_save read other records than read_records")
    back = read_records(path)[0]
    _check(len(back) == len(records) + 1 and back[-1]["index"] == board_records()[0]["index"],
           "a record appended after open_save does not read back")


# --------------------------------------------------------------------------- the targets


@dataclass(frozen=True)
class Target:
    """A fuzz target: ``body(**args)`` over the Hypothesis strategies ``args``."""

    name: str
    body: Callable[..., None]
    args: dict[str, st.SearchStrategy]

    @property
    def doc(self) -> str:
        return (self.body.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")

    def test(self, settings_: Any) -> Callable[[], None]:
        """The Hypothesis test of this target under ``settings_`` (call it to run it; its
        ``.hypothesis.fuzz_one_input(bytes)`` runs one case)."""
        from hypothesis import given

        def run(**kw: Any) -> None:
            self.body(**kw)

        run.__name__ = run.__qualname__ = f"fuzz_{self.name}"
        return settings_(given(**self.args)(run))


SEEDS = st.integers(0, 2 ** 32) | st.sampled_from([None, -1, 2 ** 64, True, 1.5, "7", np.int64(3)])

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("record", fuzz_record, {"rec": mutated_record()}),
    Target("record_file", fuzz_record_file, {"file": record_file()}),
    Target("rules", fuzz_rules, {"preset": st.sampled_from(PRESET_IDS) | st.text(max_size=8) | JSON,
                                 "overrides": knob_overrides(),
                                 "junk": st.dictionaries(st.integers() | st.text(max_size=6) | st.none(), JSON,
                                                         max_size=3) | JSON,
                                 "seed": st.integers(0, 2 ** 32)}),
    Target("train_config", fuzz_train_config, {"case": train_config()}),
    Target("aec", fuzz_aec, {"case": aec_case(), "moves": MOVES}),
    Target("gym", fuzz_gym, {"preset": st.sampled_from(PRESET_IDS), "strict": st.booleans(),
                             "seat": st.sampled_from([0, 1, "random"]), "seed": st.integers(0, 2 ** 32),
                             "moves": MOVES}),
    Target("batched", fuzz_batched, {"preset": st.sampled_from(PRESET_IDS), "autoreset": st.booleans(),
                                     "seed": SEEDS,
                                     "steps": st.lists(st.tuples(BATCH_EDITS, st.lists(st.integers(0, 999),
                                                                                        min_size=3, max_size=3),
                                                                 st.integers(0, 99), st.integers(0, 2 ** 20)),
                                                       min_size=30, max_size=120)}),
    Target("suite", fuzz_suite, {"case": suite_file()}),
    Target("save_file", fuzz_save_file, {"raw": save_file()}),
)}
"""Every fuzz target by name, in the order ``scripts/fuzz.py`` runs them."""

ALLOWED_BASES = (BlotError, ValueError, TypeError, OSError)
"""What a refusal may raise, at most (each target narrows it)."""

__all__ = ["JSON", "TARGETS", "FuzzFailure", "Target", "outcome", "record_corpus"]
