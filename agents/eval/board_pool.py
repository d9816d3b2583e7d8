"""The one evaluation engine: boards played one per task, in this process, on a pool of
processes of this machine or on a Ray cluster, each record kept (and saved) as it finishes.

Everything that plays duplicate boards runs here (docs/evaluation.md): ``blot-eval`` (plain
rows, ``--mixed``, ``--save``, the league of :mod:`agents.eval.league`) and
:func:`agents.eval.arena.evaluate`, which keeps its boards in memory. :func:`play_boards`
plays a list of tasks: a run stopped by a deadline, Ctrl-C, SIGTERM or a crash keeps what
finished, and with a save file (:func:`open_save`) a later run plays only the boards it lacks.

Where the boards run (:func:`open_pool`):

* this process (one worker, no address): :class:`InProcessPool`, the same task function and
  records as a pool's, without a process of its own (a Ctrl-C abandons the board in flight);
* local: ``multiprocessing.Pool`` with the ``fork`` start method, ``workers`` processes;
* Ray: ``ray.util.multiprocessing.Pool`` on the cluster at ``address`` (``"auto"``, a
  ``host:port`` or ``ray://host:port``), ``workers`` actors (default: the cluster's CPUs).
  Ray is optional: it is imported only here, and only when an address is given; every node
  needs blot-env installed (the actors import :mod:`agents` and :mod:`blot_env`).

A task is ``(candidate, opponent, board index)`` with agent keys; the suite, rules, seed,
the agents already built (``agents``: an :func:`~agents.eval.arena.evaluate` caller's
objects, or the named agents built once by the parent) and the factory that builds the
other names (:func:`agents.registry.make_agent`, passed in by the command-line edge) are
the job's (:class:`BoardJob`), sent once to each worker. A worker builds each agent once
and keeps it.
Other jobs use the same pools: :func:`run_tasks` takes any module-level task function and a
record writer, and the task reads the job it shares with the others with :func:`worker_job`
(``scripts/dd_table.py``, the double-dummy tables of :mod:`agents.search.dd_table`).

The save file is a sequence of pickled dicts, one per board (:func:`play_task`):
``format`` (:data:`RECORD_FORMAT`), ``agent``, ``vs``, ``preset``, ``split``, ``seed``,
``mixed``, ``index`` (the board), ``board`` (:class:`agents.eval.boards.BoardResult`),
``timing`` (:class:`agents.eval.boards.Timing`), ``names`` (the two agents' ``name``),
``cpu_seconds`` and ``seconds`` (the worker's CPU and wall time for the board), ``commit``
(the git commit of the code that played it, when known) and ``weights`` (the two agents'
:func:`weights_digest`: a name such as ``ppo`` loads whatever policy is shipped, so the
digest tells apart boards played by two policies under one name). A record cut short by a
kill is dropped on the next read and cut off before new records are appended; any other
record that cannot be read is a :class:`SaveFormatError` naming the file and the record.
:func:`read_records` unpickles only the classes a record holds, under their present
modules or the ones of earlier layouts (``agents.arena``, ``agents.board_pool``,
``agents.stats``, ``agents.eval.arena``), so a save file cannot run code.

Format history: 1 (no ``format`` field) re-dealt a board passed out at either table; 2
scores a passed-out table 0 and never re-deals, so the two cannot be mixed and a file of
format-1 records is refused (:class:`SaveFormatError`).
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing as mp
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from blot_env.rules_config import RulesConfig

from .boards import BoardResult, TableResult, Timing, play_board

RECORD_FORMAT = 2
"""Version of the board records (module docstring, "Format history")."""

Task = tuple[str, str, int]
"""``(candidate name, opponent name, board index)``."""


class SaveFormatError(ValueError):
    """A save file holds records that cannot be mixed with a run's: another format than
    :data:`RECORD_FORMAT`, or (:func:`check_weights`) other network weights under the same name."""


@dataclass(frozen=True)
class BoardJob:
    """What every task of a run shares: the rules, the suite's deals, its split, the seed, and
    whether the boards are played in the mixed-partnership mode (:func:`agents.eval.boards.play_board`)."""

    cfg: RulesConfig
    deals: Sequence[dict] | Mapping[int, dict]
    """Board index -> suite deal (the suite's list, or a mapping for boards that start later)."""
    split: str = "test"
    seed: int = 0
    commit: str | None = None
    mixed: bool = False
    factory: Callable[[str, RulesConfig], Any] | None = None
    """Builds each agent the tasks name (``factory(name, rules)``; the command-line edge passes
    :func:`agents.registry.make_agent`, which travels to the workers by reference)."""
    agents: Mapping[str, Any] = field(default_factory=dict)
    """Agents already built, by the key the tasks name them with (:func:`build_agents`): used
    as they are in this process, inherited by forked workers, pickled to Ray actors; the
    other keys are names that ``factory`` builds."""


# ---------------------------------------------------------------------------- worker side

_JOB: dict[str, Any] = {}
_AGENTS: dict[str, Any] = {}
_DIGESTS: dict[str, str | None] = {}


def _init_worker(job: BoardJob, own_group: bool = False) -> None:
    """Worker set-up: one torch thread, the job; Ctrl-C is left to the parent, which stops
    the pool (a local worker that took it would be replaced by a new one), and SIGTERM ends
    the worker (a worker forked while :func:`run_tasks` waits would otherwise inherit the
    parent's handler and outlive the pool's terminate).

    ``own_group`` (the local pool) puts the worker in a process group of its own, so that a
    signal to the parent's group (Ctrl-C at a terminal, ``kill -TERM -PGID``) reaches the
    parent alone, which stops the pool in order: a worker killed while it holds a lock of the
    pool's queues would leave ``Pool.terminate`` waiting on that lock for ever."""
    if own_group:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
    with contextlib.suppress(ValueError):  # not the main thread of the worker (some Ray set-ups)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _one_torch_thread()
    _JOB["job"] = job
    _AGENTS.clear()
    _DIGESTS.clear()


def _one_torch_thread() -> None:
    # a forked child that inherits the parent's OpenMP pool deadlocks on its first parallel
    # torch op, and many workers on one machine would oversubscribe its cores
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _agent(name: str, cfg: RulesConfig) -> Any:
    if name not in _AGENTS:
        job = _JOB["job"]
        if name in job.agents:
            _AGENTS[name] = job.agents[name]
        else:
            if job.factory is None:
                raise TypeError(f"agent {name!r}: the BoardJob has no factory to build agents by name "
                                "(pass factory=agents.registry.make_agent)")
            _AGENTS[name] = job.factory(name, cfg)
        _DIGESTS[name] = weights_digest(_AGENTS[name])
        _one_torch_thread()
    return _AGENTS[name]


def build_agents(names: Iterable[str], cfg: RulesConfig,
                 factory: Callable[[str, RulesConfig], Any]) -> dict[str, Any]:
    """Each named agent, built once here by ``factory(name, rules)`` (the ``agents`` of a
    :class:`BoardJob`, and what :func:`agent_digests` reads the weights of).

    Raises:
        UnknownAgentError, ConfigError: as the factory (:func:`agents.registry.make_agent`).
    """
    return {name: factory(name, cfg) for name in dict.fromkeys(names)}


@contextlib.contextmanager
def _as_worker(job: Any, agents: dict[str, Any], digests: dict[str, str | None]) -> Iterator[None]:
    """This process as a worker of ``job`` (with its own agent caches) for one task, and back:
    torch on one thread while the task runs, then the caller's setting."""
    saved = _JOB.get("job"), dict(_AGENTS), dict(_DIGESTS)
    _JOB["job"] = job
    _AGENTS.clear()
    _AGENTS.update(agents)
    _DIGESTS.clear()
    _DIGESTS.update(digests)
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    _one_torch_thread()
    try:
        yield
    finally:
        agents.update(_AGENTS)
        digests.update(_DIGESTS)
        torch = sys.modules.get("torch")  # a task may have imported it
        if torch is not None and threads is not None:
            torch.set_num_threads(threads)
        _AGENTS.clear()
        _AGENTS.update(saved[1])
        _DIGESTS.clear()
        _DIGESTS.update(saved[2])
        if saved[0] is None:
            _JOB.pop("job", None)
        else:
            _JOB["job"] = saved[0]


def worker_job() -> Any:
    """The job this worker was set up with (:func:`make_pool`): what a task function other
    than :func:`play_task` reads its shared data from (``agents.search.dd_table.solve_task``).

    Raises:
        RuntimeError: called outside a worker of :func:`make_pool`.
    """
    if "job" not in _JOB:
        raise RuntimeError("worker_job() is only set in a worker of board_pool.make_pool")
    return _JOB["job"]


def play_task(task: Task) -> dict[str, Any]:
    """Play board ``index`` of the job's suite (a worker set up by :func:`make_pool`).

    Returns the board's record (module docstring). Raises what
    :func:`agents.eval.boards.play_board` raises.
    """
    job: BoardJob = _JOB["job"]
    agent, vs, index = task
    cfg = job.cfg
    c0, t0 = time.process_time(), time.perf_counter()
    cand = _agent(agent, cfg)
    opp = cand if vs == agent else _agent(vs, cfg)
    timing = Timing()
    board = play_board(cfg, job.deals[index], index, cand, opp, job.seed, job.mixed, timing)
    return {"format": RECORD_FORMAT, "agent": agent, "vs": vs, "preset": cfg.preset, "split": job.split,
            "seed": job.seed, "mixed": job.mixed, "index": index, "board": board, "timing": timing,
            "names": (cand.name, opp.name),
            "cpu_seconds": time.process_time() - c0, "seconds": time.perf_counter() - t0, "commit": job.commit,
            "weights": (_DIGESTS[agent], _DIGESTS[vs])}


# ---------------------------------------------------------------------------- pools


def ray_pool_class() -> type:
    """``ray.util.multiprocessing.Pool``.

    Raises:
        ImportError: Ray is not installed (the message names the extra that installs it).
    """
    try:
        from ray.util.multiprocessing import Pool
    except ImportError as e:
        raise ImportError(f"--address needs Ray, which is not installed ({e}); install the ray extra: "
                          f"pip install \"blot-env[ray]\" (in a clone: pip install -e \".[ray]\"; the rllib "
                          f"extra includes it)") from e
    return Pool


def make_pool(job: Any, workers: int | None, address: str | None = None) -> Any:
    """A pool whose workers play :func:`play_task` for ``job`` (or run another task function
    given to :func:`run_tasks`, which reads ``job`` with :func:`worker_job`).

    Args:
        job: the run's rules, deals, split and seed (a :class:`BoardJob`; another task
            function's job may be any picklable object).
        workers: processes (local) or actors (Ray; None: one per CPU of the cluster).
        address: None for this machine, else the address of a running Ray cluster.

    Returns:
        A ``multiprocessing.pool.Pool`` or a ``ray.util.multiprocessing.Pool``; both offer
        ``imap_unordered``, ``terminate`` and ``join``.

    Raises:
        ValueError: ``workers`` is not a positive integer (None is allowed with Ray).
        ImportError: an address without Ray installed.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive number of processes, got {workers!r}")
    if address is None:
        return mp.get_context("fork").Pool(workers or os.cpu_count() or 1, initializer=_init_worker,
                                           initargs=(job, True))
    pool_class = ray_pool_class()
    return pool_class(processes=workers, initializer=_init_worker, initargs=(job,), ray_address=address)


class InProcessPool:
    """A pool of one worker that is this process: the tasks run one after the other, on demand,
    with the job set as in a worker of :func:`make_pool` (:func:`worker_job`, the agent caches,
    torch on one thread while a task runs). :func:`run_tasks` abandons the task in flight on
    Ctrl-C, SIGTERM or a deadline, as a pool's workers are stopped with theirs."""

    in_process = True

    def __init__(self, job: Any) -> None:
        self.job = job
        self._agents: dict[str, Any] = {}
        self._digests: dict[str, str | None] = {}

    def imap_unordered(self, func: Callable[[Any], Any], tasks: Iterable[Any], chunksize: int = 1) -> _InProcessResults:
        return _InProcessResults(self, func, iter(list(tasks)))

    def call(self, func: Callable[[Any], Any], task: Any) -> Any:
        with _as_worker(self.job, self._agents, self._digests):
            return func(task)

    def terminate(self) -> None:
        self._agents.clear()

    def join(self) -> None:
        pass


class _InProcessResults:
    """The results of :meth:`InProcessPool.imap_unordered`: each ``next`` runs the next task."""

    def __init__(self, pool: InProcessPool, func: Callable[[Any], Any], tasks: Iterator[Any]) -> None:
        self.pool, self.func, self.tasks = pool, func, tasks

    def next(self, timeout: float | None = None) -> Any:
        if timeout == 0:  # nothing is ever ready without being run
            raise mp.TimeoutError
        return self.pool.call(self.func, next(self.tasks))


def open_pool(job: Any, workers: int | None, address: str | None = None,
              warm: Iterable[str] = ()) -> InProcessPool | Any:
    """Where a run's tasks go: :class:`InProcessPool` for one worker on this machine, else
    :func:`make_pool`. Before a local pool forks, the double-dummy solver is compiled here
    when one of the agent names ``warm`` uses it (:func:`warm_up`).

    Raises:
        ValueError, ImportError: as :func:`make_pool`.
    """
    if address is None and workers == 1:
        return InProcessPool(job)
    if address is None and job is not None and hasattr(job, "cfg"):
        warm_up(job.cfg, warm)
    return make_pool(job, workers, address)


def play_boards(job: BoardJob, tasks: Iterable[Task], workers: int | None = 1, address: str | None = None,
                out: BinaryIO | None = None, deadline_at: float | None = None,
                on_record: Callable[[dict], None] | None = None, chunksize: int = 1) -> RunStop:
    """Play board tasks on the one engine and return their records (module docstring).

    Args:
        job: the run's rules, deals, seed, mode and agents.
        tasks: ``(candidate key, opponent key, board index)``; a key is one of ``job.agents``
            or a name ``job.factory`` builds.
        workers: 1 (with no address: this process), local processes, or Ray actors (None:
            this machine's or the cluster's CPUs).
        address: a Ray cluster, or None for this machine.
        out: a save file (:func:`open_save`) each record is appended to as it finishes, or
            None to keep the records in memory only.
        deadline_at: a ``time.perf_counter()`` value to stop at (the boards finished by then
            are kept).
        on_record: called with each record after it is kept (a progress bar).
        chunksize: tasks a worker process takes at a time (1 for a save file, so that each
            board is saved as it finishes; more for many quick boards kept in memory, which
            costs the parent fewer wake-ups; the records come back one by one either way).

    Returns:
        The :class:`RunStop`: ``records`` in the order they finished, and whether a deadline
        or a signal stopped the run.

    Raises:
        ValueError: ``workers`` is not a positive integer; ImportError: an address without
            Ray; what :func:`agents.eval.boards.play_board` raises, from any task.
    """
    tasks = list(tasks)
    if not tasks:
        return RunStop()
    pool = open_pool(job, workers, address, warm=[k for t in tasks for k in t[:2]])
    try:
        return run_tasks(pool, tasks, out, deadline_at, on_record=on_record, chunksize=chunksize)
    finally:
        close_pool(pool)


@dataclass
class RunStop:
    """How :func:`run_tasks` ended: records kept, and whether a deadline or Ctrl-C stopped it."""

    finished: int = 0
    deadline: bool = False
    interrupted: bool = False
    records: list[Any] = field(default_factory=list)

    @property
    def stopped(self) -> bool:
        return self.deadline or self.interrupted


def _run_chunk(work: tuple[Callable[[Any], Any], list[Any]]) -> list[Any]:
    """A worker's task of several: ``func`` on each task of the chunk, the records in order."""
    func, tasks = work
    return [func(t) for t in tasks]


class _Abandon(BaseException):
    """Raised by :func:`run_tasks`' signal handler in a task that runs in this process."""


def run_tasks(pool: Any, tasks: Iterable[Any], out: BinaryIO | None, deadline_at: float | None = None,
              on_record: Callable[[Any], None] | None = None, func: Callable[[Any], Any] = play_task,
              save: Callable[[BinaryIO, Any], None] | None = None, chunksize: int = 1) -> RunStop:
    """Play ``tasks`` on ``pool``, appending each record to ``out`` as it arrives.

    Stops at ``deadline_at`` (a ``time.perf_counter()`` value), on Ctrl-C or on SIGTERM (what
    a batch scheduler sends at a job's time limit), keeping the boards that finished
    meanwhile; the boards still in flight are lost (on an :class:`InProcessPool`, the one
    playing is abandoned), and the caller terminates the pool. The signals are caught only
    when this runs in the main thread (elsewhere they keep their handlers, and a deadline is
    checked between the tasks of an :class:`InProcessPool`). ``on_record`` is called after
    each record is kept (a progress bar). ``out`` None keeps the records in ``records`` only.
    ``chunksize`` tasks go to a worker process at a time (:func:`play_boards`).

    Other jobs than boards run the same way: ``func`` (a module-level function, so that the
    workers find it by name) maps a task to a record, and ``save`` writes one record to
    ``out`` (default :func:`append_record`, a pickle); ``scripts/dd_table.py`` runs
    ``agents.search.dd_table.solve_task`` with ``agents.search.dd_table.append_row``.
    """
    save = append_record if save is None else save
    stop = RunStop()
    caught: list[int] = []
    here = bool(getattr(pool, "in_process", False))
    running = [False]  # a task of an InProcessPool is running in this thread

    def on_signal(signum: int, frame: Any) -> None:
        caught.append(signum)
        if running[0]:
            raise _Abandon

    main = threading.current_thread() is threading.main_thread()
    watched = [signal.SIGINT, signal.SIGTERM]
    timer = main and here and deadline_at is not None
    if timer:
        watched.append(signal.SIGALRM)
    previous = {sig: signal.signal(sig, on_signal) for sig in watched} if main else {}

    def keep(rec: Any) -> None:
        if out is not None:
            save(out, rec)
        stop.finished += 1
        stop.records.append(rec)
        if on_record is not None:
            on_record(rec)

    def interrupted() -> bool:
        return any(sig != signal.SIGALRM for sig in caught)

    try:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, max(deadline_at - time.perf_counter(), 1e-3))
        tasks = list(tasks)
        if chunksize > 1 and not here:  # a chunk per worker task, its records kept one by one
            it = pool.imap_unordered(_run_chunk, [(func, tasks[i:i + chunksize])
                                                  for i in range(0, len(tasks), chunksize)], chunksize=1)
        else:
            it = pool.imap_unordered(func, tasks, chunksize=1)
        grouped = chunksize > 1 and not here
        while not interrupted():
            left = None if deadline_at is None else deadline_at - time.perf_counter()
            if (left is not None and left <= 0) or signal.SIGALRM in caught:
                stop.deadline = True
                break
            try:
                running[0] = here
                try:
                    rec = it.next(timeout=1.0 if left is None else min(left, 1.0))
                finally:
                    running[0] = False
            except (_Abandon, mp.TimeoutError):
                continue
            except StopIteration:
                break
            for one in rec if grouped else (rec,):
                keep(one)
        stop.interrupted = interrupted()
        if stop.stopped and not here:  # keep the boards that finished while we waited
            while True:
                try:
                    rec = it.next(timeout=0)
                except (mp.TimeoutError, StopIteration):
                    break
                for one in rec if grouped else (rec,):
                    keep(one)
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return stop


