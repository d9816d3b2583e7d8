"""An alias of ``blot-eval`` kept for the commands written with it: every option is blot-eval's
(``--save``, ``--deadline``, ``--summarize``, ``--paired``, ``--mixed``, ``--address``, ...;
docs/evaluation.md, "Long runs that survive a stop").

    python scripts/eval_long.py --agent pimc-64 --vs rules-medium --workers 2 --save runs/p.pkl
    # is
    blot-eval --agent pimc-64 --vs rules-medium --workers 2 --save runs/p.pkl
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.eval.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
