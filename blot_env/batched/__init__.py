"""The batched engine: B deals stepped at once in compiled code (issue 6).

See :class:`~blot_env.batched.engine.BatchedEngine`.
"""

from .engine import BatchedEngine, BatchStep

__all__ = ["BatchStep", "BatchedEngine"]
