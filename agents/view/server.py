"""The web viewer's server: a Starlette app with a JSON API and one static page.

Replays: every deal of the loaded records (deal records and the deals of ``blot-match/1``
records, docs/deal-record.md) is one entry; deals that share their cards (preset, rules,
dealer, hands, stock) form a duplicate **board**, whose tables the page shows side by side.
The frames of a deal are computed here (:func:`blot_env.table.record_frames`), so the page
holds no rules: it draws snapshots.

Live tables: a :class:`agents.play.Game` per table, with humans in some seats (or none, to
watch agents play). The page asks for one agent action at a time (``/step``), so it paces a
game it watches and shows every card; a human's action goes to ``/act`` and comes back as a
clear error when it is illegal.

API (JSON; errors are ``{"error": message}`` with status 400 or 404):

* ``GET /api/deals`` -> ``{"deals": [{"id", "label", "preset", "players", "board"}], "boards": [[id, ...]]}``
* ``GET /api/deals/{id}?view=all|SEAT`` -> ``{"id", "label", "frames": [snapshot, ...], "record"}``
* ``POST /api/deals`` (a record or a list of records) -> ``{"added": [id, ...]}``
* ``GET /api/options`` -> presets with their player counts, levels, agent names
* ``POST /api/games`` ``{"preset", "seats": [name or "human" per seat], "seed", "match", "target"}``
  -> the table's state ``{"id", "snapshot", "human_seats"}``
* ``GET /api/games/{id}``, ``POST /api/games/{id}/step`` (one agent action, or the next deal),
  ``POST /api/games/{id}/act`` ``{"action": id or action string}`` -> the table's state
* ``GET /api/games/{id}/record`` -> the deal or match record so far
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from blot_env.engine import deal_result
from blot_env.errors import BlotError, ConfigError, IllegalActionError, RecordError
from blot_env.match import after_deal, new_match
from blot_env.record import MATCH_FORMAT, initial_state, load_records, replay_record, rules_from_record
from blot_env.rules_config import PRESETS, make_rules
from blot_env.table import record_frames

from ..play.game import HUMAN, LEVELS, Game, agents_for
from ..registry import UnknownAgentError, known_agents

STATIC = Path(__file__).resolve().parent / "static"


class _Deal:
    """One deal to replay: its record (with the preset and rules of its match filled in) and
    the match state before it (for the score sheet)."""

    def __init__(self, label: str, record: dict, match_before=None):
        self.label = label
        self.record = record
        self.match_before = match_before
        self.players = record.get("players") if isinstance(record.get("players"), list) else None
        self.key = json.dumps([record.get(k) for k in ("preset", "rules", "dealer", "hands", "stock")])


def _deals_of(record: Any, label: str) -> list[_Deal]:
    """The deals of a deal or match record. Raises RecordError on a malformed record."""
    if not isinstance(record, dict):
        raise RecordError(f"{label}: a record must be a JSON object, got {type(record).__name__}")
    if record.get("format") != MATCH_FORMAT:
        try:
            initial_state(record)  # checks the deal fields now, not when the page asks
        except RecordError as e:
            raise RecordError(f"{label}: {e}") from None
        return [_Deal(label, record)]
    deals = record.get("deals")
    if not isinstance(deals, list):
        raise RecordError(f'{label}: field "deals": a {MATCH_FORMAT} record needs a list of deal records')
    out = []
    match = None
    for j, d in enumerate(deals):
        if not isinstance(d, dict):
            raise RecordError(f"{label} deal {j + 1}: a deal record must be a JSON object")
        d = {"preset": record.get("preset"), "rules": record.get("rules")} | d
        try:
            state, result = replay_record(d)
        except RecordError as e:
            raise RecordError(f"{label} deal {j + 1}: {e}") from None
        if match is None:
            match = new_match(state.cfg, state.dealer)
        out.append(_Deal(f"{label} deal {j + 1}", d, match))
        if result is not None and not match.over:
            match = after_deal(match, deal_result(state))
    return out


class Viewer:
    """The state behind the app: the loaded deals and the live tables (thread-safe)."""

    def __init__(self, save_dir: str | Path | None = None):
        self.deals: list[_Deal] = []
        self.games: dict[int, tuple[Game, list[int], threading.Lock]] = {}
        self.save_dir = Path(save_dir) if save_dir is not None else None
        self._lock = threading.Lock()

    def add_record(self, record: Any, label: str) -> list[int]:
        new = _deals_of(record, label)
        with self._lock:
            first = len(self.deals)
            self.deals.extend(new)
            return list(range(first, first + len(new)))

    def add_file(self, path: str | Path) -> list[int]:
        """Load every record of a file (``.json`` object or list, ``.jsonl``).

        Raises:
            RecordError: the file cannot be read or holds a malformed record; the message names
                the file (and the record).
        """
        ids = []
        try:
            records = load_records(path)
        except RecordError as e:
            raise (e if str(path) in str(e) else RecordError(f"{path}: {e}")) from None
        for i, rec in enumerate(records):
            ids += self.add_record(rec, Path(path).name + (f" #{i + 1}" if len(records) > 1 else ""))
        return ids

    def boards(self) -> list[list[int]]:
        groups: dict[str, list[int]] = {}
        for i, d in enumerate(self.deals):
            groups.setdefault(d.key, []).append(i)
        return [g for g in groups.values() if len(g) > 1]

    def new_game(self, preset: str, seats: Sequence[str], seed: int = 0, match: bool = False,
                 target: int | None = None) -> int:
        cfg = make_rules(preset, target=target) if target else make_rules(preset)
        if len(seats) != cfg.num_players:
            raise ConfigError(f"preset {preset!r} has {cfg.num_players} seats, got {len(seats)} seat entries")
        humans = [s for s, name in enumerate(seats) if name == HUMAN]
        agents = agents_for(cfg, humans, [name for name in seats if name != HUMAN])
        names = [HUMAN if a is None else a.name for a in agents]
        game = Game(cfg, agents, seed=seed, match=match or target is not None, names=names)
        with self._lock:
            gid = len(self.games)
            self.games[gid] = (game, humans, threading.Lock())
        return gid

    def save(self, gid: int, game: Game) -> str | None:
        if self.save_dir is None or not game.over:
            return None
        return str(game.save(self.save_dir / f"blot-view-{game.cfg.preset}-{game.seed}-{gid}.json"))


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _view_param(request: Request, n: int) -> int | None:
    v = request.query_params.get("view", "all")
    if v == "all":
        return None
    if not v.isdigit() or not 0 <= int(v) < n:
        raise ConfigError(f"view must be 'all' or a seat 0..{n - 1}, got {v!r}")
    return int(v)


def create_app(records: Sequence[str | Path] = (), save_dir: str | Path | None = None) -> Starlette:
    """The viewer app with the records of these files loaded.

    Raises:
        RecordError: a file cannot be read or holds a malformed record (the message names it).
    """
    viewer = Viewer(save_dir)
    for path in records:
        viewer.add_file(path)

    def index(request: Request):
        return FileResponse(STATIC / "index.html")

    def list_deals(request: Request):
        deals = [{"id": i, "label": d.label, "preset": d.record.get("preset"), "players": d.players,
                  "board": next((b for b, g in enumerate(viewer.boards()) if i in g), None)}
                 for i, d in enumerate(viewer.deals)]
        return JSONResponse({"deals": deals, "boards": viewer.boards()})

    def get_deal(request: Request):
        i = request.path_params["id"]
        if not 0 <= i < len(viewer.deals):
            return _error(f"no deal {i}; there are {len(viewer.deals)}", 404)
        d = viewer.deals[i]
        try:
            n = rules_from_record(d.record).num_players  # a custom rules value too
            frames = record_frames(d.record, _view_param(request, n), d.match_before)
        except BlotError as e:
            return _error(str(e))
        return JSONResponse({"id": i, "label": d.label, "frames": frames, "record": d.record})

    async def post_deals(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error("the body must be a JSON record or a list of records")
        recs = body if isinstance(body, list) else [body]
        ids: list[int] = []
        try:
            for k, rec in enumerate(recs):
                ids += viewer.add_record(rec, f"uploaded {len(viewer.deals) + 1}" + (f" #{k + 1}" if len(recs) > 1
                                                                                      else ""))
        except BlotError as e:
            return _error(str(e))
        return JSONResponse({"added": ids})

    def options(request: Request):
        return JSONResponse({"presets": {p: c.num_players for p, c in PRESETS.items()},
                             "levels": LEVELS, "agents": list(known_agents()), "human": HUMAN})

    def _state(gid: int, game: Game, humans: list[int]) -> JSONResponse:
        observer = humans[0] if len(humans) == 1 else None
        return JSONResponse({"id": gid, "snapshot": game.snapshot(observer), "human_seats": humans,
                             "human_to_act": game.human_to_act(), "saved": viewer.save(gid, game)})

    async def new_game(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error("the body must be a JSON object")
        if not isinstance(body, dict):
            return _error("the body must be a JSON object")
        try:
            seed = int(body.get("seed") or 0)
            target = body.get("target")
            gid = viewer.new_game(str(body.get("preset", "bazar")), list(body.get("seats") or []), seed,
                                  bool(body.get("match")), int(target) if target else None)
        except (BlotError, UnknownAgentError, ValueError, TypeError, ImportError) as e:
            return _error(str(e))
        game, humans, _ = viewer.games[gid]
        return _state(gid, game, humans)

    def _game(request: Request):
        gid = request.path_params["id"]
        if gid not in viewer.games:
            return gid, None
        return gid, viewer.games[gid]

    def get_game(request: Request):
        gid, g = _game(request)
        if g is None:
            return _error(f"no table {gid}", 404)
        return _state(gid, g[0], g[1])

    def step_game(request: Request):
        gid, g = _game(request)
        if g is None:
            return _error(f"no table {gid}", 404)
        game, humans, lock = g
        with lock:
            if game.over:
                return _error("the game is over")
            if game.deal_over:
                game.next_deal()
            elif game.human_to_act():
                return _error(f"seat {game.to_act} is a human seat: send its action to /act")
            else:
                seat = game.to_act
                try:
                    game.bot_step()
                except Exception as e:  # a broken agent (a checkpoint of other rules...) stops its table only
                    return _error(f"the agent of seat {seat} ({game.names[seat]}) failed: {type(e).__name__}: {e}",
                                  500)
        return _state(gid, game, humans)

    async def act_game(request: Request):
        gid, g = _game(request)
        if g is None:
            return _error(f"no table {gid}", 404)
        game, humans, lock = g
        try:
            body = await request.json()
        except ValueError:
            return _error('the body must be {"action": id or action string}')
        action = body.get("action") if isinstance(body, dict) else None
        with lock:
            if not game.human_to_act():
                return _error("no human seat is to act")
            try:
                if isinstance(action, str):
                    action = game.layout.parse(action)
                if not isinstance(action, int) or isinstance(action, bool):
                    return _error(f"action must be an action id or an action string, got {action!r}")
                game.act(action)
            except IllegalActionError as e:
                return _error(f"not legal now: {e.action!r}: {e.reason}")
            except BlotError as e:
                return _error(str(e))
        return _state(gid, game, humans)

    def game_record(request: Request):
        gid, g = _game(request)
        if g is None:
            return _error(f"no table {gid}", 404)
        return JSONResponse(g[0].record())

    routes = [
        Route("/", index),
        Route("/api/deals", list_deals, methods=["GET"]),
        Route("/api/deals", post_deals, methods=["POST"]),
        Route("/api/deals/{id:int}", get_deal),
        Route("/api/options", options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id:int}", get_game),
        Route("/api/games/{id:int}/step", step_game, methods=["POST"]),
        Route("/api/games/{id:int}/act", act_game, methods=["POST"]),
        Route("/api/games/{id:int}/record", game_record),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.viewer = viewer
    return app





class BackgroundServer:
    """Serve an app with uvicorn in a daemon thread on a free port of 127.0.0.1 (tests, scripts).

    ``with BackgroundServer(app) as url: ...`` -> ``"http://127.0.0.1:PORT/"``; the server stops
    when the block ends.
    """

    def __init__(self, app: Starlette, host: str = "127.0.0.1"):
        import socket

        import uvicorn

        self._sock = socket.create_server((host, 0))
        self.url = f"http://{host}:{self._sock.getsockname()[1]}/"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def __enter__(self) -> str:
        import time

        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the viewer's server did not start")
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()
__all__ = ["STATIC", "BackgroundServer", "Viewer", "create_app"]
