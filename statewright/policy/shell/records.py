"""The records a shell analysis is made of: `Redirect`, `Command`, `ShellAnalysis`, and the
`Verdict` of a check (and `Word`, kept in `policy.types`, below `policy.programs` that reads words
too). Immutable `statewright._record` records (not dataclasses: see its
docstring)."""

from __future__ import annotations

from ...lean import TYPE_CHECKING, Record, field_setters
from ..types import Word as Word  # (the shell's modules name it from here)
from ..types import mutable_twin, new_record, program_name

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..programs.spec import Risk

_EMPTY: frozenset = frozenset()


class Redirect(Record):
    """One redirection, or a file an option or argument says the command writes."""

    __slots__ = __match_args__ = _fields = ("op", "fd", "target", "output")
    op: str
    fd: str | None
    target: Word | None
    output: bool

    def __init__(self, op: str, fd: str | None, target: Word | None, output: bool) -> None:
        _r_op(self, op)  # '>', '>>', '<', '&>', '>&', '<<', '<<<', ...
        _r_fd(self, fd)
        _r_target(self, target)  # None for here-docs
        _r_output(self, output)  # writes (or truncates) its target


_r_op, _r_fd, _r_target, _r_output = field_setters(Redirect)
_RedirectTwin = mutable_twin(Redirect)


def new_redirect(op: str, fd: str | None, target: Word | None, output: bool) -> Redirect:
    """`Redirect(op, fd, target, output)`, built as a twin (`types.mutable_twin`)."""
    r: Any = new_record(_RedirectTwin)
    r.op = op
    r.fd = fd
    r.target = target
    r.output = output
    r.__class__ = Redirect
    return r


class Command(Record):
    """One command that would run. `argv[0]` is the command name (as a Word)."""

    __match_args__ = _fields = ("argv", "text", "context", "assignments", "redirects", "stdin",
                                "stdin_text", "parent", "offset", "function_call", "kind",
                                "risks")
    # besides the fields: `name`, `name_literal`, `program` and `args`, read again and again
    # by every check, derived from `argv` once
    __slots__ = (*_fields, "args", "name", "name_literal", "program")
    argv: tuple[Word, ...]
    text: str
    context: str
    assignments: tuple[tuple[str, Word], ...]
    redirects: tuple[Redirect, ...]
    stdin: str
    stdin_text: str | None
    parent: int | None
    offset: int
    function_call: bool
    kind: str
    risks: tuple[Risk, ...]
    name: str  # the command name: argv[0]'s value ("" when there is no argv)
    name_literal: bool  # argv[0] is fixed text
    # the program it runs, as rules know programs: `name`, or a path's last component
    # (`/usr/bin/find`: `find`; `types.program_name`); an allowed entry still matches `name`
    program: str
    args: tuple[Word, ...]  # argv[1:]

    def __init__(self, argv: tuple[Word, ...], text: str, context: str = "top",
                 assignments: tuple[tuple[str, Word], ...] = (),
                 redirects: tuple[Redirect, ...] = (), stdin: str = "inherit",
                 stdin_text: str | None = None, parent: int | None = None, offset: int = 0,
                 function_call: bool = False, kind: str = "simple",
                 risks: tuple[Risk, ...] = ()) -> None:
        _c_argv(self, argv)
        _c_text(self, text)
        # where it sits: top, $(...), pipeline, function f, sh -c, env, ...
        _c_context(self, context)
        _c_assignments(self, assignments)  # `VAR=value cmd`
        _c_redirects(self, redirects)
        _c_stdin(self, stdin)  # inherit | pipe | heredoc | herestring | file
        _c_stdin_text(self, stdin_text)  # literal here-doc / here-string text fed to it
        _c_parent(self, parent)  # index of the wrapper command this one was found inside
        _c_offset(self, offset)  # position in the parent's argv where this command starts
        _c_function_call(self, function_call)  # calls a function defined in the same line
        _c_kind(self, kind)  # simple | declaration | unset
        # what its options and subcommands tell it to do beyond its name (`policy.programs`)
        _c_risks(self, risks)
        name = argv[0].value if argv else ""
        _c_name(self, name)
        _c_name_literal(self, bool(argv) and argv[0].literal)
        _c_program(self, name if "/" not in name else program_name(name))
        _c_args(self, argv[1:])

    def values(self) -> list[str]:
        return [w.value for w in self.argv]


(_c_argv, _c_text, _c_context, _c_assignments, _c_redirects, _c_stdin, _c_stdin_text, _c_parent,
 _c_offset, _c_function_call, _c_kind, _c_risks) = field_setters(Command)
_c_name, _c_name_literal, _c_args = (Command.name.__set__, Command.name_literal.__set__,  # type: ignore[attr-defined]
                                     Command.args.__set__)  # type: ignore[attr-defined]
_c_program = Command.program.__set__  # type: ignore[attr-defined]
_CommandTwin = mutable_twin(Command)


