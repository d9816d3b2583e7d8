"""``blot-play``: play blot in the terminal against agents.

Examples::

    blot-play                                   # bazar-app, 4 players, you in seat 0, level easy, one deal
    blot-play --players 2 --level hard --match  # duel-app against pimc-64, a match to 151
    blot-play --preset bazar --target 301 --agents rules-medium,pimc-64,rules-medium
    blot-play --preset belote --agents runs/x/best.pt

The human takes ``--seat``; every other seat is an agent: ``--agents`` (one registry name for
all, or one per other seat in seat order; levels and ``.pt`` checkpoint paths are names too)
or ``--level``. Without ``--preset``, ``--players`` picks the app's game: 4 -> ``bazar-app``,
2 -> ``duel-app``. ``--match`` plays to the preset's target, ``--target N`` to N (the app
offers 151 and 301); otherwise one deal. The finished deal (or match) is saved as a deal
record (``blot-match/1`` for a match), also when the game is stopped early. Exit status: 0
when the game was played or stopped by the player, 2 on bad options.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from blot_env.errors import ConfigError
from blot_env.rules_config import PRESETS, make_rules

from ..eval.cli import seed_number
from ..registry import UnknownAgentError
from .game import HUMAN, LEVELS, Game, agents_for

APP_PRESETS = {4: "bazar-app", 2: "duel-app"}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="blot-play", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--preset", choices=list(PRESETS), help="the game (default: by --players)")
    ap.add_argument("--players", type=int, choices=(2, 4),
                    help="2 or 4 players: chooses duel-app or bazar-app when --preset is not given")
    ap.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    ap.add_argument("--level", choices=list(LEVELS), default="easy",
                    help="the other seats' level: " + ", ".join(f"{k}={v}" for k, v in LEVELS.items()))
    ap.add_argument("--agents", help="agent name(s) for the other seats, comma-separated (overrides --level)")
    ap.add_argument("--match", action="store_true", help="play a match to the preset's target")
    ap.add_argument("--target", type=int, help="play a match to this target (e.g. 151 or 301)")
    ap.add_argument("--seed", type=seed_number, help="seed of the deals and agents (default: drawn and printed)")
    ap.add_argument("--save", help="where to write the record (default blot-play-PRESET-SEED.json)")
    ap.add_argument("--no-save", action="store_true", help="do not write a record")
    ap.add_argument("--no-color", action="store_true", help="plain text")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.save is not None and not args.no_save and Path(args.save).is_dir():
        print(f"blot-play: --save {args.save} is a folder; give the record's file name (e.g. {args.save}/game.json)",
              file=sys.stderr)
        return 2
    try:
        from rich.console import Console
    except ImportError as e:
        print(f'blot-play draws the table with rich: pip install "blot-env[play]" ({e})', file=sys.stderr)
        return 2
    from .terminal import play

    preset = args.preset or APP_PRESETS[args.players or 4]
    try:
        cfg = make_rules(preset, target=args.target) if args.target is not None else make_rules(preset)
        if args.players is not None and cfg.num_players != args.players:
            raise ConfigError(f"--players {args.players} does not fit preset {preset!r} "
                              f"({cfg.num_players} players)")
        names = [s.strip() for s in args.agents.split(",")] if args.agents else [args.level]
        agents = agents_for(cfg, [args.seat], names)
    except (ConfigError, UnknownAgentError, ImportError) as e:
        print(f"blot-play: {e}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1_000_000
    match = args.match or args.target is not None
    labels = [HUMAN if a is None else a.name for a in agents]
    game = Game(cfg, agents, seed=seed, match=match, names=labels)
    console = Console(no_color=args.no_color or None, highlight=False)
    what = f"a match to {cfg.target}" if match else "one deal"
    console.print(f"[bold]blot-play[/]: {preset}, {what}; you are seat {args.seat}; "
                  + ", ".join(f"seat {s}: {labels[s]}" for s in range(cfg.num_players) if s != args.seat)
                  + f"; seed {seed}. Type a number or an action (9H, bid 10 S, contra, announce terz); "
                  "help lists the choices, quit stops.")
    stopped = False
    try:
        play(game, console, args.seat)
    except (KeyboardInterrupt, EOFError):
        stopped = True
        console.print("\ngame stopped")
    if not args.no_save:
        path = game.save(args.save or f"blot-play-{preset}-{seed}.json")
        console.print(f"{'unfinished game' if stopped else 'record'} saved to {path}")
    return 0


__all__ = ["build_parser", "main"]
