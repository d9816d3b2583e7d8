"""Humans at the table: the :class:`~agents.play.game.Game` session and the terminal game
``blot-play`` (:mod:`agents.play.cli`). The browser viewer (:mod:`agents.view`) drives the same
:class:`Game`."""

from .game import HUMAN, LEVELS, Game, agents_for, board_records

__all__ = ["HUMAN", "LEVELS", "Game", "agents_for", "board_records"]
