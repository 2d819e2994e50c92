"""What a parent run does when a child it waits on (an invoked workflow, a fork branch) ends.

Whose rules apply while a run waits and which children stop with it are methods of the record
(`Run.followed_child`, `Run.waited_children`): the hook reads them on every call.
"""

from __future__ import annotations

from ..definition.compiled import CompiledWorkflow
from .fork import branch_of, settle_branch
from .invoke import settle_invoke
from .outcome import Outcome
from .run import FINISHED, Run


def child_settled(compiled: CompiledWorkflow, parent: Run, child: Run, now: float) -> Outcome:
    """React to a child run (fork branch or invoked workflow) that completed or failed.

    Not accepted (and no events) when there is nothing to do: the parent no longer waits on
    this child, or the child has not ended."""
    if child.status not in FINISHED or parent.status in FINISHED:
        return Outcome(False, parent)
    name = branch_of(parent, child)
    if name is not None:
        return settle_branch(compiled, parent, name, child, now)
    if parent.child_run == child.run_id and parent.invoke is not None:
        return settle_invoke(compiled, parent, child, now)
    return Outcome(False, parent)