def build_dataset(job: Any, todo: list[Any], out: BinaryIO, func: Callable[[Any], Any],
                  save: Callable[[BinaryIO, Any], None], workers: int | None = None, address: str | None = None,
                  deadline_at: float | None = None, on_record: Callable[[Any], None] | None = None) -> RunStop:
    """Run the tasks ``todo`` of a dataset command (``scripts/dd_table.py``,
    ``scripts/clone_data.py``) and append each record to ``out`` as it finishes.

    On this machine (``address`` None) the first task runs in this process before the pool
    forks, so that the compiled kernels are loaded once and inherited by the workers; the rest
    run on :func:`make_pool` (``job`` is what :func:`worker_job` returns there) through
    :func:`run_tasks`, which stops at ``deadline_at`` or Ctrl-C keeping what finished. The
    pool is closed before returning. ``todo`` is consumed.

    Returns:
        The :class:`RunStop` (``finished`` counts the first task too).
    """
    stop = RunStop()
    if todo and address is None:
        rec = _run_here(func, job, todo.pop(0))
        save(out, rec)
        stop.finished += 1
        if on_record is not None:
            on_record(rec)
    if todo:
        pool = make_pool(job, workers, address)
        try:
            rest = run_tasks(pool, todo, out, deadline_at, on_record=on_record, func=func, save=save)
        finally:
            close_pool(pool)
        stop.finished += rest.finished
        stop.deadline, stop.interrupted = rest.deadline, rest.interrupted
    return stop


