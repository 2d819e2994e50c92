"""What programs DO, as data (DESIGN section 4): the options and subcommands that make an
allowed program run other code or write files named in its arguments, and the commands that
print the environment. An allowed prefix allows a program, not everything it can be told to do.

One entry (`spec.Program`) per program, each with examples that must and must not match
(`tests/policy/test_programs.py` checks them all); modules group them by what they know:
`git`, `python` (which names are Python), `environment` (environment dumps), `writers` (files
named in arguments). To teach statewright about a program, add its entry to a module and to
`PROGRAMS` below.

The questions the shell analysis asks, by program name:
- `option_outputs(name, args)`: the files its options or arguments say it writes;
- `runs_code(name, vals)`: why its options make it run other code (None: they do not);
- `env_dump(name, vals)`: why it prints environment variables (None: it does not);
- `is_python(name)`: whether it is a Python interpreter.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from .environment import ENVIRONMENT_DUMPS
from .git import GIT
from .python import PYTHON, is_python
from .spec import Example, Program
from .writers import ANY_PROGRAM, GLUED_VALUE_ONLY, TYPED_VALUE, WRITERS

if TYPE_CHECKING:  # pragma: no cover
    from ..shell.records import Word

__all__ = ["PROGRAMS", "Example", "Program", "env_dump", "is_python", "option_outputs",
           "runs_code"]

#: every entry (`ANY_PROGRAM` holds what applies to any program whatever its name)
PROGRAMS: tuple[Program, ...] = (ANY_PROGRAM, GIT, PYTHON, *ENVIRONMENT_DUMPS, *WRITERS)
_BY_NAME = {name: p for p in PROGRAMS for name in p.names}


def runs_code(name: str, vals: list[str]) -> str | None:
    """Why `name VALS` runs code other than the program's own (None: not as far as known)."""
    entry = _BY_NAME.get(name)
    if entry is None or entry.runs_code is None:
        return None
    return entry.runs_code(name, vals)


def env_dump(name: str, vals: list[str]) -> str | None:
    """Why `name VALS` prints environment variables (None: it does not)."""
    entry = _BY_NAME.get(name)
    if entry is None or entry.dumps_env is None:
        return None
    return entry.dumps_env(name, vals)


def option_outputs(name: str, args: tuple[Word, ...]) -> list[tuple[str, Word, str | None]]:
    """The files `name ARGS` writes because an option or argument says so: (the option, the
    word naming the file, the file's part of that word, or None when it is the whole word)."""
    out: list[tuple[str, Word, str | None]] = []
    entry = _BY_NAME.get(name)
    short = entry.output_options if entry is not None else frozenset()
    long = ANY_PROGRAM.long_output_options
    if entry is not None and entry.long_output_options:
        long = long | entry.long_output_options
    operand = entry.output_operand if entry is not None else None
    operands = entry is not None and entry.writes_operands
    i, n = 0, len(args)
    past_options = False
    while i < n:
        w = args[i]
        v = w.value
        if v == "--":
            past_options = True
        elif operands:
            if past_options or not v.startswith("-") or not w.literal:
                out.append((name, w, None))
        elif operand is not None and v.startswith(operand):
            out.append((f"{name} {operand}", w, v[len(operand):]))
        elif not past_options and v.startswith("--"):
            opt, eq, val = v.partition("=")
            if opt in long:
                if opt in TYPED_VALUE:
                    val = val.split(":", 1)[1] if ":" in val else ""
                if eq and val:
                    out.append((opt, w, val))
                elif not eq and opt not in GLUED_VALUE_ONLY and i + 1 < n:
                    out.append((opt, args[i + 1], None))
                    i += 1
        elif not past_options and v[:2] in short and v.startswith("-"):
            if len(v) > 2:
                out.append((v[:2], w, v[2:]))
            elif i + 1 < n:
                out.append((v, args[i + 1], None))
                i += 1
        i += 1
    return out
