"""``python -m agents.play``: the same as ``blot-play``."""

import sys

from .cli import main

sys.exit(main())