def _run_here(func: Callable[[Any], Any], job: Any, task: Any) -> Any:
    """``func(task)`` in this process, with ``job`` as :func:`worker_job` returns it (as in a worker)."""
    with _as_worker(job, {}, {}):
        return func(task)


CLOSE_TIMEOUT = 20.0
"""Seconds :func:`close_pool` waits for a pool's ``terminate`` before it kills the workers."""


def close_pool(pool: Any, timeout: float = CLOSE_TIMEOUT) -> None:
    """Stop a pool of :func:`make_pool` and its workers (local or Ray).

    A worker killed from outside while it held a lock of the pool's queues (a scheduler that
    signals every process of a job) leaves ``Pool.terminate`` blocked on that lock for ever;
    after ``timeout`` seconds the local workers still alive are killed (SIGKILL), a warning
    goes to stderr, and this returns without the pool's clean-up (its threads are daemons and
    end with the process)."""
    done = threading.Event()
    failed: list[BaseException] = []

    def stop() -> None:
        try:
            pool.terminate()
            pool.join()
        except BaseException as e:  # re-raised in the caller's thread
            failed.append(e)
        done.set()

    threading.Thread(target=stop, name="close_pool", daemon=True).start()
    if done.wait(timeout):
        if failed:
            raise failed[0]
        return
    procs = list(getattr(pool, "_pool", None) or [])
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.kill()
    print(f"warning: the worker pool did not stop within {timeout:g} s (a worker was probably killed "
          f"while it held a queue lock); killed its {len(procs)} remaining worker(s)", file=sys.stderr)
    done.wait(5.0)


