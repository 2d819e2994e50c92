"""`policy.programs`: every entry's examples, run through the real shell analysis.

Each example is a command line whose first command is the program; what the example states
(the files written, other code run, the environment printed, the name being the program's)
must be found, and what it does not state must not be (execpolicy-style must-match /
must-not-match, DESIGN section 9)."""

from __future__ import annotations

import re

import pytest

from statewright.policy import programs
from statewright.policy.programs import PROGRAMS, Program
from statewright.policy.shell import analyze, check_env

_CASES = [pytest.param(p, ex, id=f"{(p.names or (p.summary,))[0]}: {ex.line}")
          for p in PROGRAMS for ex in p.examples]


def _named(p: Program, name: str) -> bool:
    if p.names:
        return name in p.names
    if p.name_pattern is None:
        return True  # what applies to any program
    base = name.rstrip("/").rsplit("/", 1)[-1].lower()
    return re.fullmatch(p.name_pattern, base) is not None


@pytest.mark.parametrize(("program", "example"), _CASES)
def test_example(program: Program, example: programs.Example) -> None:
    a = analyze(example.line)
    first = example.line.split(None, 1)[0]
    c = next(c for c in a.commands if c.argv[0].text == first)  # (not one in a substitution)
    vals = [w.value for w in c.args]
    assert _named(program, c.name) == example.named
    if program is programs.python.PYTHON:
        assert programs.is_python(c.name) == example.named
    # files named by options or arguments are recorded as output redirects
    assert tuple(r.target.value for r in a.redirects if r.target is not None) == example.writes
    assert all(r.output for r in a.redirects)
    # other code run, credentials printed: risks on the command (check 5 refuses a risk no
    # allowed entry spells out; check 6 refuses printed credentials)
    kinds = [r.kind for r in c.risks]
    assert (programs.CODE in kinds) == example.runs_code, c.risks
    assert (programs.SECRETS in kinds) == example.secrets, c.risks
    assert not a.problems, a.problems
    if all(w.literal for w in c.args):
        assert (programs.runs_code(c.name, vals) is not None) == example.runs_code
    if example.secrets:
        assert not check_env(a, ("SOME_SECRET",)).allowed
    # an environment dump: check 6 refuses the line whatever is blocked
    assert (programs.env_dump(c.name, c.args) is not None) == example.dumps_env
    if program.dumps_env is not None:
        assert check_env(a, ("SOME_SECRET",)).allowed == (not example.dumps_env)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: (p.names or (p.summary,))[0])
def test_every_entry_has_examples_that_match_and_that_do_not(program: Program) -> None:
    def shows(ex: programs.Example) -> bool:
        return bool(ex.writes or ex.runs_code or ex.dumps_env or ex.secrets) or (
            program.name_pattern is not None and ex.named)

    assert any(shows(ex) for ex in program.examples), "no example that must match"
    if program.names != ("printenv",):  # (whatever its arguments, printenv prints)
        assert any(not shows(ex) for ex in program.examples), "no example that must not match"


def test_a_program_has_one_entry() -> None:
    names = [n for p in PROGRAMS for n in p.names]
    assert len(names) == len(set(names))
