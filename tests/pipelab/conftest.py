import os
import sys

import matplotlib

matplotlib.use("Agg")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # `tests.strategies` importable under plain `pytest` too
    sys.path.insert(0, ROOT)
