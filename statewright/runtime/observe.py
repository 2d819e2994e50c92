"""What a call showed (DESIGN section 3, `_observed`): the run with a result accounted (bytes,
evidence) and the history row of a command's exit status, for `enforcement.record`; and the
history rows kept as JSON once (`_ROWS`), which deciding writes too."""

from __future__ import annotations

from ..engine.run import SYSTEM
from ..lean import TYPE_CHECKING
from ..store.tables import EventRow, to_json

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import State
    from ..engine.run import Run
    from ..policy.types import ToolResult

#: the history rows of allowed calls that edit nothing, and of commands' exit statuses, as
#: JSON once (`_allowed_row`, `_observed`): a process deciding call after call writes the same
#: few over and over
_ROWS: dict[tuple[Any, ...], EventRow] = {}


def _keep(key: tuple[Any, ...], actor: str, kind: str, data: dict[str, Any]) -> EventRow:
    if len(_ROWS) >= 512:
        _ROWS.clear()
    row = _ROWS[key] = EventRow((actor, kind, to_json(data)))
    return row


def observed(run: Run, state: State, result: ToolResult, line: str | None, nbytes: int,
              files: list[str], now: float, root: str = "") -> tuple[Run, tuple[Any, ...]]:
    """The run with this result accounted (bytes, evidence), and the history row that records a
    command's exit status (when the line credits an `allowed_commands` entry)."""
    evidence = _evidence()
    entries = _credited(evidence, line, state.allowed_commands) if (
        line is not None and state.allowed_commands) else ()
    if entries and line is not None and not result.is_error and result.exit_code == 0:
        partial, config = _not_evidence(evidence, line)
        if partial is not None or (config and _config_changed(run, config, files, root)):
            entries = ()  # a pass of a part of the suite, or under changed config: none
    ctx = evidence.observe(run.context, tool=result.tool_name, is_error=result.is_error,
                  exit_code=result.exit_code, entries=entries, files=files, at=now)
    new = run.with_(bytes_read=run.bytes_read + nbytes, context=ctx)
    if entries and (result.is_error or result.exit_code is not None):
        tool, code = result.tool_name, result.exit_code
        ok = not result.is_error and code == 0
        if type(tool) is str and (code is None or type(code) is int):  # (True == 1: no key)
            key = ("observed", tool, entries, ok, code)
            row = _ROWS.get(key) or _keep(key, SYSTEM, "observed", {
                "tool": tool, "commands": list(entries), "ok": ok, "exit_code": code})
            return new, (row,)
        return new, ({"kind": "observed", "actor": SYSTEM, "data": {
            "tool": tool, "commands": list(entries), "ok": ok, "exit_code": code}},)
    return new, ()


_EVIDENCE: list[Any] = []  # policy.evidence, once imported (recording loads it, deciding not)
_CREDITED: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}  # see `_credited`
_NOT_EVIDENCE: dict[str, tuple[str | None, tuple[str, ...]]] = {}  # see `_not_evidence`


def _config_changed(run: Run, config: tuple[str, ...], files: list[str], root: str) -> bool:
    """`watch.config_changed` (the module loads with the first test runner's pass)."""
    if not _WATCH:
        from . import watch

        _WATCH.append(watch)
    return bool(_WATCH[0].config_changed(run, config, files, root))


_WATCH: list[Any] = []


def _evidence() -> Any:
    if not _EVIDENCE:
        from ..policy import evidence

        _EVIDENCE.append(evidence)
    return _EVIDENCE[0]


def _credited(evidence: Any, line: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """`evidence.credited_entries`, remembered: a pure function of the line and the entries,
    which an agent repeats (the same test command, run after run)."""
    return _remember(_CREDITED, (line, allowed), line,
                     lambda: evidence.credited_entries(line, allowed))


def _not_evidence(evidence: Any, line: str) -> tuple[str | None, tuple[str, ...]]:
    """`evidence.not_evidence_of_a_pass`, remembered: a pure function of the line (why a pass
    of it is no run of the whole suite; the configuration that decides what it runs)."""
    return _remember(_NOT_EVIDENCE, line, line, lambda: evidence.not_evidence_of_a_pass(line))


#: the longest line (the launcher's text around it included) whose reading is remembered: a
#: process deciding call after call keeps at most 512 of them per memo
_MEMO_MAX_LINE = 1 << 16


def _remember(kept: dict[Any, Any], key: Any, line: str, compute: Any) -> Any:
    hit = kept.get(key)
    if hit is None:
        hit = compute()
        if len(line) <= _MEMO_MAX_LINE:
            if len(kept) >= 512:
                kept.clear()
            kept[key] = hit
    return hit