# ---------------------------------------------------------------------------- save files


def record_key(r: dict) -> tuple:
    """What tells runs apart: ``(agent, vs, preset, split, seed, mixed)`` (records written before
    the mixed mode could be saved carry no ``mixed`` and are plain)."""
    return r["agent"], r["vs"], r["preset"], r["split"], r["seed"], bool(r.get("mixed", False))


_MODULES = {"agents.arena": "agents.eval.boards", "agents.eval.arena": "agents.eval.boards",
            "agents.board_pool": "agents.eval.board_pool", "agents.stats": "agents.eval.stats"}
"""Modules of earlier layouts -> where their classes are now (the board classes moved from
``agents.arena`` to ``agents.eval.arena``, then to ``agents.eval.boards``)."""

_RECORD_CLASSES = {("agents.eval.boards", "BoardResult"), ("agents.eval.boards", "TableResult"),
                   ("agents.eval.boards", "Timing"), ("blot_env.scoring", "DealResult"),
                   ("blot_env.state", "Contract")}
"""The classes a board record holds (module docstring); a save file names no other."""

MAX_RECORD_BYTES = 1 << 20
"""A record cut short at the end of a file is dropped only if it is shorter than this (a
record is about 1 kB): a longer unreadable end is a damaged file, not a kill mid-write."""


