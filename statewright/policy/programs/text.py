"""Searchers, finders, stream editors and pagers: `rg --pre`, `fd -x`, `find -exec`/`-delete`/
`-fprint`, `sed` and `awk` scripts (see `scripts`), pager commands and log files."""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from ..types import program_name
from .scripts import awk_program, sed_script
from .spec import CODE, DYNAMIC, Example, Program, Risk

if TYPE_CHECKING:  # pragma: no cover
    from ..types import Word

RG = Program(
    ("rg",), "ripgrep",
    code_options={"--pre": "runs a preprocessor command on every file it searches",
                  "--hostname-bin": "runs a program to learn the host's name (ripgrep 14 "
                  "and later, for hyperlinks; 15 runs it on every search)"},
    value_options=frozenset({"-e", "--regexp", "-g", "--glob", "-t", "--type", "-T",
                             "--type-not", "-A", "-B", "-C", "-m", "--max-count", "-r",
                             "--replace", "-j", "--threads", "-M", "--max-columns",
                             "--pre-glob", "--iglob", "-E", "--encoding", "-d",
                             "--max-depth", "--sort", "--sortr", "--type-add", "-f", "--file"}),
    examples=(
        Example("rg --pre ./x.sh foo", runs_code=True),
        Example("rg --pre=sh --pre-glob '*.py' foo", runs_code=True),
        Example("rg --hostname-bin=./x.sh foo .", runs_code=True),
        Example("rg --hostname-bin ./x.sh --hyperlink-format=default foo", runs_code=True),
        Example("rg --hyperlink-format=default foo src/"),
        Example("rg foo *.py", runs_code=True),  # a file named `--pre=x` would be an option
        Example("rg -n 'def main' src/"),
        Example("rg --pre-glob '*.gz' foo"),
        Example("rg foo -- *.py"),
        Example("rg -g '*.py' foo ./*.py"),
    ),
)

_FD_VALUES = frozenset({"-e", "--extension", "-t", "--type", "-E", "--exclude", "-d",
                        "--max-depth", "--min-depth", "--exact-depth", "-j", "--threads", "-S",
                        "--size", "-c", "--color", "--changed-within", "--changed-before",
                        "-o", "--owner", "--base-directory", "--search-path", "--max-results",
                        "--path-separator", "--format", "--ignore-file"})
FD = Program(
    ("fd", "fdfind"), "the file finder",
    code_options={"-x": "runs a command for every file found", "--exec": "runs a command for "
                  "every file found", "-X": "runs a command with every file found",
                  "--exec-batch": "runs a command with every file found"},
    value_options=_FD_VALUES,
    examples=(
        Example("fd -e py -x wc -l", runs_code=True),
        Example("fd -Hx rm", runs_code=True),
        Example("fd --exec-batch=ls . src", runs_code=True),
        Example("fd -e py"),
        Example("fd -tx . bin"),
    ),
)

_FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 1}
FIND = Program(
    ("find",), "the file finder",
    code_options={"-exec": "runs a command for every file found", "-execdir": "runs a command "
                  "for every file found", "-ok": "runs a command for every file found",
                  "-okdir": "runs a command for every file found",
                  "-delete": "deletes every file it finds"},
    writes=lambda vals: [(v, i + 1, None) for i, v in enumerate(vals[:-1])
                         if v in _FIND_WRITES],
    examples=(
        Example("find . -name x -exec rm {} +", runs_code=True),
        Example("find . -execdir sh -c id \\;", runs_code=True),
        Example("find . -name '*.pyc' -delete", runs_code=True),
        Example("find . -fprint list.txt", writes=("list.txt",)),
        Example("find . -fprintf out.txt '%p\\n'", writes=("out.txt",)),
        Example("find . -name '*.py'"),
        Example("find src -type f -newer setup.py"),
    ),
)