def new_command(argv: tuple[Word, ...], text: str, context: str,
                assignments: tuple[tuple[str, Word], ...], redirects: tuple[Redirect, ...],
                stdin: str, stdin_text: str | None, parent: int | None, offset: int,
                function_call: bool, kind: str, risks: tuple[Risk, ...],
                args: tuple[Word, ...] | None = None) -> Command:
    """`Command(...)` with every field given, built as a twin (`types.mutable_twin`: half the
    cost of `Command(...)`); the walk makes one per command of a line. `args`: `argv[1:]`
    when the caller has it already."""
    c: Any = new_record(_CommandTwin)
    c.argv = argv
    c.text = text
    c.context = context
    c.assignments = assignments
    c.redirects = redirects
    c.stdin = stdin
    c.stdin_text = stdin_text
    c.parent = parent
    c.offset = offset
    c.function_call = function_call
    c.kind = kind
    c.risks = risks
    if argv:
        first = argv[0]
        c.name = name = first.value
        c.name_literal = first.literal
        c.program = name if "/" not in name else program_name(name)
    else:
        c.name = c.program = ""
        c.name_literal = False
    c.args = argv[1:] if args is None else args
    c.__class__ = Command
    return c


class ShellAnalysis(Record):
    """Everything a command line would run, read and write, as far as the text tells."""

    __slots__ = __match_args__ = _fields = ("source", "commands", "redirects", "assignments",
                                            "variables", "functions", "words", "problems",
                                            "changes_dir", "status_command", "hidden_code",
                                            "job_tokens")
    source: str
    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[tuple[str, Word], ...]
    variables: tuple[str, ...]
    functions: frozenset[str]
    words: tuple[Word, ...]
    problems: tuple[str, ...]
    changes_dir: bool
    status_command: int
    hidden_code: tuple[str, ...]
    job_tokens: tuple[tuple[str, bool], ...]

    def __init__(self, source: str, commands: tuple[Command, ...] = (),
                 redirects: tuple[Redirect, ...] = (),
                 assignments: tuple[tuple[str, Word], ...] = (),
                 variables: tuple[str, ...] = (), functions: frozenset[str] = _EMPTY,
                 words: tuple[Word, ...] = (), problems: tuple[str, ...] = (),
                 changes_dir: bool = False, status_command: int = -1,
                 hidden_code: tuple[str, ...] = (),
                 job_tokens: tuple[tuple[str, bool], ...] = ()) -> None:
        _a_source(self, source)
        _a_commands(self, commands)
        _a_redirects(self, redirects)  # every redirection in the line
        # every assignment (standalone and prefix)
        _a_assignments(self, assignments)
        _a_variables(self, variables)  # every variable expanded (`!name` for indirect)
        _a_functions(self, functions)
        _a_words(self, words)  # every word seen (arguments, targets, values)
        # why the line cannot be trusted (parse errors, opaque code)
        _a_problems(self, problems)
        _a_changes_dir(self, changes_dir)  # contains cd/pushd/popd
        # index of the command whose exit status is the line's own (the last top-level
        # command, after `;` or `&&` only, not negated, backgrounded or piped onward); -1 when
        # the line's status may come from elsewhere (`||`, `;` after it, `|`, `!`, `&`, ...)
        _a_status_command(self, status_command)
        # code bash would run from text it evaluates as arithmetic or a subscript (`arith`);
        # also among `problems`
        _a_hidden_code(self, hidden_code)
        # each text holding `&` that the walk parsed (the line, code run by `sh -c`, `eval`,
        # ...), and whether its parse tree holds a `&` token (`parser.has_job_token`)
        _a_job_tokens(self, job_tokens)

    @property
    def ok(self) -> bool:
        return not self.problems


(_a_source, _a_commands, _a_redirects, _a_assignments, _a_variables, _a_functions, _a_words,
 _a_problems, _a_changes_dir, _a_status_command, _a_hidden_code,
 _a_job_tokens) = field_setters(ShellAnalysis)
_AnalysisTwin = mutable_twin(ShellAnalysis)


def new_analysis(source: str, commands: tuple[Command, ...], redirects: tuple[Redirect, ...],
                 assignments: tuple[tuple[str, Word], ...], variables: tuple[str, ...],
                 functions: frozenset[str], words: tuple[Word, ...], problems: tuple[str, ...],
                 changes_dir: bool, status_command: int, hidden_code: tuple[str, ...],
                 job_tokens: tuple[tuple[str, bool], ...]) -> ShellAnalysis:
    """`ShellAnalysis(...)` with every field given, built as a twin (`types.mutable_twin`)."""
    a: Any = new_record(_AnalysisTwin)
    a.source = source
    a.commands = commands
    a.redirects = redirects
    a.assignments = assignments
    a.variables = variables
    a.functions = functions
    a.words = words
    a.problems = problems
    a.changes_dir = changes_dir
    a.status_command = status_command
    a.hidden_code = hidden_code
    a.job_tokens = job_tokens
    a.__class__ = ShellAnalysis
    return a


class Verdict(Record):
    """What check 5 or 6 says about a line."""

    __slots__ = __match_args__ = _fields = ("allowed", "reason", "trace")
    allowed: bool
    reason: str
    trace: tuple[str, ...]

    def __init__(self, allowed: bool, reason: str = "", trace: tuple[str, ...] = ()) -> None:
        _v_allowed(self, allowed)
        _v_reason(self, reason)  # for the agent (empty when allowed)
        _v_trace(self, trace)  # one line per command / rule, for `statewright check`


_v_allowed, _v_reason, _v_trace = field_setters(Verdict)
