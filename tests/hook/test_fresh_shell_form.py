"""`launcher.fresh`: the kernel tier's wrapped line for a host that runs every line in a new
shell and refuses command substitution (Gemini CLI), run the way that host runs it, and read
back by `launcher.unwrap` (the line the host reports after running it is judged as itself)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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
    form = launcher.fresh(wrapped)
    assert "$(" not in form and "`" not in form and "<(" not in form
    assert form.startswith("export STATEWRIGHT_SESSION='gemini:s'\n")
    r = subprocess.run(["bash", "-c", form], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "SECRET": "s3cr3t"}, timeout=60)
    assert "mode=test secret=none" in r.stdout and "s3cr3t" not in r.stdout + r.stderr
    assert "its done" in r.stdout
    assert (tmp_path / "keep" / "f.txt").read_text() == "kept\n"  # read-only in the sandbox
    # anything that is not a wrapped line is left as it is
    for text in ("echo hi", "unset SECRET; echo $(date)", wrapped.replace("__sw_s", "x")):
        assert launcher.fresh(text) == text


def test_unwrap_reads_the_fresh_form_back_and_nothing_like_it() -> None:
    profile = Profile("/p q", read_only=("/p q/wf's",), hidden=("/h",), scrub=("S",),
                      setenv=(("M", "a b"),))
    from statewright.policy.evidence import credited_entries, not_evidence_of_a_pass

    for line in ("pytest -q", "pytest -k 'a b' tests", "echo ' -- /bin/bash -c x'", "a\nb"):
        for prefix in ("", "export STATEWRIGHT_SESSION='gemini:s'\n"):
            form = launcher.fresh(prefix + launcher.wrap(profile, line))
            assert launcher.unwrap(form) == prefix + line, form
    form = launcher.fresh(launcher.wrap(profile, "pytest -q -k x"))
    assert credited_entries(form, ("pytest",)) == ("pytest",)
    assert not_evidence_of_a_pass(form)[0] == "`-k` selects tests by name"
    helper = launcher.quote(probe.HELPER)
    for look_alike in (
            f"{helper} --probe -- /bin/bash -c 'pytest -q'",           # an option it never writes
            f"{helper} --root / -- /bin/bash -c 'pytest -q'; false",   # status from elsewhere
            f"{helper} --root / -- /bin/sh -c 'pytest -q'",
            f"{helper} --root  / -- /bin/bash -c 'pytest -q'",         # not quote's form
            f"{helper} --root / -- /bin/bash -c pytest' -q'",
            "/usr/bin/env --root / -- /bin/bash -c 'pytest -q'",
            f"{helper} --root -- /bin/bash -c 'pytest -q'",            # an option without value
            "pytest -q"):
        assert launcher.unwrap(look_alike) is None, look_alike
