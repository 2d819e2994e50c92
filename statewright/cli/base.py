"""What every CLI path shares, in the stdlib only: JSON in and out, errors, colour, and the state
panel. The fast path (`cli/fast.py`, no typer/rich/pydantic) and the typer commands both print
through these functions, so `statewright status` looks the same whichever path answered it.

- `error_out(code, message, as_json)`: the one error format: `error[CODE]: message` on stderr
  (JSON `{"error": {"code", "message"}}` under `--json`);
- `parse_json_option`, `object_option`: the JSON-valued options (`--input`, `--data`, ...);
- `answer(data, as_json, render)`: a command's answer, JSON or rendered for people;
- `render_state(state, title)`: the `statewright status` panel, drawn with ANSI styles on a
  terminal (no colour when piped, or under `NO_COLOR`).
"""

from __future__ import annotations

import os
import sys

from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..lean import TYPE_CHECKING, dumps, loads

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

USAGE = "USAGE"  # the code of a usage error typer/click finds (bad option, missing argument)
HUMAN = "human"  # the actor of every CLI action (what lets it approve, reject, force)
AGENT = "agent"


def transition_actor() -> str:
    """Who fires an event from the CLI: the agent when it runs inside the agent's shell
    (Claude Code marks its shells with `CLAUDECODE=1`; statewright's hook makes a line that
    runs the CLI export `STATEWRIGHT_ACTOR=agent`, and no line may drop either), else the
    human at the terminal (DESIGN section 3: the actor is who really acted)."""
    import os

    if os.environ.get("STATEWRIGHT_ACTOR") == AGENT or os.environ.get("CLAUDECODE") == "1":
        return AGENT
    return HUMAN
#: exit statuses, one per class of outcome (README "CLI"): what was asked was done; refused
#: or failed (the run, the workflow, the store said no); the command line or a file given to
#: it is wrong (a usage error, INVALID_ARGUMENTS); a transition accepted but parked for a
#: human's approval (the run has not moved)
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_PARKED = 0, 1, 2, 3


def exit_status(code: str) -> int:
    """The exit status of an error with `code`: usage and argument errors 2, the rest 1."""
    return EXIT_USAGE if code in (USAGE, INVALID_ARGUMENTS) else EXIT_REFUSED


class ArgumentError(StatewrightError):
    """A bad argument a command finds itself: `error[INVALID_ARGUMENTS]`, exit status 2 like
    the usage errors typer finds."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_ARGUMENTS, message)


# -- terminal ------------------------------------------------------------------------------------

_SGR = {"bold": "1", "dim": "2", "italic": "3", "red": "31", "green": "32", "yellow": "33",
        "blue": "34", "magenta": "35", "cyan": "36"}


def color_enabled(stream: TextIO) -> bool:
    """Colour on a terminal unless `NO_COLOR` is set (or `TERM=dumb`); `FORCE_COLOR` forces it."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def styled(text: str, style: str, color: bool) -> str:
    codes = [_SGR[w] for w in style.split() if w in _SGR] if color and style else []
    return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes else text


def term_width(stream: TextIO | None = None) -> int:
    """`$COLUMNS`, else the terminal's width, else 80 (as when the output is piped)."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    try:
        return os.get_terminal_size((stream or sys.stdout).fileno()).columns or 80
    except (OSError, AttributeError, ValueError):
        return 80


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def table(columns: list[tuple[str, int | None]], rows: list[list[str]]) -> None:
    """Print a borderless table in the terminal's width. A column with a cap keeps its cells
    whole up to that many characters; the columns with None give way when the line is too
    long (their cells cut with an ellipsis, down to 5 characters)."""
    gap = "  "
    widths = [max([len(name)] + [len(r[i]) for r in rows]) for i, (name, _) in enumerate(columns)]
    widths = [min(w, cap) if cap else w for w, (_, cap) in zip(widths, columns, strict=True)]
    excess = sum(widths) + len(gap) * (len(widths) - 1) - term_width()
    flexible = [i for i, (_, cap) in enumerate(columns) if cap is None]
    while excess > 0 and flexible:
        i = max(flexible, key=lambda j: widths[j])
        if widths[i] <= 5:
            break
        widths[i] -= 1
        excess -= 1
    color = color_enabled(sys.stdout)
    head = gap.join(cut(name, w).ljust(w) for (name, _), w in zip(columns, widths, strict=True))
    out = [styled(head.rstrip(), "bold", color), "─" * min(len(head.rstrip()), term_width())]
    for r in rows:
        out.append(gap.join(cut(c, w).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    sys.stdout.write("\n".join(out) + "\n")


# -- errors and JSON -----------------------------------------------------------------------------

def error_out(code: str, message: str, as_json: bool = False,
              extra: dict[str, Any] | None = None) -> None:
    """Print one error the CLI's way: a line `error[CODE]: message`, or JSON under --json."""
    if as_json:
        body: dict[str, Any] = {"error": {"code": code, "message": message}}
        if extra:
            body.update(extra)
        sys.stderr.write(dumps(body, indent=2, default=str) + "\n")
        return
    one_line = " ".join(message.split("\n"))
    err = sys.stderr
    sys.stderr.write(f"{styled('error', 'bold red', color_enabled(err))}[{code}]: {one_line}\n")