def _sed(vals: list[str]) -> tuple[list[Risk], list[tuple[str, int, str | None]]]:
    """The risks and written files of `sed ARGS`."""
    risks: list[Risk] = []
    writes: list[tuple[str, int, str | None]] = []
    scripts: list[tuple[int, str]] = []
    operands: list[int] = []
    in_place = False
    i = 0
    while i < len(vals):
        v = vals[i]
        if v == "--":
            operands += range(i + 1, len(vals))
            break
        if v.startswith("--"):
            opt, eq, val = v.partition("=")
            if opt == "--expression":
                scripts.append((i, val) if eq else (i + 1, vals[i + 1] if i + 1 < len(vals)
                                                    else ""))
                i += 1 if eq else 2
                continue
            if opt == "--file":
                risks.append(Risk(i, CODE, "--file", "`sed --file` runs a script from a file"))
            in_place = in_place or opt == "--in-place"
            i += 1 + (opt in ("--file", "--line-length") and not eq)
            continue
        if v.startswith("-") and len(v) > 1:
            k = 1
            while k < len(v):
                ch = v[k]
                if ch in "efl":
                    val = v[k + 1:] or (vals[i + 1] if i + 1 < len(vals) else "")
                    at = i if v[k + 1:] else i + 1
                    if ch == "e":
                        scripts.append((at, val))
                    elif ch == "f":
                        risks.append(Risk(i, CODE, "-f", "`sed -f` runs a script from a file"))
                    i += 0 if v[k + 1:] else 1
                    break
                if ch == "i":
                    in_place = True
                    break
                k += 1
            i += 1
            continue
        operands.append(i)
        i += 1
    if not scripts and operands:
        scripts.append((operands[0], vals[operands[0]]))
        operands = operands[1:]
    for at, text in scripts:
        if DYNAMIC in text:
            risks.append(Risk(at, CODE, "sed", "the `sed` script is not fixed text (an "
                              "expansion could add `e` or `w` commands)"))
            continue
        runs, files = sed_script(text)
        risks += [Risk(at, CODE, "sed", f"the `sed` script {w}") for w in runs]
        writes += [("sed w", at, f) for f in files]
    if in_place:
        writes += [("sed -i", k, None) for k in operands]
    return risks, writes


SED = Program(
    ("sed", "gsed"), "the stream editor (a script language: `e`, `w FILE`)",
    risks=lambda vals: _sed(vals)[0], writes=lambda vals: _sed(vals)[1],
    examples=(
        Example("sed -n 1,20p f", ),
        Example("sed 's/foo/bar/g' a.txt"),
        Example("sed -e 's/a/b/' -e '/^#/d' f"),
        Example("sed '1e id' f", runs_code=True),
        Example("sed 's/.*/id/e' f", runs_code=True),
        Example("sed -n 'w out.txt' f", writes=("out.txt",)),
        Example("sed 's/a/b/w .git/hooks/pre-commit' f", writes=(".git/hooks/pre-commit",)),
        Example("sed -i 's/a/b/' src/app.py", writes=("src/app.py",)),
        Example("sed -i.bak -e 's/a/b/' x.txt y.txt", writes=("x.txt", "y.txt")),
        Example("sed -f script.sed f", runs_code=True),
        Example("sed --expression='1e id' f", runs_code=True),
        Example("sed -ne '1e id' f", runs_code=True),
    ),
)


def _awk(vals: list[str]) -> tuple[list[Risk], list[tuple[str, int, str | None]]]:
    risks: list[Risk] = []
    writes: list[tuple[str, int, str | None]] = []
    i = 0
    prog: tuple[int, str] | None = None
    while i < len(vals):
        v = vals[i]
        if v == "--":
            i += 1
            break
        if not v.startswith("-") or v == "-":
            break
        opt = v.split("=", 1)[0]
        if opt in ("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec") or (
                v[:2] in ("-f", "-i", "-l", "-E") and not v.startswith("--")):
            risks.append(Risk(i, CODE, opt[:2] if not opt.startswith("--") else opt,
                              f"`awk {opt}` runs awk code from a file"))
            prog = (i, "")
        elif opt in ("-e", "--source"):
            prog = (i + 1, vals[i + 1] if i + 1 < len(vals) else "")
        i += 2 if v in ("-F", "-v", "-f", "-e", "--source", "--file", "-i", "--include",
                        "-l", "--load", "-E", "--exec", "--assign", "--field-separator") else 1
    if prog is None and i < len(vals):
        prog = (i, vals[i])
    if prog is not None and DYNAMIC in prog[1]:
        risks.append(Risk(prog[0], CODE, "awk", "the `awk` program is not fixed text"))
    elif prog is not None and prog[1]:
        runs, files = awk_program(prog[1])
        risks += [Risk(prog[0], CODE, "awk", f"the `awk` program: {w}") for w in runs]
        writes += [("awk print >", prog[0], f) for f in files]
    return risks, writes


