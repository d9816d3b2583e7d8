"""Exceptions raised by the rules engine, the env and the record tools."""

from __future__ import annotations


class BlotError(Exception):
    """Base class of every error this package raises on purpose."""


class IllegalActionError(BlotError, ValueError):
    """An action that the rules forbid in the current state.

    The message names the action, the seat (and the agent, when known), the rule (with its
    rules.md section) and the legal alternatives. A value that is no action id at all (a
    float, a string, None while the agent is to act, an id outside the action space) raises
    it too: see :func:`blot_env.actions.action_id`.
    """

    def __init__(self, action: str, seat: int, reason: str, legal: list[str] | None = None,
                 agent: str | None = None):
        self.action = action
        self.seat = seat
        self.agent = agent
        self.reason = reason
        self.legal = list(legal or [])
        who = f"seat {seat}" + (f" ({agent})" if agent else "")
        msg = f'"{action}" by {who}: {reason}'
        if self.legal:
            shown = ", ".join(self.legal[:12])
            more = f" (+{len(self.legal) - 12} more)" if len(self.legal) > 12 else ""
            msg += f"; legal: {shown}{more}"
        super().__init__(msg)


class RecordError(BlotError, ValueError):
    """A malformed or inconsistent deal record; the message names the field."""


class ConfigError(BlotError, ValueError):
    """An unknown preset or knob, or a knob value outside its domain."""