def parse_json_option(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return loads(value)
    except RecursionError:
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError
        msg, col = getattr(exc, "msg", str(exc)), getattr(exc, "colno", "?")
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is not valid JSON: {msg} "
                               f"(at column {col})") from None


def object_option(value: str | None, what: str) -> dict[str, Any] | None:
    """A JSON-object option (`--input`, `--data`, `--context`), or None when not given."""
    parsed = parse_json_option(value, what)
    if parsed is not None and not isinstance(parsed, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{what} must be a JSON object, like '{{\"key\": 1}}'")
    return parsed


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(data, indent=2, default=str) + "\n")


def answer(data: Any, as_json: bool, render: Callable[[], None]) -> None:
    """Print a command's answer: `data` as JSON with `--json`, else its rendering for people."""
    if as_json:
        print_json(data)
    else:
        render()


# -- the state panel -----------------------------------------------------------------------------

Cell = tuple[str, str]  # one character and its style


def _cells(text: str) -> int:
    """Terminal cells of a text (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    from unicodedata import east_asian_width

    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


def _wrap(line: list[Cell], width: int) -> list[list[Cell]]:
    """A styled line cut at spaces to `width` cells; continuation lines are indented under the
    value (after the row's label, or after a transition's mark)."""
    text = "".join(c for c, _ in line)
    if _cells(text) <= width:
        return [line]
    lead = len(text) - len(text.lstrip(" "))
    gap = text.find("  ", lead)
    indent = gap + len(text[gap:]) - len(text[gap:].lstrip(" ")) if 0 < gap <= 20 else lead + 2
    indent = min(indent, width // 2)
    out: list[list[Cell]] = []
    cur = line
    while _cells("".join(c for c, _ in cur)) > width:
        cut = max((i for i in range(indent + 1, width + 1) if i < len(cur) and cur[i][0] == " "),
                  default=width)
        out.append(cur[:cut])
        rest = cur[cut:]
        while rest and rest[0][0] == " ":
            rest = rest[1:]
        cur = [(" ", "")] * indent + rest
    out.append(cur)
    return out


def render_panel(segments: list[tuple[str, str]], title: str, stream: TextIO | None = None) -> None:
    """`(text, style)` segments drawn in a rounded box with `title`, at most as wide as the
    terminal (long lines wrap), with ANSI styles on a terminal."""
    stream = stream or sys.stdout
    color = color_enabled(stream)
    lines: list[list[Cell]] = [[]]
    for text, style in segments:
        for i, part in enumerate(text.split("\n")):
            if i:
                lines.append([])
            lines[-1].extend((c, style) for c in part)
    while lines and not lines[-1]:
        lines.pop()
    inner = max(20, term_width(stream) - 4)
    rows = [piece for ln in lines for piece in _wrap(ln, inner)]
    width = max([_cells("".join(c for c, _ in r)) for r in rows] + [_cells(title) + 4])
    width = min(width, inner)
    head = f" {title} " if title else ""
    left = (width + 2 - _cells(head)) // 2
    tl, tr, bl, br, h, v = "╭╮╰╯─│" if encodes(stream, "╭╮╰╯─│✓✗—") else "++++-|"
    out = [tl + h * left + styled(head, "bold", color) + h * (width + 2 - left - _cells(head))
           + tr]
    for r in rows:
        body = _styled_cells(r, color)
        pad = width - _cells("".join(c for c, _ in r))
        out.append(f"{v} " + body + " " * max(pad, 0) + f" {v}")
    out.append(bl + h * (width + 2) + br)
    text = "\n".join(out) + "\n"
    if h == "-":  # a stream that cannot write the box cannot write the marks either
        text = text.translate(_ASCII_MARKS)
    stream.write(text)


_ASCII_MARKS = str.maketrans({"✓": "+", "✗": "x", "—": "-", "→": ">"})


def encodes(stream: TextIO, text: str) -> bool:
    """Whether `stream` can write `text` (`PYTHONIOENCODING=ascii`, a C locale)."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def tolerant_streams() -> None:
    """stdout and stderr write what their encoding cannot as escapes (`\\u2713`) instead of
    failing: an answer with a workflow's own text in it is never an error for the terminal's
    sake."""
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if enc not in ("utf8", "utf8sig"):
            try:
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                pass


def _styled_cells(row: list[Cell], color: bool) -> str:
    if not color:
        return "".join(c for c, _ in row)
    parts: list[str] = []
    run, style = "", None
    for c, s in row:
        if s != style and run:
            parts.append(styled(run, style or "", color))
            run = ""
        run, style = run + c, s
    if run:
        parts.append(styled(run, style or "", color))
    return "".join(parts)


def render_state(state: dict[str, Any], title: str) -> None:
    """The panel of `statewright status` (also printed after state-changing commands)."""
    from ..runtime.state_text import panel
    from ..visible import visible

    render_panel([(visible(text), style) for text, style in panel(state)], visible(title))