AWK = Program(
    ("awk", "gawk", "mawk", "nawk"), "the awk language",
    risks=lambda vals: _awk(vals)[0], writes=lambda vals: _awk(vals)[1],
    examples=(
        Example("awk '{print $1}' f"),
        Example("awk -F: '$3 > 100 {print $1}' /etc/passwd"),
        Example("awk '/a|b/ {n++} END {print n}' f"),
        Example("awk 'BEGIN{system(\"id\")}'", runs_code=True),
        Example("awk '{print | \"sh\"}' f", runs_code=True),
        Example("awk 'BEGIN{\"id\" | getline x}'", runs_code=True),
        Example("awk '{print > \".mcp.json\"}' f", writes=(".mcp.json",)),
        Example("awk '{print > $1}' f", runs_code=True),
        Example("awk -f prog.awk f", runs_code=True),
        Example("gawk -l filefuncs 'BEGIN{}'", runs_code=True),
    ),
)

LESS = Program(
    ("less", "more", "most"), "the pagers",
    output_options=frozenset({"-o", "-O"}),
    long_output_options=frozenset({"--log-file", "--LOG-FILE"}),
    code_options={"-k": "reads key bindings (commands) from a file", "--lesskey-file": "reads "
                  "key bindings (commands) from a file", "--lesskey-src": "reads key bindings "
                  "(commands) from a file", "--lesskey-content": "takes key bindings from its "
                  "argument"},
    risks=lambda vals: [Risk(i, CODE, "+", "a `+` start-up command of the pager can run a "
                             "shell command (`!`, `|`)")
                        for i, v in enumerate(vals) if v.startswith("+") and
                        any(c in v for c in "!|")],
    examples=(
        Example("less -o copy.txt f", writes=("copy.txt",)),
        Example("less --log-file=.mcp.json f", writes=(".mcp.json",)),
        Example("less '+!id' f", runs_code=True),
        Example("less -k keys f", runs_code=True),
        Example("less -R f"),
        Example("less +G f"),
    ),
)

MAN = Program(
    ("man",), "the manual pager",
    code_options={"-P": "runs another program as the pager", "--pager": "runs another program "
                  "as the pager", "-H": "runs a browser", "--html": "runs a browser",
                  "-C": "reads its configuration (pagers) from another file",
                  "--config-file": "reads its configuration (pagers) from another file"},
    examples=(
        Example("man -P 'sh -c id' ls", runs_code=True),
        Example("man --pager=./x ls", runs_code=True),
        Example("man -Hfirefox ls", runs_code=True),
        Example("man ls"),
        Example("man 5 crontab"),
    ),
)

TEXT = (RG, FD, FIND, SED, AWK, LESS, MAN)


# -- searchers' pattern operands ------------------------------------------------------------------

#: searchers whose first operand is a pattern, not a file (unless an option gives the pattern):
#: name -> (options that take a value, the options among them whose value is the pattern, the
#: options that give the pattern by other means (a file of patterns))
_GREP_VALUES = frozenset({"-e", "--regexp", "-f", "--file", "-A", "--after-context", "-B",
                          "--before-context", "-C", "--context", "-m", "--max-count", "--label",
                          "--include", "--exclude", "--exclude-from", "--exclude-dir", "-d",
                          "--directories", "-D", "--devices", "--binary-files",
                          "--group-separator"})
_PATTERN_OPTS = frozenset({"-e", "--regexp"})
_PATTERN_FILE_OPTS = frozenset({"-f", "--file"})
PATTERN_SEARCHERS: dict[str, frozenset[str]] = {
    "grep": _GREP_VALUES, "egrep": _GREP_VALUES, "fgrep": _GREP_VALUES,
    "rg": RG.value_options | _PATTERN_OPTS | _PATTERN_FILE_OPTS,
    # (`git grep`: the words after the subcommand)
    "git grep": _GREP_VALUES | {"--max-depth", "--threads"},
}


