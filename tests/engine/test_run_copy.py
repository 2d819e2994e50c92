"""`Run.with_` spells out every field (it is on every tool call's path): each one is copied, each
one can be changed, and the copy is an immutable `Run` equal to what `Record.replace` builds."""

from __future__ import annotations

import pytest

from statewright.engine.run import _FIELDS, Run
from statewright.lean import FrozenInstanceError


def _run() -> Run:
    return Run("run_0123456789ab", "wf", "s", "a", context={"k": [1]}, iterations=2,
               files_edited=("a.py",), interrupt_queue=(("i", "x.py"),), created_at=1.5)


@pytest.mark.parametrize("field", _FIELDS)
def test_with_changes_exactly_the_field_named(field: str) -> None:
    run = _run()
    value = object()
    copy = run.with_(**{field: value})
    assert type(copy) is Run
    assert getattr(copy, field) is value
    assert [f for f in _FIELDS if getattr(copy, f) is not getattr(run, f)] == [field]


def test_a_copy_is_equal_immutable_and_apart() -> None:
    run = _run()
    copy = run.with_(iterations=3, denied=1)
    assert copy == run.replace(iterations=3, denied=1)
    assert run.iterations == 2 and run.with_() == run and run.with_() is not run
    with pytest.raises(FrozenInstanceError):
        copy.iterations = 4  # type: ignore[misc]
    assert run.with_(context=None).context == {}  # as Run(context=None)
    with pytest.raises(TypeError, match="no field"):
        run.with_(nope=1)
