"""Files written whole or not at all: the JSON that a stopped run must not leave half-written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_json_atomic(path: str | Path, data: Any, default: Callable[[Any], Any] | None = None) -> Path:
    """Write ``data`` as indented JSON at ``path`` whole or not at all: a temporary file beside it,
    then a rename, so a stop (Ctrl-C, a killed job) leaves the old file or the new one, never a
    part. Folders are created. ``default`` is passed to :func:`json.dumps` for objects JSON does not
    know. Returns the path.

    Raises:
        TypeError: ``data`` holds an object JSON cannot write and ``default`` does not convert
            (the old file, if any, is left as it was).
        OSError: the folder cannot be created or written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        text = json.dumps(data, indent=1, default=default) + "\n"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename, so a power cut leaves no empty file
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