class _Refused(Exception):
    """A save file names a class that is no part of a board record."""


class _RecordUnpickler(pickle.Unpickler):
    """Unpickles one board record: only :data:`_RECORD_CLASSES`, found under their present
    modules or those of earlier layouts (:data:`_MODULES`)."""

    def find_class(self, module: str, name: str) -> Any:
        where = _MODULES.get(module, module)
        if (where, name) not in _RECORD_CLASSES:
            raise _Refused(f"{module}.{name}")
        return super().find_class(where, name)


def read_records(path: str | Path) -> tuple[list[dict], int]:
    """The complete records of one save file, and the byte offset where they end.

    A record cut short at the end of the file (a kill during its write; shorter than
    :data:`MAX_RECORD_BYTES`) is left out; its bytes lie past the returned offset. Records
    of earlier layouts (classes pickled under ``agents.arena``) are read as today's.

    Raises:
        SaveFormatError: a record of another format (format 1 re-dealt passed-out boards), a
            record that cannot be unpickled before the end of the file (a corrupt file, or
            one of another layout), one that names a class no board record holds, or one
            that lacks a field or holds a value of the wrong type (the message names the
            file, the record and the field).
        OSError: the file cannot be read.
    """
    out = []
    good = 0
    size = Path(path).stat().st_size
    with open(path, "rb") as f:
        while True:
            try:
                r = _RecordUnpickler(f).load()
            except EOFError:
                if size - good < MAX_RECORD_BYTES:
                    break  # the end, or a record cut short by a kill
                raise _corrupt(path, len(out), good, EOFError("the file ends inside it")) from None
            except pickle.UnpicklingError as e:
                if "truncated" in str(e) and size - good < MAX_RECORD_BYTES:
                    break  # a record cut short by a kill
                raise _corrupt(path, len(out), good, e) from None
            except _Refused as e:
                raise SaveFormatError(
                    f"{path}: record {len(out)} (from byte {good}) names the class {e}, which no board record "
                    "holds: the file was not written by blot-eval, or by a version whose records this one "
                    "cannot read") from None
            except Exception as e:  # a corrupt record: any error the unpickler meets
                raise _corrupt(path, len(out), good, e) from None
            fmt = r.get("format", 1) if isinstance(r, dict) else None
            if fmt != RECORD_FORMAT:
                raise SaveFormatError(
                    f"{path}: record {len(out)} has format {fmt!r}, this version reads format {RECORD_FORMAT} "
                    f"only (format 1 re-dealt a board passed out at either table; format 2 scores the "
                    f"passed-out table 0, so the two cannot be mixed): save to a new file")
            _check_record(r, path, len(out))
            out.append(r)
            good = f.tell()
    return out, good


