"""The CLI's fast path: the commands people and agents run most, answered without typer, rich
or pydantic (DESIGN section 8: `statewright --help` and `status` within 5x a bare
`python -c pass`; the agent runs `statewright transition` through its shell on every move).

`fast(argv)` answers `--help`/`-h`/no arguments, `--version`, `status` / `transition`, `list` and
`validate` when every file's verdict is remembered (`cli/workflow_text.py`), and
`serve` on stdio when not run from a terminal (the MCP client that starts it every session waits
for its first answer: typer's import would be ~130 ms of that), when every argument is one it
knows, in the forms typer accepts (`--opt value`, `--opt=value`, options
before or after the argument). Anything else, a usage error included, returns None and the typer
app (`cli/full.py`) handles it, so typer stays the reference for what a command accepts and how
a mistake is worded. The commands' bodies (`status`, `transition`) are the ones the typer
commands call too (`cli/runs.py`); tests/cli/test_entry.py runs each form both ways.
"""

from __future__ import annotations

import os
import sys

from ..lean import TYPE_CHECKING
from .base import EXIT_PARKED, answer, object_option, render_state, transition_actor

if TYPE_CHECKING:
    from typing import Any

    from ..runtime import Runtime

_SESSION = {"--session": "session", "-s": "session"}
_PROJECT = {"--project": "project", "-p": "project"}
_FLAGS = {"--json": "as_json"}
_STRICT = {"--strict": "strict"}
#: a positional argument that takes every remaining one (a list, at least one)
_MANY = "*paths"
# command -> (its positional arguments, its options that take a value, its other flags)
_SPECS: dict[str, tuple[tuple[str, ...], dict[str, str], dict[str, str]]] = {
    "status": ((), {**_SESSION, **_PROJECT}, {}),
    "transition": (("event",), {**_SESSION, **_PROJECT, "--data": "data", "-d": "data",
                                "--expected-version": "expected_version"}, {}),
    "serve": ((), {**_SESSION, **_PROJECT, "--connect-timeout": "connect_timeout"}, {}),
    "list": ((), dict(_PROJECT), {}),
    "validate": ((_MANY,), dict(_PROJECT), _STRICT),
}


def _parse(args: list[str], positional: tuple[str, ...], options: dict[str, str],
           flags: dict[str, str]) -> dict[str, Any] | None:
    """The arguments as keyword arguments, or None for anything the fast path leaves to typer
    (unknown or repeated option, missing value, a value that looks like an option, `--`)."""
    out: dict[str, Any] = {"as_json": False}
    names = list(positional)
    many: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and a != "-":
            opt, eq, value = a.partition("=")
            if opt in _FLAGS and not eq:
                out[_FLAGS[opt]] = True
            elif opt in flags and not eq:
                out[flags[opt]] = True
            elif opt in options and options[opt] not in out and (opt.startswith("--") or not eq):
                if not eq:
                    i += 1
                    if i >= len(args) or args[i].startswith("-"):
                        return None
                    value = args[i]
                out[options[opt]] = value
            else:
                return None
        elif names == [_MANY]:
            many.append(a)
        elif names:
            out[names.pop(0)] = a
        else:
            return None
        i += 1
    if names == [_MANY] and many:
        out[_MANY[1:]] = many
        names = []
    if names:
        return None
    if "connect_timeout" in out:
        try:
            out["connect_timeout"] = float(out["connect_timeout"])
        except ValueError:
            return None  # typer words the error
        if not out["connect_timeout"] >= 1.0:
            return None
    if "expected_version" in out:
        v = out["expected_version"]
        if not (v.isascii() and v.lstrip("-").isdigit()):
            return None  # typer words the error
        out["expected_version"] = int(v)
    return out


