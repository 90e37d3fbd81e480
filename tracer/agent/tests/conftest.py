"""Makes the agent's modules (tracer/agent/*.py) importable by the unit tests.

Run: cd /work/main && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -p no:cacheprovider tracer/agent/tests -q

Set FBKIT_TEST_ACCEL to a compiled _fbkit_accel shared object (fb-graph trace caches one
under ~/.cache/fbkit/accel/) to run the recorder tests against the C accelerator as well."""

import os
import sys

AGENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if AGENT_DIR not in sys.path:
    sys.path.insert(0, AGENT_DIR)
