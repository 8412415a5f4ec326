"""What the tests need to know about this machine's sandboxes: whether bubblewrap can start a bot
here, a mark for the tests that need it, and the sandboxes to parametrize a test with."""

from __future__ import annotations

import pytest

from referee.runtime.sandbox import bwrap_support

BWRAP_OK, BWRAP_WHY = bwrap_support()
#: a test that needs bubblewrap: skipped, saying why, where bubblewrap cannot run
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason=f"bubblewrap cannot run here: {BWRAP_WHY}")
#: the sandboxes this machine can run, for ``parametrize("kind", SANDBOXES)``
SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), "basic"]
