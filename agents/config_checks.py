"""Validation and override helpers for the typed, frozen configs of ``agents`` (style rule 9).

A config is a frozen dataclass whose ``__post_init__`` validates its fields with these checks,
each raising :class:`blot_env.errors.ConfigError` naming the class, the field, what was
expected and the value given. :func:`merge_overrides` applies ``key=value`` overrides
(``ppo.learning_rate=1e-4``, values parsed as YAML) to a nested dict before it is turned into
a config. Used by the RLlib run config (:mod:`agents.integrations.rllib_config`).
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from blot_env.errors import ConfigError


def check_literal(obj: Any, name: str) -> None:
    """``obj.name`` is one of the values of its ``Literal[...]`` type hint. Raises ConfigError."""
    allowed = typing.get_args(typing.get_type_hints(type(obj))[name])
    if getattr(obj, name) not in allowed:
        raise ConfigError(f"{type(obj).__name__}.{name} must be one of {list(allowed)}, got {getattr(obj, name)!r}")


def check_positive(obj: Any, *names: str) -> None:
    """Each field ``obj.<name>`` is > 0 and finite (``max_grad_norm`` may be ``inf``: no
    clipping). Raises ConfigError."""
    for n in names:
        v = getattr(obj, n)
        if not v > 0:
            raise ConfigError(f"{type(obj).__name__}.{n} must be positive, got {v!r}")
        if isinstance(v, float) and math.isinf(v) and n != "max_grad_norm":  # inf grad norm: no clipping
            raise ConfigError(f"{type(obj).__name__}.{n} must be finite, got {v!r}")


def check_in_unit(obj: Any, *names: str) -> None:
    """Each field ``obj.<name>`` lies in [0, 1]. Raises ConfigError."""
    for n in names:
        if not 0.0 <= getattr(obj, n) <= 1.0:
            raise ConfigError(f"{type(obj).__name__}.{n} must be in [0, 1], got {getattr(obj, n)!r}")


def plain(obj: Any) -> Any:
    """A copy of nested dicts, lists and tuples as dicts and lists (what YAML writes)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    return obj


def merge_overrides(data: dict, overrides: Mapping[str, Any] | Iterable[str]) -> dict:
    """A copy of the nested dict ``data`` with ``overrides`` applied: a mapping of dotted keys
    to values, or ``"section.key=value"`` strings (the value parsed as YAML; an empty value is
    ``""``). Missing sections are created.

    Raises:
        ConfigError: a string without ``=``, or a dotted key that goes through a non-section.
    """
    data = plain(data)
    items = overrides.items() if isinstance(overrides, Mapping) else [_split(o) for o in overrides]
    for key, value in items:
        parts = key.split(".")
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {key!r}: {p!r} is not a section")
        node[parts[-1]] = value
    return data


def _split(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key=value (for example ppo.learning_rate=1e-4)")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw) if raw.strip() else ""


__all__ = ["check_in_unit", "check_literal", "check_positive", "merge_overrides", "plain"]
