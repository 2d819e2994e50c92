"""`policy.programs.runs`: which test runner lines are runs of the whole suite (evidence), as
data with examples; every example is checked here, and through the shell analysis."""

from __future__ import annotations

import shlex

import pytest

from statewright.policy.evidence import credited_entries, not_evidence_of_a_pass
from statewright.policy.programs.runs import RUNNERS, config_of, not_a_full_run
from statewright.sandbox.launcher import wrap
from statewright.sandbox.profile import Profile

EXAMPLES = [(r.names[0], e) for r in RUNNERS for e in r.examples]


@pytest.mark.parametrize(("runner", "example"), EXAMPLES,
                         ids=[e.line for _, e in EXAMPLES])
def test_every_example(runner: str, example) -> None:
    why = not_a_full_run(shlex.split(example.line))
    assert (why is None) == example.evidence, (runner, example.line, why)
    if not example.evidence:
        assert why and why.startswith("`")  # names the word that makes it partial
    # the same answer through the shell analysis of the line
    partial, config = not_evidence_of_a_pass(example.line)
    assert (partial is None) == example.evidence
    assert config == config_of(shlex.split(example.line))
    # and the same for the line as the host reports it after running it under the sandbox
    assert not_evidence_of_a_pass(wrap(Profile(root="/p"), example.line)) == (partial, config)


def test_every_runner_has_both_kinds_of_examples_and_config() -> None:
    for r in RUNNERS:
        assert any(e.evidence for e in r.examples) and any(not e.evidence for e in r.examples)
        assert r.config, r.names


def test_lines_of_other_programs_are_not_judged() -> None:
    assert not_a_full_run(["git", "status", "--version"]) is None
    assert config_of(["make", "test"]) == ()
    assert not_evidence_of_a_pass("echo --version") == (None, ())


def test_crediting_still_follows_the_line_status() -> None:
    assert credited_entries("pytest -q", ("pytest",)) == ("pytest",)
    assert credited_entries("pytest -q || true", ("pytest",)) == ()
    assert credited_entries(wrap(Profile(root="/p"), "pytest -q"), ("pytest",)) == ("pytest",)
