"""The batched engine: B deals stepped at once in compiled code.

See :class:`~blot_env.batched.engine.BatchedEngine` and docs/batched.md.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: modules of ``blot_env`` that the compiled code reads at compile time
_KERNEL_INPUTS = ("cards.py", "codes.py", "combos.py", "scoring.py")


def _refresh_numba_cache() -> None:
    """Drop numba's on-disk cache of this package when any of its sources changed.

    numba keys a cached function on its own file only: a cached ``engine._step`` keeps the
    compiled code of ``_core`` functions it calls even after ``_core.py`` changes (a
    ``git pull`` that touches one module), and the values of ``blot_env.codes`` it read.
    A stamp of every source's hash (this package and ``_KERNEL_INPUTS``) in
    ``__pycache__`` makes such a change clear the whole cache here. A read-only install
    (numba then caches elsewhere, and every file changes together on upgrade) is left alone.
    """
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    # the package's own sources, and the modules whose constants or functions the kernels
    # compile in (numba freezes them into the cached code)
    sources = sorted(here.glob("*.py")) + [here.parent / name for name in _KERNEL_INPUTS]
    for src in sources:
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    stamp = here / "__pycache__" / "blot_sources.sha256"
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    try:
        stamp.parent.mkdir(exist_ok=True)
        for cached in stamp.parent.glob("*.nb[ic]"):
            cached.unlink()
        stamp.write_text(digest.hexdigest())
    except OSError:
        pass


_refresh_numba_cache()

from .engine import BatchedEngine, BatchStep  # noqa: E402

__all__ = ["BatchStep", "BatchedEngine"]
