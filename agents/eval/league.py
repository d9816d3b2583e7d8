"""A league: a round robin of duplicate boards among named agents, rated by Bradley-Terry.

``blot-eval --league random,rules,rules-medium,ppo`` (docs/evaluation.md, "League"). Every
pair of agents plays the same boards of a frozen suite (board ``i`` of the suite is board
``i`` for every pair; :func:`agents.eval.boards.play_board`, a passed-out table scoring 0), on
the engine of :mod:`agents.eval.board_pool`: this process, this machine's processes or a Ray
cluster. Each board is
saved as it finishes, so a run stopped by ``--deadline``, Ctrl-C or a crash resumes where it
stopped when run again with the same ``--save`` file.

**Schedule** (:class:`Schedule`): the pairs play in rounds of ``round_boards`` boards
(round ``r`` is boards ``[r R, (r + 1) R)`` of the suite, all pairs still playing at once).
After each round, a pair whose board win rate's 95% Wilson interval (ties one half) lies
wholly above ``separated`` or wholly below ``1 - separated`` stops: its result is plain, and
its boards would add little to the ratings. Every other pair goes on until ``max_boards``.
The decisions depend only on the boards, so a resumed run takes the same ones.

**Ratings** (:func:`fit_ratings`): Bradley-Terry from the board results (a board won by the
row agent counts 1, a tie one half, a loss 0; the board scores themselves are not used), on
the Elo scale: ``P(i wins a board against j) = 1 / (1 + 10^((R_j - R_i) / 400))``, with the
anchor agent (default ``rules``) pinned at 1500. The maximum-likelihood fit (Newton's
method, :func:`fit_batch`; a test holds it equal to scipy's general optimiser) adds one
virtual tied board to each pair played, so that an agent that won every board still has a
finite rating. 95% intervals: percentile bootstrap over
``bootstrap`` resamples, each pair's boards resampled with replacement (a multinomial draw
of its wins, ties and losses) and refitted; the anchor's interval is 0 wide.

Beside it, the **score** (:func:`score_ratings`): ``u_i - u_j`` fitted by least squares to
the pairs' mean board scores per deal (weighted by boards; the anchor at 0), in score-sheet
units, with the same kind of bootstrap interval; and per pair the duplicate match win rate
(:func:`agents.eval.arena.match_outcomes`). The two ratings can disagree: an agent that wins
fewer boards but bigger ones rates lower on board results than on scores, and the match,
which the game is about, is decided by the points (docs/evaluation.md shows such a case).

Results are pickled records of :mod:`agents.eval.board_pool` (format 2); records of a
``blot-eval --save`` run of the same (preset, split, seed) count as well, in either
orientation (a board of ``B`` against ``A`` is the board of ``A`` against ``B`` with its
tables swapped, ``delta`` negated), except those of a ``--mixed`` run, which are not league
boards.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from blot_env.rules_config import RulesConfig, make_rules

from . import stats
from .arena import BoardResult, load_suite, match_outcomes
from .board_pool import (
    BoardJob,
    build_agents,
    check_weights,
    close_pool,
    commit,
    open_pool,
    open_save,
    run_tasks,
    weights_digest,
)

ELO = 400.0 / math.log(10.0)
"""Elo points per unit of the Bradley-Terry log-strength."""
ANCHOR_RATING = 1500.0


@dataclass(frozen=True)
class Schedule:
    """How many boards each pair plays (module docstring, "Schedule").

    Raises:
        ValueError: a count below 1, ``max_boards`` below ``round_boards``, or ``separated``
            outside (0.5, 1).
    """

    round_boards: int = 200
    """Boards per pair and round."""
    max_boards: int = 2000
    """Boards a pair plays at most."""
    separated: float = 0.9
    """A pair stops when its board win rate's 95% Wilson interval lies above this (or below 1 - this)."""

    def __post_init__(self) -> None:
        for name in ("round_boards", "max_boards"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Schedule.{name} must be a positive number of boards, got {v!r}")
        if self.max_boards < self.round_boards:
            raise ValueError(f"Schedule.max_boards ({self.max_boards}) is below round_boards ({self.round_boards})")
        if not 0.5 < self.separated < 1.0:
            raise ValueError(f"Schedule.separated must be in (0.5, 1), got {self.separated!r}")

    def round_ends(self) -> list[int]:
        """The board counts at which a pair's rounds end: R, 2R, ..., max_boards."""
        ends = list(range(self.round_boards, self.max_boards, self.round_boards))
        return [*ends, self.max_boards]

    def is_separated(self, outcomes: np.ndarray) -> bool:
        """Whether a pair with these board outcomes (1, 0.5, 0 per board) stops."""
        lo, hi = stats.wilson_interval(float(outcomes.sum()), int(outcomes.size))
        return lo > self.separated or hi < 1.0 - self.separated


# ---------------------------------------------------------------------------- results per pair


def oriented(board: BoardResult) -> BoardResult:
    """The board of ``B`` against ``A`` seen from ``A``: the tables swapped (``A``'s table 1
    is the one where it sat in seats 0/2) and each table's candidate side flipped."""
    t1, t2 = board.tables
    return replace(board, tables=(replace(t2, side=1 - t2.side), replace(t1, side=1 - t1.side)))


def _league_board(r: dict, preset: str, split: str, seed: int) -> bool:
    """Whether record ``r`` is a board of this league's suite: its preset, split and seed, and
    not of a ``blot-eval --mixed --save`` run (mixed boards are not league boards)."""
    return (r["preset"], r["split"], r["seed"]) == (preset, split, seed) and not r.get("mixed")


def pair_boards(records: Sequence[dict], a: str, b: str, preset: str, split: str,
                seed: int) -> dict[int, BoardResult]:
    """Board index -> the board of ``a`` against ``b``, from the records of either orientation
    (a record of ``b`` against ``a`` counts through :func:`oriented`, its delta negated); records
    of the mixed-partnership mode (``blot-eval --mixed --save``) are not league boards and are skipped."""
    out: dict[int, BoardResult] = {}
    for r in records:
        if not _league_board(r, preset, split, seed):
            continue
        if (r["agent"], r["vs"]) == (a, b):
            out[r["index"]] = r["board"]
        elif (r["agent"], r["vs"]) == (b, a):
            out.setdefault(r["index"], oriented(r["board"]))
    return out


def pair_deltas(records: Sequence[dict], a: str, b: str, preset: str, split: str, seed: int) -> dict[int, int]:
    """Board index -> board score of ``a`` against ``b`` (score-sheet units; :func:`pair_boards`)."""
    return {i: board.delta for i, board in pair_boards(records, a, b, preset, split, seed).items()}


def pair_cpu(records: Sequence[dict], a: str, b: str, preset: str, split: str, seed: int, boards: int) -> float:
    """CPU seconds of the first ``boards`` boards of the pair (records of either orientation)."""
    seen: dict[int, float] = {}
    for r in records:
        if {r["agent"], r["vs"]} == {a, b} and _league_board(r, preset, split, seed) and r["index"] < boards:
            seen.setdefault(r["index"], r["cpu_seconds"])
    return float(sum(seen.values()))


@dataclass
class PairState:
    """Where a pair stands in the schedule."""

    a: str
    b: str
    boards: int
    """Boards the schedule counts so far (a prefix of the suite)."""
    status: str
    """``"separated"``, ``"max_boards"`` (done) or ``"playing"``."""
    missing: list[int]
    """Boards of the current round not played yet (empty once done)."""
    round_end: int
    """Where the current round ends (``boards`` once done)."""


def pair_state(deltas: dict[int, int], a: str, b: str, schedule: Schedule) -> PairState:
    """Walk the schedule's rounds over the boards played: done, or the next boards to play."""
    start = 0
    for end in schedule.round_ends():
        missing = [i for i in range(start, end) if i not in deltas]
        if missing:
            return PairState(a, b, start, "playing", missing, end)
        if schedule.is_separated(outcomes(deltas, end)):
            return PairState(a, b, end, "separated", [], end)
        start = end
    return PairState(a, b, schedule.max_boards, "max_boards", [], schedule.max_boards)


def outcomes(deltas: dict[int, int], boards: int) -> np.ndarray:
    """``float64[boards]``: 1 for a board won, 0.5 tied, 0 lost, boards ``0 .. boards - 1``."""
    d = np.array([deltas[i] for i in range(boards)], dtype=float)
    return (d > 0) + 0.5 * (d == 0)


# ---------------------------------------------------------------------------- ratings


def _log_likelihood(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``float64[B]``: sum of ``w_ij log sigmoid(theta_i - theta_j)`` per batch element."""
    d = theta[:, :, None] - theta[:, None, :]
    return -(w * np.logaddexp(0.0, -d)).sum(axis=(1, 2))


def fit_batch(wins: np.ndarray, anchor: int, prior: float = 1.0, tol: float = 1e-10) -> np.ndarray:
    """Bradley-Terry log-strengths of a batch of win matrices (Newton's method with step halving).

    Args:
        wins: ``float64[B, N, N]`` board wins (see :func:`fit_ratings`).
        anchor: the agent whose log-strength is 0.
        prior: virtual tied boards added to each pair that played.

    Returns:
        ``float64[B, N]`` log-strengths (natural units; ``ELO`` Elo points each).
    """
    played = wins + wins.transpose(0, 2, 1)
    w = wins + (played > 0) * (prior / 2.0)
    n = w + w.transpose(0, 2, 1)
    b, k = w.shape[0], w.shape[1]
    free = np.array([i for i in range(k) if i != anchor], dtype=int)
    theta = np.zeros((b, k))
    for _ in range(200):
        d = theta[:, :, None] - theta[:, None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (w - n * p).sum(axis=2)  # d loglik / d theta_i
        c = n * p * (1.0 - p)
        hess = c - np.eye(k)[None] * c.sum(axis=2)[:, :, None]  # negative definite on the free agents
        step = np.zeros((b, k))
        step[:, free] = np.linalg.solve(-hess[:, free][:, :, free], grad[:, free][..., None])[..., 0]
        ll0 = _log_likelihood(theta, w)
        t = np.ones(b)
        for _ in range(40):  # halve the step where it would lower the likelihood
            cand = theta + t[:, None] * step
            worse = _log_likelihood(cand, w) < ll0 - 1e-9 * np.abs(ll0)
            if not worse.any():
                break
            t = np.where(worse, t / 2.0, t)
        theta = cand
        if np.abs(t[:, None] * step).max() < tol:
            break
    return theta


def fit_ratings(wins: np.ndarray, anchor: int, prior: float = 1.0) -> np.ndarray:
    """Bradley-Terry ratings on the Elo scale from a matrix of board wins (maximum likelihood).

    Args:
        wins: ``float64[N, N]``; ``wins[i, j]`` = boards ``i`` won against ``j``, ties one half
            (so ``wins[i, j] + wins[j, i]`` is the boards the pair played).
        anchor: the agent pinned at 1500.
        prior: virtual tied boards added to each pair that played (half a win each way).

    Returns:
        ``float64[N]``: ratings, ``ratings[anchor] == 1500``.

    Raises:
        ValueError: ``wins`` is not square and non-negative, or an agent played no board.
    """
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or (w < 0).any():
        raise ValueError(f"wins must be a non-negative square matrix, got shape {w.shape}")
    played = (w + w.T).sum(axis=1)
    if w.shape[0] > 1 and (played == 0).any():
        raise ValueError(f"agents {np.flatnonzero(played == 0).tolist()} played no board")
    return ANCHOR_RATING + ELO * fit_batch(w[None], anchor, prior)[0]


def win_matrix(names: Sequence[str], counts: dict[tuple[int, int], tuple[float, float, float]]) -> np.ndarray:
    """``float64[N, N]`` board wins (ties one half) from ``(i, j) -> (wins of i, ties, wins of j)``."""
    w = np.zeros((len(names), len(names)))
    for (i, j), (wi, t, wj) in counts.items():
        w[i, j] += wi + t / 2.0
        w[j, i] += wj + t / 2.0
    return w


def bootstrap_ratings(names: Sequence[str], counts: dict[tuple[int, int], tuple[float, float, float]],
                      anchor: int, rng: np.random.Generator, n_boot: int = 1000,
                      conf: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of :func:`fit_ratings` (``float64[N]`` lows, highs):
    each pair's boards are resampled with replacement (a multinomial draw of its wins, ties
    and losses) and the ratings refitted ``n_boot`` times."""
    n = len(names)
    w = np.zeros((n_boot, n, n))
    for (i, j), c in counts.items():
        c = np.asarray(c, dtype=float)
        total = int(c.sum())
        if not total:
            continue
        wi, t, wj = rng.multinomial(total, c / total, size=n_boot).T
        w[:, i, j] += wi + t / 2.0
        w[:, j, i] += wj + t / 2.0
    draws = ANCHOR_RATING + ELO * fit_batch(w, anchor)
    a = (1.0 - conf) / 2.0
    return np.quantile(draws, a, axis=0), np.quantile(draws, 1.0 - a, axis=0)


def score_ratings(n: int, pair_deltas_per_deal: dict[tuple[int, int], np.ndarray], anchor: int,
                  rng: np.random.Generator | None = None, n_boot: int = 1000,
                  conf: float = 0.95) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Ratings from the board scores: ``u_i - u_j`` fits the mean board score per deal of
    ``i`` against ``j`` (least squares weighted by the pair's boards), ``u[anchor] = 0``.

    Args:
        n: agents.
        pair_deltas_per_deal: ``(i, j) -> float64[boards]``, ``i``'s board scores per deal
            (score-sheet units) against ``j``.
        anchor: the agent at 0.
        rng, n_boot, conf: with ``rng``, percentile bootstrap intervals (each pair's boards
            resampled with replacement).

    Returns:
        ``(u, lo, hi)``, ``float64[N]`` each in score-sheet units per deal (``lo``/``hi`` None
        without ``rng``).
    """
    keys = [k for k, v in pair_deltas_per_deal.items() if len(v)]
    free = [i for i in range(n) if i != anchor]
    x = np.zeros((len(keys), n))
    for r, (i, j) in enumerate(keys):
        x[r, i], x[r, j] = 1.0, -1.0
    sw = np.sqrt([len(pair_deltas_per_deal[k]) for k in keys])
    # u_free = P @ means: the weighted least-squares solution is linear in the pairs' means
    proj = np.linalg.pinv(x[:, free] * sw[:, None]) * sw[None, :]
    means = np.array([pair_deltas_per_deal[k].mean() for k in keys])
    u = np.zeros(n)
    u[free] = proj @ means
    if rng is None:
        return u, None, None
    boot = np.empty((n_boot, len(keys)))
    for r, k in enumerate(keys):
        v = pair_deltas_per_deal[k]
        boot[:, r] = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    draws = np.zeros((n_boot, n))
    draws[:, free] = boot @ proj.T
    a = (1.0 - conf) / 2.0
    return u, np.quantile(draws, a, axis=0), np.quantile(draws, 1.0 - a, axis=0)


def expected_score(ra: float, rb: float) -> float:
    """Board win probability of a rating ``ra`` against ``rb`` (ties one half)."""
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


# ---------------------------------------------------------------------------- the league


def check_league(names: Sequence[str], anchor: str) -> None:
    """Raises ValueError unless ``names`` are 2+ distinct agents that include ``anchor``."""
    if len(names) < 2:
        raise ValueError(f"a league needs at least 2 agents, got {list(names)}")
    dup = sorted({n for n in names if list(names).count(n) > 1})
    if dup:
        raise ValueError(f"agents named twice in the league: {', '.join(dup)}")
    if anchor not in names:
        raise ValueError(f"the anchor {anchor!r} (pinned at 1500) is not in the league {list(names)}; "
                         f"add it or choose another with --anchor")


def pairs_of(names: Sequence[str]) -> list[tuple[int, int]]:
    """The round robin's pairs ``(i, j)``, ``i < j`` (``names[i]`` is the candidate)."""
    return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]


def play_league(names: Sequence[str], save: str | Path, preset: str = "bazar", split: str = "test",
                seed: int = 0, schedule: Schedule | None = None, workers: int | None = 1,
                address: str | None = None, deadline: float | None = None, progress: bool = True,
                anchor: str = "rules", n_boot: int = 1000,
                factory: Callable[[str, RulesConfig], Any] | None = None) -> dict[str, Any]:
    """Play (or resume) the league's boards into ``save``, then rate the agents.

    Args:
        names: agent names that ``factory`` builds (registry names or checkpoint paths).
        save: the pickle file of board records; boards already in it are not played again.
        preset, split, seed: the suite and the agents' generators (as ``blot-eval``).
        schedule: rounds and stopping (default :class:`Schedule`).
        workers, address: where the boards run (:func:`agents.eval.board_pool.open_pool`: 1
            with no address is this process).
        deadline: seconds after which to stop playing (the boards so far are rated).
        progress: a tqdm bar on stderr.
        anchor: the agent pinned at 1500.
        n_boot: bootstrap resamples of the rating intervals.
        factory: ``factory(name, rules) -> agent`` (the command-line edge passes
            :func:`agents.registry.make_agent`).

    Returns:
        The report of :func:`league_report`, with ``stopped`` (``"deadline"``,
        ``"interrupted"`` or None) and ``wall_seconds``.

    Raises:
        ValueError: a bad league, schedule or suite size; SaveFormatError: an old save file, or
            one whose boards were played by other network weights under a name
            (:func:`agents.eval.board_pool.check_weights`).
    """
    schedule = schedule or Schedule()
    check_league(names, anchor)
    if factory is None:
        raise TypeError("play_league builds its agents by name: pass factory=agents.registry.make_agent")
    cfg = make_rules(preset)
    deals = load_suite(preset, split)
    if schedule.max_boards > len(deals):
        raise ValueError(f"suite {preset}_{split} has {len(deals)} boards, the schedule asks for up to "
                         f"{schedule.max_boards} per pair")
    t0 = time.perf_counter()
    f, records = open_save(save)
    pool = None
    stopped = None
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=0, desc=f"league {preset}", unit="board", mininterval=2)

    def tick(rec: dict) -> None:
        if bar is not None:
            bar.update(1)

    try:
        mine = [r for r in records if _league_board(r, cfg.preset, split, seed)]
        built = build_agents(names, cfg, factory)
        check_weights(mine, {n: weights_digest(a) for n, a in built.items()}, cfg.preset, split, seed, save)
        while stopped is None:
            states = [pair_state(pair_deltas(records, names[i], names[j], cfg.preset, split, seed),
                                 names[i], names[j], schedule) for i, j in pairs_of(names)]
            if bar is not None:  # at most: this round's missing boards and the later rounds
                bar.total = bar.n + sum(len(s.missing) + schedule.max_boards - s.round_end for s in states)
                bar.refresh()
            # board by board across the pairs, so that the slow pairs' boards do not all come last
            tasks = sorted(((s.a, s.b, i) for s in states for i in s.missing), key=lambda t: t[2])
            if not tasks:
                break
            if pool is None:  # the agents built here go to this process or forked workers as they are
                job = BoardJob(cfg, deals, split, seed, commit(), factory=factory,
                               agents=built if address is None else {})
                pool = open_pool(job, workers, address, warm=names)
            stop = run_tasks(pool, tasks, f, None if deadline is None else t0 + deadline,
                             on_record=tick)
            records.extend(stop.records)
            if stop.stopped:
                stopped = "deadline" if stop.deadline else "interrupted"
    finally:
        f.close()
        if bar is not None:
            bar.close()
        if pool is not None:
            close_pool(pool)
    report = league_report(names, records, cfg.preset, split, seed, schedule, anchor, n_boot)
    report.update(stopped=stopped, wall_seconds=time.perf_counter() - t0)
    return report


def league_report(names: Sequence[str], records: Sequence[dict], preset: str, split: str, seed: int,
                  schedule: Schedule, anchor: str = "rules", n_boot: int = 1000) -> dict[str, Any]:
    """Ratings and pair results of a league from its records (the boards the schedule counts).

    Returns ``{"preset", "split", "seed", "anchor", "schedule", "fit", "agents": [{"name",
    "rating", "ci95", "score", "score_ci95", "boards", "board_win_rate"}, ...] (by rating,
    best first), "pairs": [{"a", "b", "boards", "status", "wins", "ties", "losses",
    "board_win_rate", "win_rate_ci95", "expected_win_rate", "mean_board_score", "ci95",
    "match_win_rate", "match_win_rate_ci95", "matches", "cpu_seconds"}, ...], "boards",
    "cpu_seconds"}``. ``rating`` is :func:`fit_ratings`'s (Elo scale), ``score``
    :func:`score_ratings`' (score-sheet units per deal over the anchor); a pair's rates and
    scores are ``a``'s, its matches those of :func:`agents.eval.arena.match_outcomes`.
    """
    check_league(names, anchor)
    counts: dict[tuple[int, int], tuple[float, float, float]] = {}
    per_deal: dict[tuple[int, int], np.ndarray] = {}
    cfg = make_rules(preset)
    pairs = []
    for i, j in pairs_of(names):
        a, b = names[i], names[j]
        boards = pair_boards(records, a, b, preset, split, seed)
        st = pair_state({k: x.delta for k, x in boards.items()}, a, b, schedule)
        n = st.boards
        if st.status == "playing":  # an unfinished league: every board of the round played so far
            while n in boards:
                n += 1
        d = np.array([boards[k].delta for k in range(n)], dtype=float)
        row: dict[str, Any] = {"a": a, "b": b, "boards": n, "status": st.status,
                               "cpu_seconds": pair_cpu(records, a, b, preset, split, seed, n)}
        if n:
            wins, ties, losses = float((d > 0).sum()), float((d == 0).sum()), float((d < 0).sum())
            counts[(i, j)] = (wins, ties, losses)
            per_deal[(i, j)] = d / 2.0
            rate = (wins + ties / 2) / n
            m, lo, hi = stats.mean_ci(d / 2.0)
            matches = match_outcomes([boards[k] for k in range(n)], cfg)
            mw, mn = sum(x + y for x, y in matches), 2 * len(matches)
            row.update(wins=int(wins), ties=int(ties), losses=int(losses), board_win_rate=rate,
                       win_rate_ci95=list(stats.wilson_interval(wins + ties / 2, n)),
                       mean_board_score=m, ci95=[lo, hi], matches=mn,
                       match_win_rate=mw / mn if mn else None,
                       match_win_rate_ci95=list(stats.wilson_interval(mw, mn)) if mn else [None, None])
        pairs.append(row)
    k = names.index(anchor)
    played = {x for key in counts for x in key}
    out_agents = []
    if len(played) == len(names):
        rng = np.random.default_rng(seed)
        ratings = fit_ratings(win_matrix(names, counts), k)
        lo, hi = bootstrap_ratings(names, counts, k, rng, n_boot)
        u, ulo, uhi = score_ratings(len(names), per_deal, k, rng, n_boot)
        for p in pairs:
            ia, ib = names.index(p["a"]), names.index(p["b"])
            p["expected_win_rate"] = expected_score(ratings[ia], ratings[ib])
        for i, name in enumerate(names):
            mine = [p for p in pairs if name in (p["a"], p["b"]) and p["boards"]]
            nb = sum(p["boards"] for p in mine)
            won = sum(p["board_win_rate"] * p["boards"] if p["a"] == name else (1 - p["board_win_rate"]) * p["boards"]
                      for p in mine)
            out_agents.append({"name": name, "rating": float(ratings[i]), "ci95": [float(lo[i]), float(hi[i])],
                               "score": float(u[i]), "score_ci95": [float(ulo[i]), float(uhi[i])],
                               "boards": nb, "board_win_rate": won / nb if nb else None})
        out_agents.sort(key=lambda x: -x["rating"])
    return {"preset": preset, "split": split, "seed": seed, "anchor": anchor, "schedule": asdict(schedule),
            "fit": {"model": "bradley-terry on board results (win 1, tie 1/2, loss 0), Elo scale",
                    "anchor_rating": ANCHOR_RATING, "prior_tied_boards_per_pair": 1.0, "bootstrap": n_boot,
                    "score": "least squares on the pairs' mean board scores per deal, anchor 0"},
            "agents": out_agents, "pairs": pairs, "boards": sum(p["boards"] for p in pairs),
            "cpu_seconds": sum(p["cpu_seconds"] for p in pairs)}


# ---------------------------------------------------------------------------- output


def format_league(report: dict[str, Any]) -> str:
    """The ratings table and the pairs table of :func:`league_report` as plain text."""
    sch = report["schedule"]
    lines = [f"league, preset {report['preset']}, split {report['split']}, seed {report['seed']}: rating = "
             f"Bradley-Terry on board results (ties one half), Elo scale, {report['anchor']} = 1500; score = fit "
             f"of the mean board scores per deal, {report['anchor']} = 0; 95% bootstrap intervals "
             f"({report['fit']['bootstrap']} resamples)",
             f"schedule: rounds of {sch['round_boards']} boards per pair, up to {sch['max_boards']}; a pair stops "
             f"when its board win rate's 95% Wilson interval is outside [{1 - sch['separated']:.2f}, "
             f"{sch['separated']:.2f}]", ""]
    if not report["agents"]:
        lines.append("no ratings yet: some agent has played no board")
    else:
        lines.append(f"{'rank':<5}{'agent':<22}{'rating':>7}  {'95% CI':<14}{'score':>7}  {'95% CI':<18}"
                     f"{'boards':>7}  {'board win':>9}")
        for r, a in enumerate(report["agents"], 1):
            lo, hi = a["ci95"]
            slo, shi = a["score_ci95"]
            lines.append(f"{r:<5}{a['name']:<22}{a['rating']:>7.0f}  [{lo:>4.0f}, {hi:>4.0f}]   "
                         f"{a['score']:>+7.2f}  [{slo:+.2f}, {shi:+.2f}]".ljust(78)
                         + f"{a['boards']:>7}  {a['board_win_rate']:>9.3f}")
    lines += ["", f"{'a':<16}{'b':<16}{'boards':>7}  {'status':<11}{'a wins':>7}  {'95% CI':<16}{'model':>6}  "
              f"{'a mean/deal':>11}  {'95% CI':<18}{'a matches':>9}  {'CPU s':>8}"]
    for p in report["pairs"]:
        if not p["boards"]:
            lines.append(f"{p['a']:<16}{p['b']:<16}{0:>7}  {p['status']:<11}")
            continue
        wlo, whi = p["win_rate_ci95"]
        lo, hi = p["ci95"]
        model = p.get("expected_win_rate")
        mw = p.get("match_win_rate")
        lines.append(f"{p['a']:<16}{p['b']:<16}{p['boards']:>7}  {p['status']:<11}{p['board_win_rate']:>7.3f}  "
                     f"[{wlo:.3f}, {whi:.3f}]  {'-' if model is None else f'{model:.3f}':>6}  "
                     f"{p['mean_board_score']:>+11.2f}  [{lo:+.2f}, {hi:+.2f}]".ljust(98)
                     + f"{'-' if mw is None else f'{mw:.3f}':>9}  {p['cpu_seconds']:>8.1f}")
    lines.append(f"{report['boards']} boards, {report['cpu_seconds']:.0f} CPU seconds; 'model' is the board win "
                 f"rate the ratings predict, 'a matches' a's duplicate match win rate to the target"
                 + (f"; stopped early ({report['stopped']}): rerun to resume" if report.get("stopped") else ""))
    return "\n".join(lines)


def plot_league(report: dict[str, Any], path: str | Path) -> None:
    """The ratings (left: Elo scale, from board results; right: from board scores, per deal)
    with their 95% intervals, best at the top, as a PNG at ``path``.

    Raises:
        ImportError: matplotlib is not installed (the ``train`` extra has it).
    """
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError(f"--plot needs matplotlib ({e}): pip install \"blot-env[train]\"") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = report["agents"][::-1]
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 1.2 + 0.45 * len(agents)), layout="constrained", sharey=True)
    y = np.arange(len(agents))
    panels = (("rating", "ci95", ANCHOR_RATING, "{:.0f}",
               f"rating (Elo scale, {report['anchor']} = 1500)\nfrom board results, ties one half"),
              ("score", "score_ci95", 0.0, "{:+.1f}",
               f"score ({report['anchor']} = 0)\nfrom board scores, per deal"))
    for ax, (key, ci, ref, fmt, label) in zip(axes, panels):
        r = np.array([a[key] for a in agents])
        lo = np.array([a[ci][0] for a in agents])
        hi = np.array([a[ci][1] for a in agents])
        ax.errorbar(r, y, xerr=[r - lo, hi - r], fmt="o", color="tab:blue", capsize=4)
        for yi, ri in zip(y, r):
            ax.annotate(fmt.format(ri), (ri, yi), textcoords="offset points", xytext=(0, 6), ha="center",
                        fontsize=8)
        ax.axvline(ref, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel(label + ", 95% bootstrap interval", fontsize=9)
    axes[0].set_yticks(y, [a["name"] for a in agents])
    axes[0].set_ylim(-0.6, len(agents) - 0.4)
    fig.suptitle(f"league on {report['preset']} ({report['split']} suite): {report['boards']} boards",
                 fontsize=10)
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = [
    "ANCHOR_RATING",
    "ELO",
    "PairState",
    "Schedule",
    "bootstrap_ratings",
    "check_league",
    "expected_score",
    "fit_batch",
    "fit_ratings",
    "format_league",
    "league_report",
    "oriented",
    "outcomes",
    "pair_boards",
    "pair_deltas",
    "pair_state",
    "pairs_of",
    "play_league",
    "plot_league",
    "score_ratings",
    "win_matrix",
]
