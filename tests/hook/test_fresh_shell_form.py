"""`hosts.fresh_shell_form`: the kernel tier's wrapped line for a host that runs every line in a
new shell and refuses command substitution (Gemini CLI), run the way that host runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from statewright.hook.hosts import fresh_shell_form
from statewright.sandbox import launcher, probe
from statewright.sandbox.profile import Profile

pytestmark = pytest.mark.e2e


def test_the_line_runs_under_the_same_launcher_without_substitution(tmp_path: Path) -> None:
    if probe.tier().kind == "none":
        pytest.fail(f"this machine has no kernel tier: {probe.tier().why}")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "f.txt").write_text("kept\n")
    profile = Profile(str(tmp_path), read_only=(str(tmp_path / "keep"),), scrub=("SECRET",),
                      setenv=(("MODE", "test"),))
    line = "echo mode=$MODE secret=${SECRET:-none}; echo x > keep/f.txt; echo 'it''s' \"done\""
    wrapped = "export STATEWRIGHT_SESSION='gemini:s'\n" + launcher.wrap(profile, line)
    form = fresh_shell_form(wrapped)
    assert "$(" not in form and "`" not in form and "<(" not in form
    assert form.startswith("export STATEWRIGHT_SESSION='gemini:s'\n")
    r = subprocess.run(["bash", "-c", form], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "SECRET": "s3cr3t"}, timeout=60)
    assert "mode=test secret=none" in r.stdout and "s3cr3t" not in r.stdout + r.stderr
    assert "its done" in r.stdout
    assert (tmp_path / "keep" / "f.txt").read_text() == "kept\n"  # read-only in the sandbox
    # anything that is not a wrapped line is left as it is
    for text in ("echo hi", "unset SECRET; echo $(date)", wrapped.replace("__sw_s", "x")):
        assert fresh_shell_form(text) == text
