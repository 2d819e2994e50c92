"""The shape of one entry of `policy.programs`: a `Program`, the `Risk`s it finds in a command
line, and the `Example`s that pin it down.

A `Program` says, as data, what a program does beyond what its name suggests:
- the files it writes because an option or argument names them (`output_options`,
  `long_output_options`, `writes_operands`, `output_operand`, or a `writes` rule for the
  cases a table cannot say: `cp`'s destination, `sed`'s `w FILE`);
- the options that make it run other programs or code (`code_options`: `rg --pre`,
  `find -exec`, `tar --to-command`), and the subcommands that do (`subcommands`:
  `git submodule foreach`, `npm exec`), or that print resolved credentials (`gh auth token`);
- when it prints the environment (`dumps_env`).
Where a rule needs more than a table (`git -c`, `sed`'s script language, `declare -p`), the
entry carries a small function (`risks`, `writes`, `dumps_env`).

Every entry carries examples: command lines with what the analysis must find in them (the files
written, whether other code runs, whether secrets or the environment are printed). An example
that states nothing must find nothing. `tests/policy/test_programs.py` runs every example
through the real shell analysis.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, Record, field_setters, set_field

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    #: why these arguments make the program print the environment (None: they do not)
    Rule = Callable[[str, list[str]], str | None]
    #: the risks these argument values carry (the values of the words after the name)
    RiskRule = Callable[[list[str]], list["Risk"]]
    #: the files these argument values name for writing: (option shown, argument index, the
    #: file's part of that argument or None when it is the whole argument)
    WriteRule = Callable[[list[str]], list[tuple[str, int, str | None]]]

_NONE: frozenset[str] = frozenset()

#: marks the value of a word that is not fixed text (`"--pre=$X"` -> `--pre=` + DYNAMIC) for
#: the entries' own rules (`Program.risks`, `Program.writes`): a script or option built at run
#: time is not what it reads as
DYNAMIC = "\x00"

#: what a risk is about
CODE = "code"  # runs other programs or code
SECRETS = "secrets"  # prints resolved credentials


def getopt(vals: list[str], short_values: str, long_values: frozenset[str] | tuple[str, ...],
           short_optional: str = "") -> tuple[list[tuple[str, str | None, int]], list[int]]:
    """The options of a command line as a GNU program reads them (`getopt_long`: options
    anywhere before `--`): each (option, its value or None, the index of the word holding the
    option), and the indexes of the operands (every word after `--` among them).

    Short options cluster (`-sd@F` is `-s -d @F`; `-sfFILE`, `-sf FILE`): one of
    `short_values` takes the rest of its word or else the next word, one of `short_optional`
    only the rest of its word (`make -j4`); a long option of `long_values` takes what follows
    `=` or else the next word. For a rule that reads an option's value: every spelling of it
    reaches the rule (abbreviated long options are written out by the walk: `spelling`)."""
    out: list[tuple[str, str | None, int]] = []
    operands: list[int] = []
    i, n = 0, len(vals)
    while i < n:
        v = vals[i]
        if v == "--":
            operands += range(i + 1, n)
            break
        if v[:2] == "--":
            opt, eq, value = v.partition("=")
            if eq:
                out.append((opt, value, i))
            elif opt in long_values:
                out.append((opt, vals[i + 1] if i + 1 < n else None, i))
                i += 1
            else:
                out.append((opt, None, i))
        elif v[:1] == "-" and len(v) > 1:
            for k in range(1, len(v)):
                ch = v[k]
                if ch in short_values:
                    if k + 1 < len(v):
                        out.append(("-" + ch, v[k + 1:], i))
                    else:
                        out.append(("-" + ch, vals[i + 1] if i + 1 < n else None, i))
                        i += 1
                    break
                if ch in short_optional:
                    out.append(("-" + ch, v[k + 1:] or None, i))
                    break
                out.append(("-" + ch, None, i))
        else:
            operands.append(i)
        i += 1
    return out, operands


class Risk(Record):
    """One thing a command line tells a program to do beyond what its name allows.

    `at` is the index of the word in the argument list (0 = the first word after the name) that
    carries it; `token` is how an `allowed_commands` entry spells it out (`-exec`, `--pre`,
    `run`); an allowed entry that covers that word, or whose last token is `token` (`find
    -exec`), allows it."""

    __slots__ = __match_args__ = _fields = ("at", "kind", "token", "why")
    at: int
    kind: str
    token: str
    why: str

    def __init__(self, at: int, kind: str, token: str, why: str) -> None:
        set_field(self, "at", at)
        set_field(self, "kind", kind)  # CODE or SECRETS
        set_field(self, "token", token)
        set_field(self, "why", why)


class Example(Record):
    """A command line (its first command is the program) and what it must show."""

    __slots__ = __match_args__ = _fields = ("line", "writes", "runs_code", "dumps_env", "named",
                                            "secrets")
    line: str
    writes: tuple[str, ...]
    runs_code: bool
    dumps_env: bool
    named: bool
    secrets: bool

    def __init__(self, line: str, writes: tuple[str, ...] = (), runs_code: bool = False,
                 dumps_env: bool = False, named: bool = True, secrets: bool = False) -> None:
        # (through the slot descriptors: some 300 examples are built on every import)
        set_line, set_writes, set_runs, set_dumps, set_named, set_secrets = _EXAMPLE_SETTERS
        set_line(self, line)
        set_writes(self, writes)  # the files its options or arguments say it writes
        set_runs(self, runs_code)  # its options make it run other code
        set_dumps(self, dumps_env)  # it prints environment variables
        set_named(self, named)  # the command's name is this program's (`name_pattern`)
        set_secrets(self, secrets)  # it prints resolved credentials


_EXAMPLE_SETTERS = field_setters(Example)


class Program(Record):
    """What statewright knows about one program (or one family sharing a command line)."""

    __slots__ = __match_args__ = _fields = (
        "names", "summary", "name_pattern", "output_options", "long_output_options",
        "writes_operands", "output_operand", "code_options", "subcommands", "value_options",
        "options_first", "clusters", "risks", "writes", "dumps_env", "examples")
    names: tuple[str, ...]
    summary: str
    name_pattern: str | None
    output_options: frozenset[str]
    long_output_options: frozenset[str]
    writes_operands: bool
    output_operand: str | None
    code_options: dict[str, str]
    subcommands: tuple[tuple[str, str, str], ...]
    value_options: frozenset[str]
    options_first: bool
    clusters: bool
    risks: RiskRule | None
    writes: WriteRule | None
    dumps_env: Rule | None
    examples: tuple[Example, ...]

    def __init__(self, names: tuple[str, ...], summary: str, *,
                 name_pattern: str | None = None, output_options: frozenset[str] = _NONE,
                 long_output_options: frozenset[str] = _NONE, writes_operands: bool = False,
                 output_operand: str | None = None, code_options: dict[str, str] | None = None,
                 subcommands: tuple[tuple[str, str, str], ...] = (),
                 value_options: frozenset[str] = _NONE, options_first: bool = False,
                 clusters: bool = True, risks: RiskRule | None = None,
                 writes: WriteRule | None = None, dumps_env: Rule | None = None,
                 examples: tuple[Example, ...] = ()) -> None:
        set_field(self, "names", names)  # the names it is run by (a path's last component too)
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
        # option -> what it runs: `--pre` matches `--pre CMD` and `--pre=CMD`; a short option
        # `-x` matches `-x`, `-xVALUE` and a cluster `-Hx`; a word `-exec` (find) matches itself
        set_field(self, "code_options", code_options or {})
        # (words, kind, why): the subcommand `words` (space-separated; a word starting with `-`
        # may stand anywhere after them) runs code (CODE) or prints credentials (SECRETS)
        set_field(self, "subcommands", subcommands)
        # options whose next word is their value (not an option, not a subcommand)
        set_field(self, "value_options", value_options)
        # its options stop at the first operand (`node app.js -e x`: `-e` is the script's)
        set_field(self, "options_first", options_first)
        # its short options cluster, getopt's way (`-sSo F`); false where a word with one dash
        # is one option (`go build -toolexec`, `gcc -fno-x`)
        set_field(self, "clusters", clusters)
        set_field(self, "risks", risks)  # what a table cannot say
        set_field(self, "writes", writes)  # files written that a table cannot say
        set_field(self, "dumps_env", dumps_env)
        set_field(self, "examples", examples)