def pattern_args(name: str, args: tuple[Word, ...]) -> list[int]:
    """The indexes of `args` that the program `name` (a bare name or a path) reads as its
    pattern rather than a file: a `PATTERN_SEARCHERS` entry's, or `git grep`'s after its
    subcommand (`pattern_operands`)."""
    name = program_name(name)
    skip = 0
    if name == "git" and args and args[0].literal and args[0].value == "grep":
        name, skip = "git grep", 1
    if name not in PATTERN_SEARCHERS:
        return []
    rest = args[skip:]
    return [i + skip for i in pattern_operands(name, [a.value for a in rest],
                                                [a.literal for a in rest])]


def pattern_operands(name: str, vals: list[str], literal: list[bool]) -> list[int]:
    """The indexes of the arguments (`vals`, and whether each is fixed text) that `name`, a
    searcher of `PATTERN_SEARCHERS`, reads as a pattern rather than a file: each value of
    `-e`/`--regexp` and, when no option gives a pattern, the first operand. A word that is not
    fixed text could be any options (`--`, `-e x`): only the values of `-e` before it are
    sure."""
    values = PATTERN_SEARCHERS.get(name)
    if values is None:
        return []
    short = {o[1] for o in values if len(o) == 2}
    out: list[int] = []
    operands: list[int] = []
    given = False  # a pattern given by an option
    i, n = 0, len(vals)
    while i < n:
        v = vals[i]
        if not literal[i]:
            return out
        if v == "--":
            if not operands and not all(literal[i + 1:]):
                return out  # (`grep -- $X environ`: `$X` could be no word at all)
            operands += range(i + 1, n)
            break
        if v.startswith("--"):
            opt = v.split("=", 1)[0]
            if opt not in values and len(opt) > 2:  # (getopt takes a unique prefix: `--reg`)
                longer = [o for o in values if o.startswith(opt)]
                if len(longer) == 1:
                    opt = longer[0]
            if opt in _PATTERN_OPTS or opt in _PATTERN_FILE_OPTS:
                given = True
            if "=" in v:
                if opt in _PATTERN_OPTS:
                    out.append(i)
            elif opt in values and i + 1 < n:
                if opt in _PATTERN_OPTS and literal[i + 1]:
                    out.append(i + 1)
                i += 1
        elif v.startswith("-") and len(v) > 1:
            for k, ch in enumerate(v[1:], 2):
                if ch in short:
                    if ch in "ef":
                        given = True
                    if k < len(v):  # the value glued to it (`-A3`, `-efoo`)
                        if ch == "e":
                            out.append(i)
                    elif i + 1 < n:
                        if ch == "e" and literal[i + 1]:
                            out.append(i + 1)
                        i += 1
                    break
        else:
            operands.append(i)
        i += 1
    if not given and operands:
        out.append(operands[0])
    return out


#: programs that read what lies below a directory they are given, or below the working
#: directory when given none (run from `/`, they reach every process's environment in /proc)
TREE_READERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind",
                          "tar", "bsdtar", "gtar", "zip", "7z", "7za", "cpio", "pax", "cp",
                          "rsync", "scp", "rclone", "du", "xargs", "busybox", "diff", "ugrep",
                          "ug", "sift", "pt", "rga", "gzip", "pigz", "zstd", "lz4"})


#: the options that make `git` read files outside a repository: `--no-index` (`git grep`,
#: `git diff`), another work tree or directory (`--work-tree`, `-C`)
GIT_TREE_OPTIONS = ("--no-index", "--work-tree", "-C")


#: programs that read no file an argument names (they print, test or make their words; what
#: they read from an input redirect is still looked at)
NO_FILE_ARGS = frozenset({"echo", "printf", "true", "false", ":", "test", "[", "export", "unset",
                          "cd", "pushd", "popd", "pwd", "sleep", "exit", "return", "shift",
                          "wait", "kill", "type", "hash", "basename", "dirname", "seq", "mkdir",
                          "touch", "ls"})
#: programs whose first operand is a subcommand or a target, not a file
SUBCOMMAND_FIRST = frozenset({"git", "npm", "pnpm", "yarn", "npx", "cargo", "go", "docker",
                              "podman", "kubectl", "pip", "pip3", "uv", "poetry", "gh", "make",
                              "just", "bundle", "gem", "dotnet", "mvn", "gradle"})
