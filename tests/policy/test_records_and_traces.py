"""The speed mechanisms of a decided shell line give what the plain ways give: records built as
mutable twins (`types.mutable_twin`) are equal to, and as immutable as, records built by their
class; check 5's trace worked out when a decision's explanation is read is the trace the gate
built before; `programs.facts` kept for fixed words answers what it answers afresh."""

from __future__ import annotations

import copy
import pickle

import pytest

from statewright.definition.compiled import State
from statewright.lean import FrozenInstanceError
from statewright.policy import Counters, GateContext, ToolCall, gate, programs
from statewright.policy.shell import analyze, check_commands, check_env, literal_word
from statewright.policy.shell import records as R
from statewright.policy.types import Decision, finish_trace, new_decision, new_word

from .corpus import REALISTIC_STATE, attacks, legit

W = R.Word("a'b'", "ab", "ab", True)


def _same_record(made, built) -> None:
    assert type(made) is type(built)
    assert made == built and repr(made) == repr(built)
    if not isinstance(getattr(built, "updated_input", None), dict):  # (a dict is unhashable)
        assert hash(made) == hash(built)
    for f in type(built).__slots__:
        assert getattr(made, f) == getattr(built, f)
    assert pickle.loads(pickle.dumps(made)) == built
    assert copy.deepcopy(made) == built
    for f in type(built)._fields:
        with pytest.raises(FrozenInstanceError):
            setattr(made, f, None)
        with pytest.raises(FrozenInstanceError):
            delattr(made, f)


def test_twins_make_the_records_their_classes_make() -> None:
    _same_record(new_word("a'b'", "ab", "ab", True), W)
    _same_record(new_word("$x*", "", "**", False, True, True, False),
                 R.Word("$x*", "", "**", False, dynamic=True, glob=True))
    r = R.new_redirect(">", "2", W, True)
    _same_record(r, R.Redirect(">", "2", W, True))
    args = (W, literal_word("-q"))
    for argv in ((literal_word("ls"), *args), ()):
        made = R.new_command(argv, "ls ab -q", "pipeline", (("X", W),), (r,), "pipe", "t", 2,
                             1, True, "declaration", ())
        built = R.Command(argv, "ls ab -q", context="pipeline", assignments=(("X", W),),
                          redirects=(r,), stdin="pipe", stdin_text="t", parent=2, offset=1,
                          function_call=True, kind="declaration")
        _same_record(made, built)
        assert (made.name, made.name_literal, made.args) == (built.name, built.name_literal,
                                                             built.args)
    made_a = R.new_analysis("ls", (made,), (r,), (("X", W),), ("HOME",), frozenset({"f"}),
                            (W,), ("p",), True, 0, ("h",), (("a &", True),))
    built_a = R.ShellAnalysis("ls", (made,), (r,), (("X", W),), ("HOME",), frozenset({"f"}),
                              (W,), ("p",), True, 0, ("h",), (("a &", True),))
    _same_record(made_a, built_a)
    _same_record(new_decision(True, "", "", "", ("a", "b"), ("f",), {"command": "x"}, True),
                 Decision(True, explanation=("a", "b"), files=("f",),
                          updated_input={"command": "x"}))


def test_the_walk_builds_the_records_the_classes_build() -> None:
    for line in attacks()[:150] + legit()[:150]:
        a = analyze(line)
        rebuilt = R.ShellAnalysis(*[getattr(a, f) for f in R.ShellAnalysis._fields])
        _same_record(a, rebuilt)
        for c in a.commands:
            _same_record(c, R.Command(*[getattr(c, f) for f in R.Command._fields]))
        for w in a.words:
            assert type(w) is R.Word and w == R.Word(*[getattr(w, f) for f in R.Word._fields])


def test_a_decision_finishes_its_trace_when_it_is_read() -> None:
    def lines() -> list[str]:
        return ["a", "b"]

    d = new_decision(True, "", "", "", ["tool: Bash", lines, "allow"], (), None, True)
    assert d.explanation == ("tool: Bash", "a", "b", "allow")
    assert d.explanation is d.explanation  # (finished once)
    assert d == Decision(True, explanation=("tool: Bash", "a", "b", "allow"))
    assert finish_trace(["x", lambda: ["y"]]) == ("x", "y")


def _eager_trace(line: str, state: State, ctx: GateContext) -> list[str]:
    """What the gate's explanation of an allowed line held before it was finished lazily:
    check 5's trace in full, as `lines.command_problem` added it."""
    a = analyze(line)
    out = [f"allowed_commands: {t}" for t in check_commands(a, tuple(state.allowed_commands)).trace]
    if state.blocked_env:
        out += [f"blocked_env: {t}" for t in check_env(a, tuple(state.blocked_env)).trace]
    return out


def test_the_explanation_of_an_allowed_line_is_the_full_trace(tmp_path) -> None:
    (tmp_path / ".statewright").mkdir()
    ctx = GateContext(project_root=str(tmp_path), store_dir=str(tmp_path / ".statewright"))
    allowed = 0
    for line in legit() + attacks():
        d = gate(REALISTIC_STATE, Counters(), ToolCall("Bash", {"command": line}), ctx)
        if not d.allowed or "cd" in line:
            continue
        allowed += 1
        text = d.explanation
        want = _eager_trace(line, REALISTIC_STATE, ctx)
        got = [t for t in text if t.startswith(("allowed_commands:", "blocked_env:"))]
        assert got == want, line
        assert text[0] == "tool: Bash" and text[-1] == "allow"
    assert allowed > 20


def test_a_quiet_check_5_gives_the_verdict_without_the_trace() -> None:
    allowed = tuple(REALISTIC_STATE.allowed_commands or ())
    for line in legit() + attacks():
        a = analyze(line)
        full, quiet = check_commands(a, allowed), check_commands(a, allowed, explain=False)
        assert (quiet.allowed, quiet.reason, quiet.trace) == (full.allowed, full.reason, ())


def test_kept_program_facts_are_the_facts_afresh() -> None:
    lines = ["git -c core.pager=id log", "npm test -- --silent", "npm run env", "pytest -p x",
             "sort -o out.txt in", "tee a b", "git diff --output=d.txt", "python -m pytest -p y",
             "find . -exec id ;", "cp a b c", "tar -cf x.tar src"]
    for line in lines:
        c = analyze(line).commands[0]
        programs._KEPT.clear()
        first = programs.facts(c.name, c.args)
        kept = programs.facts(c.name, c.args)  # (from `_KEPT`)
        assert kept is first
        programs._KEPT.clear()
        assert programs.risks(c.name, c.args) == first[0]
        assert programs.option_outputs(c.name, c.args) == [
            (op, c.args[at] if at >= 0 else None, part) for op, at, part in first[1]]
    # a word that is not fixed text is never kept
    c = analyze('sort -o "$f" in').commands[0]
    programs._KEPT.clear()
    programs.facts(c.name, c.args)
    assert not programs._KEPT
    # nor are many or long words
    programs.facts("git", (literal_word("x" * 2000),))
    programs.facts("git", tuple(literal_word("a") for _ in range(17)))
    assert not programs._KEPT