def _whole(obj: Any, cls: type) -> bool:
    """``obj`` is a ``cls`` (a dataclass) that holds every one of its fields."""
    import dataclasses

    return isinstance(obj, cls) and all(hasattr(obj, f.name) for f in dataclasses.fields(cls))


def _valid_table(t: Any) -> bool:
    """``t`` is a whole :class:`~agents.eval.boards.TableResult` with a whole deal result."""
    from blot_env.scoring import DealResult
    from blot_env.state import Contract

    def pair(x: Any) -> bool:
        return isinstance(x, tuple | list) and len(x) == 2 and all(isinstance(v, int) for v in x)

    if not (_whole(t, TableResult) and t.side in (0, 1) and _whole(t.result, DealResult)):
        return False
    res = t.result
    c = res.contract
    return (all(pair(getattr(res, k)) for k in ("tricks", "card_points", "combinations", "score"))
            and isinstance(t.contra_seat, int) and isinstance(t.recontra_seat, int)
            and (res.made is None or isinstance(res.made, bool))
            and (c is None or (_whole(c, Contract) and isinstance(c.kind, str)
                               and all(isinstance(getattr(c, k), int)
                                       for k in ("seat", "strain", "value", "plus", "double", "call")))))


def _corrupt(path: str | Path, i: int, at: int, e: BaseException) -> SaveFormatError:
    return SaveFormatError(f"{path}: record {i} (from byte {at}) is corrupt and cannot be read "
                           f"({type(e).__name__}: {e}); the records before it are intact: copy them to a new "
                           "file or remove the file")


