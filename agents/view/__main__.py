"""``python -m agents.view``: the same as ``blot-view``."""

import sys

from .cli import main

sys.exit(main())