def fast(argv: list[str]) -> int | None:
    """Answer `argv` without typer, or None to hand it to the typer app."""
    if os.environ.get("_STATEWRIGHT_COMPLETE"):  # shell completion: typer's business
        return None
    if not argv or argv in (["--help"], ["-h"]):
        from .base import term_width
        from .commands import top_help

        sys.stdout.write(top_help(term_width()))
        return 0
    if argv == ["--version"]:
        from .. import __version__

        sys.stdout.write(f"statewright {__version__}\n")
        return 0
    spec = _SPECS.get(argv[0])
    parsed = _parse(argv[1:], *spec) if spec else None
    if parsed is None:
        return None
    if argv[0] == "status":
        status(**parsed)
    elif argv[0] == "transition":
        return transition(**parsed)
    elif argv[0] in ("list", "validate"):
        from . import workflow_text

        # from remembered verdicts alone; None (nothing printed) when a file has none
        if argv[0] == "list":
            return workflow_text.list_workflows_cmd(**parsed, recalled_only=True)
        return workflow_text.validate(**parsed, recalled_only=True)
    else:
        if parsed.pop("as_json") or sys.stdin is None or sys.stdin.isatty():
            return None  # (typer: `--json` is no option of serve; a terminal gets told what it is)
        serve_stdio(**parsed)
    return 0


def _runtime(project: str | None) -> Runtime:
    from ..runtime import Runtime

    return Runtime.open(project)


# -- the commands' bodies (the typer commands in cli/runs.py call these too) -------------------

def status(as_json: bool = False, session: str | None = None,
           project: str | None = None) -> None:
    rt = _runtime(project)
    state = rt.get_state(session)
    answer(state, as_json, lambda: render_state(state, "statewright status"))
    url = None if as_json else rt.page_url()  # while `statewright ui` runs
    if url:
        sys.stdout.write(f"web page: {url}/runs/{state['run_id']}\n")


def transition(event: str, data: str | None = None, expected_version: int | None = None,
               as_json: bool = False, session: str | None = None,
               project: str | None = None) -> int:
    payload = object_option(data, "--data")
    rt = _runtime(project)
    progress = CheckProgressBar()
    try:
        state = rt.transition(session, event, payload, expected_version=expected_version,
                              actor=transition_actor(), progress=progress)
    finally:
        progress.close()
    pending = state.get("pending_approval")
    if not pending:
        answer(state, as_json, lambda: render_state(state, f"{event} -> {state['state']}"))
        return 0
    # accepted but not taken: it waits for a human (further events are refused until then)
    aid = pending.get("approval_id")
    shown = {k: v for k, v in state.items() if k != "advice"}  # (said below, in one line)
    answer(state, as_json, lambda: render_state(
        shown, f"{event} waits for approval (still in {state['state']})"))
    if not as_json:
        url = rt.page_url()
        sys.stdout.write(
            f"{event} -> {pending.get('target')} is parked until a human decides approval "
            f"{aid}: `statewright approve {aid}` or `statewright reject {aid} --reason TEXT`"
            + (f" (or on the web page {url}/runs/{state['run_id']})" if url else "") + ".\n")
    return EXIT_PARKED  # the run has not moved: `transition DONE && next-step` stops here


class CheckProgressBar:
    """The progress of the checks a transition runs, on stderr: a bar (elapsed against the
    check's timeout) with the last line of its output, redrawn in place on a terminal; a line
    every few seconds elsewhere (a log, an agent's shell)."""

    def __init__(self, stream: Any = None, width: int = 24) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False
        self.shown = False
        self.last_plain = -10.0

    def __call__(self, check: str, elapsed: float, total: float, line: str) -> None:
        frac = min(1.0, elapsed / total) if total > 0 else 0.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        text = f"check {check} [{bar}] {elapsed:5.1f}s / {total:g}s  {line[:60]}"
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self.shown = True
        elif elapsed - self.last_plain >= 5.0:
            self.stream.write(text + "\n")
            self.last_plain = elapsed
        else:
            return
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def serve_stdio(session: str | None = None, project: str | None = None,
                connect_timeout: float = 30.0) -> None:
    """`statewright serve` on stdio (the typer command in cli/serve.py calls this too)."""
    from ..proxy import serve_stdio as run

    try:
        run(project=project, session=session, connect_timeout=connect_timeout)
    except KeyboardInterrupt:
        pass
