import sys
from pathlib import Path

# tests_integrations/common.py importable as `common`
sys.path.insert(0, str(Path(__file__).resolve().parent))