#: the fields every board record holds (module docstring) and the types they take
_FIELDS: dict[str, type | tuple[type, ...]] = {"agent": str, "vs": str, "preset": str, "split": str, "seed": int,
                                               "index": int, "cpu_seconds": (int, float)}


def _check_record(r: dict, path: str | Path, i: int) -> None:
    """A board record has the fields its readers use (the league, ``blot-eval --summarize``).

    Raises:
        SaveFormatError: naming the file, the record and the field.
    """
    def bad(field: str, want: str) -> SaveFormatError:
        got = r.get(field, "<missing>")
        try:
            shown = repr(got)[:80]
        except Exception:  # a damaged object whose repr fails
            shown = f"a damaged {type(got).__name__}"
        return SaveFormatError(f"{path}: record {i}: field {field!r} must be {want}, got {shown}; "
                               "the file is damaged or was not written by blot-eval")

    for name, kind in _FIELDS.items():
        v = r.get(name)
        if not isinstance(v, kind) or isinstance(v, bool):
            raise bad(name, f"a {kind.__name__ if isinstance(kind, type) else 'number'}")
    if r["index"] < 0:
        raise bad("index", "a board index >= 0")
    board = r.get("board")
    if not (_whole(board, BoardResult) and isinstance(board.index, int) and isinstance(board.tables, tuple)
            and board.tables and all(_valid_table(t) for t in board.tables)):
        raise bad("board", "a BoardResult of TableResults")
    if not isinstance(r.get("timing"), Timing):
        raise bad("timing", "a Timing")
    if "mixed" in r and not isinstance(r["mixed"], bool):
        raise bad("mixed", "True or False")
    w = r.get("weights", (None, None))
    if not (isinstance(w, tuple | list) and len(w) == 2 and all(d is None or isinstance(d, str) for d in w)):
        raise bad("weights", "two digests (strings or None)")


def load_records(paths: Sequence[str | Path]) -> list[dict]:
    """Every complete record of the save files (a record cut short at the end is ignored).

    Raises:
        SaveFormatError: see :func:`read_records`.
    """
    return [r for p in paths for r in read_records(p)[0]]


def open_save(path: str | Path) -> tuple[BinaryIO, list[dict]]:
    """Open a save file for appending, after reading its records and cutting off a record
    cut short by a kill. Returns the file and the records it held.

    Raises:
        SaveFormatError: see :func:`read_records`.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    old: list[dict] = []
    if p.exists():
        old, good = read_records(p)
        if good < p.stat().st_size:
            with open(p, "r+b") as f:
                f.truncate(good)
    return open(p, "ab"), old


def append_record(f: BinaryIO, rec: dict) -> None:
    """Append one record in a single write, flushed to disk."""
    f.write(pickle.dumps(rec))
    f.flush()
    os.fsync(f.fileno())


def commit() -> str | None:
    """The short git commit of this checkout, or None outside a git work tree."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def weights_digest(agent: Any) -> str | None:
    """The first 12 hex digits of a SHA-256 over the network weights ``agent`` acts with (a
    PPO policy's ``policy``, or the ``net`` a light search wraps), or None for an agent
    without a network (the rule and PIMC agents). A :class:`agents.base.PhaseSplitAgent` with
    a network in either part gets the first 12 hex digits of a SHA-256 over its parts'
    digests, so that a change of either part's weights shows."""
    from ..base import PhaseSplitAgent

    if isinstance(agent, PhaseSplitAgent):
        parts = f"{weights_digest(agent.bidder)}+{weights_digest(agent.player)}"
        return None if parts == "None+None" else hashlib.sha256(parts.encode()).hexdigest()[:12]
    for attr in ("policy", "net"):
        net = getattr(agent, attr, None)
        if net is not None and hasattr(net, "state_dict"):
            return state_dict_digest(net.state_dict())
    return None


