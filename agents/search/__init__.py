"""Search baselines: a double-dummy solver on the deal-score objective, belief
sampling of the hidden cards, and the PIMC agents ``pimc-K`` (L3) and ``pimc-insane`` (L4).

See docs/search.md.
"""

from .solver import solve

__all__ = ["solve"]
