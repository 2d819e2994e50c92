"""The shape of one entry of `policy.programs`: a `Program` and the `Example`s that pin it down.

A `Program` says, as data, what a program does beyond what its name suggests: the options
whose value is a file it writes, whether its plain arguments are files it writes, which options
or subcommands make it run other code, when it prints the environment. Where a rule needs more
than a table (`git -c`, `declare -p`), the entry carries a small function.

Every entry carries examples: command lines with what the analysis must find in them (the files
written, whether other code runs, whether the environment is printed). An example that states
nothing must find nothing. `tests/policy/test_programs.py` runs every example through the real
shell analysis.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, Record, set_field

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    #: why these arguments make the program do it (None: they do not)
    Rule = Callable[[str, list[str]], str | None]

_NONE: frozenset[str] = frozenset()


class Example(Record):
    """A command line (its first command is the program) and what it must show."""

    __slots__ = __match_args__ = _fields = ("line", "writes", "runs_code", "dumps_env", "named")
    line: str
    writes: tuple[str, ...]
    runs_code: bool
    dumps_env: bool
    named: bool

    def __init__(self, line: str, writes: tuple[str, ...] = (), runs_code: bool = False,
                 dumps_env: bool = False, named: bool = True) -> None:
        set_field(self, "line", line)
        set_field(self, "writes", writes)  # the files its options or arguments say it writes
        set_field(self, "runs_code", runs_code)  # its options make it run other code
        set_field(self, "dumps_env", dumps_env)  # it prints environment variables
        set_field(self, "named", named)  # the command's name is this program's (`name_pattern`)


class Program(Record):
    """What statewright knows about one program (or one family sharing a command line)."""

    __slots__ = __match_args__ = _fields = (
        "names", "summary", "name_pattern", "output_options", "long_output_options",
        "writes_operands", "output_operand", "runs_code", "dumps_env", "examples")
    names: tuple[str, ...]
    summary: str
    name_pattern: str | None
    output_options: frozenset[str]
    long_output_options: frozenset[str]
    writes_operands: bool
    output_operand: str | None
    runs_code: Rule | None
    dumps_env: Rule | None
    examples: tuple[Example, ...]

    def __init__(self, names: tuple[str, ...], summary: str, *,
                 name_pattern: str | None = None, output_options: frozenset[str] = _NONE,
                 long_output_options: frozenset[str] = _NONE, writes_operands: bool = False,
                 output_operand: str | None = None, runs_code: Rule | None = None,
                 dumps_env: Rule | None = None, examples: tuple[Example, ...] = ()) -> None:
        set_field(self, "names", names)  # the names it is run by (exactly; a path is not the name)
        set_field(self, "summary", summary)
        # a regular expression for a family of names (`python3.12`), matched against the
        # lower-cased last path component
        set_field(self, "name_pattern", name_pattern)
        # short options whose value is a file it writes (`-o F`, `-oF`)
        set_field(self, "output_options", output_options)
        # long options whose value is a file or directory it writes (`--out F`, `--out=F`)
        set_field(self, "long_output_options", long_output_options)
        # every plain argument is a written file
        set_field(self, "writes_operands", writes_operands)
        # `of=` (dd): an operand naming the output
        set_field(self, "output_operand", output_operand)
        set_field(self, "runs_code", runs_code)
        set_field(self, "dumps_env", dumps_env)
        set_field(self, "examples", examples)
