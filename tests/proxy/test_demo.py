"""`make demo` runs end to end and exits 0."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .harness import clean_env

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_demo")]


def test_demo_runs_to_completion():
    cp = subprocess.run([sys.executable, "-m", "statewright.demo"], capture_output=True, text=True,
                        env=clean_env(COLUMNS="120"), timeout=120)
    out = cp.stdout
    assert cp.returncode == 0, out[-3000:] + cp.stderr[-2000:]
    for needle in ("REFUSED", "ALLOWED", "TOOL_DENIED", "[STATEWRIGHT INTERRUPT]", "after $return: implement",
                   "PENDING_APPROVAL", "statewright approve", "completed", "history of run_",
                   "approval_requested", "interrupted", "demo finished"):
        assert needle in out, needle
    assert "notifications/tools/list_changed received: yes" in out
    assert "told the agent: yes" in out