def state_dict_digest(weights: dict[str, Any]) -> str:
    """The first 12 hex digits of a SHA-256 over a state dict's tensors (keys sorted, values as
    CPU bytes): :func:`weights_digest` of the network that holds exactly these weights."""
    h = hashlib.sha256()
    for key, value in sorted(weights.items()):
        h.update(key.encode())
        h.update(value.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def agent_digests(names: Iterable[str], cfg: RulesConfig,
                  factory: Callable[[str, RulesConfig], Any]) -> dict[str, str | None]:
    """:func:`weights_digest` of each named agent, built here by ``factory(name, rules)``
    (:func:`agents.registry.make_agent` at the command-line edge).

    Raises:
        UnknownAgentError, ConfigError: as the factory (:func:`agents.registry.make_agent`).
    """
    return {name: weights_digest(factory(name, cfg)) for name in dict.fromkeys(names)}


def check_weights(records: Iterable[dict], digests: dict[str, str | None], preset: str, split: str, seed: int,
                  path: str | Path) -> int:
    """Refuse to resume a save file whose boards were played by other weights under a name.

    Looks at the records of ``path`` between agents of ``digests`` (:func:`agent_digests`) on
    the same preset, split and seed. Returns how many of them carry no ``weights`` (written
    before the digests; they cannot be checked).

    Raises:
        SaveFormatError: a record whose digest for one of its agents differs from today's,
            naming the board, the agent and both digests.
    """
    unchecked = 0
    for r in records:
        if (r["preset"], r["split"], r["seed"]) != (preset, split, seed) or not {r["agent"], r["vs"]} <= digests.keys():
            continue
        if "weights" not in r:
            unchecked += 1
            continue
        for name, digest in zip((r["agent"], r["vs"]), r["weights"]):
            if digest != digests[name]:
                raise SaveFormatError(
                    f"{path}: board {r['index']} of {r['agent']} vs {r['vs']} was played by {name!r} with other "
                    f"network weights (digest {digest}, now {digests[name]}), e.g. before a new policy was "
                    f"shipped under the name: save to a new file")
    return unchecked


def warm_up(cfg: RulesConfig, names: Iterable[str]) -> bool:
    """Compile the double-dummy solver in this process before a local pool forks, when an
    agent of ``names`` uses it (``pimc-*``), so that the workers inherit it instead of each
    compiling its own (a minute per worker without numba's on-disk cache); the parts of a
    ``BIDDER+PLAYER`` name count. Returns whether it compiled anything."""
    if not any(part.strip().startswith("pimc-") for n in names for part in n.split("+")):
        return False
    import numpy as np

    from blot_env.engine import apply_action, current_seat, deal_random
    from blot_env.state import Phase
    from blot_env.view import seat_view

    from ..baselines.random_agent import RandomAgent
    from ..search import solver
    from ..search.sampler import sample_worlds

    rng = np.random.default_rng(0)
    player = RandomAgent()
    while True:
        s = deal_random(cfg, rng, 0)
        while s.phase == Phase.AUCTION or (s.phase == Phase.PLAY and s.trick_no < 1):
            s = apply_action(s, player.act(seat_view(s, current_seat(s)), rng))
        if s.phase == Phase.PLAY:
            break
    sample_worlds(seat_view(s, current_seat(s)), 2, rng)
    solver.solve(s)
    return True


__all__ = [
    "MAX_RECORD_BYTES",
    "RECORD_FORMAT",
    "BoardJob",
    "InProcessPool",
    "RunStop",
    "SaveFormatError",
    "Task",
    "agent_digests",
    "append_record",
    "build_agents",
    "build_dataset",
    "check_weights",
    "close_pool",
    "commit",
    "load_records",
    "make_pool",
    "open_pool",
    "open_save",
    "play_boards",
    "play_task",
    "ray_pool_class",
    "read_records",
    "record_key",
    "run_tasks",
    "state_dict_digest",
    "warm_up",
    "weights_digest",
    "worker_job",
]
