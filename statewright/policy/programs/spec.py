"""The shape of one entry of `policy.programs`: a `Program`, the `Risk`s it finds in a command
line, and the `Example`s that pin it down; how a rule reads a command line's options
(`getopt`), and long options written short (`spell`, from `programs.spelling`'s table).

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
from ..types import escape_pattern, new_word

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from ..types import Word

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
           short_optional: str = "", options_first: bool = False
           ) -> tuple[list[tuple[str, str | None, int, int]], list[int]]:
    """The options of a command line as getopt_long reads them: each (option, its value or
    None, the index of the word holding the option, the index of the word holding its value or
    else the option), and the indexes of the operands (every word after `--` among them).
    Options stand anywhere before `--` (GNU's order), or with `options_first` before the first
    operand (a wrapper: `env -C DIR cmd`, the rest is the command's).

    Short options cluster (`-sd@F` is `-s -d @F`; `-sfFILE`, `-sf FILE`): one of
    `short_values` takes the rest of its word or else the next word, one of `short_optional`
    only the rest of its word (`make -j4`); a long option of `long_values` takes what follows
    `=` or else the next word. For a rule that reads an option's value: every spelling of it
    reaches the rule (abbreviated long options are written out by the walk: `spell`)."""
    out: list[tuple[str, str | None, int, int]] = []
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
                out.append((opt, value, i, i))
            elif opt in long_values:
                out.append((opt, vals[i + 1] if i + 1 < n else None, i, i + 1))
                i += 1
            else:
                out.append((opt, None, i, i))
        elif v[:1] == "-" and len(v) > 1:
            for k in range(1, len(v)):
                ch = v[k]
                if ch in short_values:
                    if k + 1 < len(v):
                        out.append(("-" + ch, v[k + 1:], i, i))
                    else:
                        out.append(("-" + ch, vals[i + 1] if i + 1 < n else None, i, i + 1))
                        i += 1
                    break
                if ch in short_optional:
                    out.append(("-" + ch, v[k + 1:] or None, i, i))
                    break
                out.append(("-" + ch, None, i, i))
        elif options_first:
            operands += range(i, n)
            break
        else:
            operands.append(i)
        i += 1
    return out, operands


#: long options that name a file or directory the program writes (or, `--basetemp`, empties),
#: whichever program is given them (gathered from pytest and its plugins, curl, wget, compilers
#: and build tools)
ANY_PROGRAM_OUTPUTS = frozenset({
    "--output", "--output-file", "--output-document", "--output-directory", "--outfile",
    "--out-file", "--log-file", "--logfile", "--junitxml", "--junit-xml", "--junit-prefix",
    "--basetemp", "--result-log", "--resultlog", "--report-log", "--html", "--cov-report",
    "--debug", "--dump", "--save", "--write", "--out", "--output-dir", "--outdir",
    "--out-dir", "--target-dir", "--cache-dir", "--reportlog", "--json-report-file"})


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


# -- long options written short (`programs.spelling` says why and how the table is made) ----

#: per program name, its own long options that are a proper prefix of one it is watched for
#: (`tar --list` is not `--listed-incremental`): found by reading every long option in each
#: program's `--help` (`git CMD --git-completion-helper` and `-h` for git's commands) and
#: checking them against `watched`; see docs/design-decisions.md, "Long options written short"
_TAR_EXACT = frozenset({"--checkpoint", "--list"})
_COPIER_EXACT = frozenset({"--backup"})
_GREP_EXACT = frozenset({"--binary"})
_PIP_EXACT = frozenset({"--global", "--log", "--pre", "--report", "--upgrade"})
EXACT: dict[str, frozenset[str]] = {
    "git": frozenset({"--base", "--binary", "--cache", "--cc", "--get-url", "--group", "--head",
                      "--header", "--int", "--log", "--name", "--or", "--path", "--remove",
                      "--replace", "--repo", "--stage", "--temp", "--thread", "--to"}),
    **dict.fromkeys(("tar", "gtar", "bsdtar"), _TAR_EXACT),
    **dict.fromkeys(("cp", "mv", "install", "ln", "rsync"), _COPIER_EXACT),
    **dict.fromkeys(("grep", "egrep", "fgrep"), _GREP_EXACT),
    **dict.fromkeys(("pip", "pip3"), _PIP_EXACT),
    **dict.fromkeys(("npm", "pnpm", "npx"), frozenset({"--global"})),
    "nsenter": frozenset({"--target"}),
    "wget": frozenset({"--base"}),
}

#: the programs whose option parser takes an unambiguous prefix of a long option (GNU
#: getopt_long or argp, git's parse-options, optparse, argparse, nopt, less's own)
ABBREVIATING = frozenset({
    "git", "tar", "gtar", "bsdtar", "cpio", "gzip", "xz", "bzip2", "zstd", "cp", "mv",
    "install", "ln", "rsync", "rm", "chmod", "chown", "chgrp", "shred", "grep", "egrep",
    "fgrep", "make", "gmake", "pip", "pip3", "sed", "gsed", "awk", "gawk", "env", "sudo",
    "su", "xargs", "flock", "time", "nice", "ionice", "timeout", "watch", "script", "runuser",
    "npm", "pnpm", "npx", "pipx", "pdm", "wget", "less", "more", "man", "sort", "tee", "aws",
    "unshare", "nsenter", "systemd-run", "strace", "ltrace", "gdb", "xvfb-run", "setsid",
})

#: the programs known to take a long option only whole (argparse told so, curl, clap, cobra,
#: Go's flag, node, ripgrep): there `--outp` is an error, never `--output`
EXACT_ONLY = frozenset({
    "pytest", "py.test", "curl", "rg", "fd", "fdfind", "cargo", "rustc", "go", "docker",
    "podman", "kubectl", "oc", "gh", "node", "nodejs", "deno", "bun", "uv", "uvx",
})

#: of those, the wrappers whose options end at the first word that is no option (the words
#: after it are their command's, spelled as that command's)
OPTIONS_FIRST = frozenset({
    "env", "sudo", "xargs", "flock", "time", "nice", "ionice", "timeout", "watch", "runuser",
    "unshare", "nsenter", "systemd-run", "strace", "ltrace", "gdb", "xvfb-run", "setsid",
})

#: what the analysis says of a word that abbreviates more than one of a program's options
#: (self-protection refuses such a line in every state: `protect.line.shell_violations`)
AMBIGUOUS = "abbreviates more than one option"

_TABLE: dict[str, tuple[tuple[str, ...], ...]] = {}
_SETS: dict[str, frozenset[str]] = {}


def watched(name: str) -> tuple[str, ...]:
    """The long options statewright looks for in `name`'s command lines, if `name` (a program
    name, not a path) takes abbreviated long options (empty otherwise), in matching order: its
    own (`_watched`, as `_WATCHED` keeps them), then those any program is taken to write with
    (`cp --target=` is `--target-directory`, not `--target-dir`)."""
    return sum(_tiers(name), ())


def _tiers(name: str) -> tuple[tuple[str, ...], ...]:
    """`watched(name)` as its two sorted parts: a program of `ABBREVIATING` its own options
    and those any program writes with; one known to take no prefix (`EXACT_ONLY`) none; any
    other program (its parser unknown: it may take prefixes) those any program writes with
    (`shuf --outp=F` writes F)."""
    tiers = _TABLE.get(name)
    if tiers is None:
        if name in EXACT_ONLY:
            tiers = ()
        else:
            own = own_options(name) if name in ABBREVIATING else ()
            tiers = (own, tuple(sorted(ANY_PROGRAM_OUTPUTS.difference(own))))
        _TABLE[name] = tiers
        _SETS[name] = frozenset(o for t in tiers for o in t)
    return tiers


def own_options(name: str) -> tuple[str, ...]:
    """Program `name`'s own watched long options, as `_WATCHED` keeps them."""
    joined = _JOINED[0]
    if joined is None:
        joined = _JOINED[0] = _WATCHED.replace("\n    ", " ")  # (a line's continuations)
    at = joined.find("\n" + name + ":")
    if at < 0:
        return ()
    at += len(name) + 2
    return tuple(joined[at:joined.index("\n", at)].split())


_JOINED: list[str | None] = [None]


def full_option(name: str, word: str) -> str | tuple[str, ...] | None:
    """The long option `word` (`--chd`, `--chd=DIR`'s option part) abbreviates for program
    `name`; None when it abbreviates none of those watched (or is an option itself); the
    options it could be when it begins several of the program's own (the program refuses such
    a word, unless some of them are not its own: the walk refuses it too). Its own options are
    tried first, then those any program is taken to write with (the first of them: they are
    alike). Answers are kept (`_FULL`): lines give
    `git --short`, `tar --create` again and again."""
    key = (name, word)
    if key in _FULL:
        return _FULL[key]
    if len(_FULL) >= 1024:
        _FULL.clear()
    full = _FULL[key] = _full_option(name, word)
    return full


_FULL: dict[tuple[str, str], str | tuple[str, ...] | None] = {}


def _full_option(name: str, word: str) -> str | tuple[str, ...] | None:
    tiers = _tiers(name)
    if not tiers or word in _SETS[name] or word in EXACT.get(name, ()):
        return None
    own = True
    for opts in tiers:  # (each sorted: the options `word` begins follow one another)
        lo, hi = 0, len(opts)
        while lo < hi:
            mid = (lo + hi) // 2
            if opts[mid] < word:
                lo = mid + 1
            else:
                hi = mid
        end = lo
        while end < len(opts) and opts[end].startswith(word):
            end += 1
        if end - lo == 1 or (end > lo and not own):
            # (those any program writes with are alike: the file its value names is written)
            return opts[lo]
        if end > lo:
            return opts[lo:end]
        own = False
    return None


def spell_argv(prog: str, argv: tuple[Word, ...], problems: list[str]) -> tuple[Word, ...]:
    """A command's words (`argv`; `prog`: the program it runs, one of `ABBREVIATING`) with its
    abbreviated long options written out (`spell`), or () when it has none; an abbreviation of
    several options goes to `problems`."""
    spelled = spell(prog, argv[1:], problems, prog in OPTIONS_FIRST)
    return () if spelled is None else (argv[0], *spelled)


def respell(words: list[Word], old: tuple[Word, ...], new: tuple[Word, ...]
            ) -> tuple[Word, ...]:
    """Put each word of `new` that replaces one of `old` in its place in `words` (the line's
    words, to which `old`'s were added last): every check reads a word as its command does.
    Returns `new`."""
    end = len(words)
    for o, n in zip(reversed(old), reversed(new), strict=True):
        if o is not n:
            for k in range(end - 1, -1, -1):
                if words[k] is o:
                    words[k] = n
                    end = k
                    break
    return new


def spell(name: str, args: tuple[Word, ...], problems: list[str], options_first: bool = False
          ) -> tuple[Word, ...] | None:
    """`args` of program `name` with each abbreviated long option written out (its text kept as
    written), or None when none is abbreviated; a word that abbreviates several options goes
    to `problems`. Options end at `--`, and with `options_first` (a wrapper: its command's
    words are the command's) at the first word that is no option and could be no option's
    value (`env -u X --chd=D cmd`: `X` may be `-u`'s)."""
    out: list[Word] | None = None
    valued = False  # (the word before could be an option that takes the next as its value)
    for i, a in enumerate(args):
        v = a.value
        if v[:2] != "--":
            if v[:1] == "-" and len(v) > 1:
                valued = True  # (`-u`, `-vC`: the next word may be its value)
            elif options_first:
                if not valued:
                    break
                valued = False
            continue
        if len(v) == 2:  # (`--`: the end of the options, or the value of the one before)
            if not valued:
                break
            valued = False
            continue
        opt, eq, rest = v.partition("=")
        valued = not eq
        full = full_option(name, opt)
        if full is None:
            continue
        if isinstance(full, tuple):
            problems.append(f"`{name} {opt}` {AMBIGUOUS} (" + ", ".join(full[:4])
                            + (", ..." if len(full) > 4 else "") + "): write the option out")
            continue
        respelled = _respelled(a, opt, full + eq + rest)
        if respelled is None:
            continue
        if out is None:
            out = list(args)
        out[i] = respelled
    return tuple(out) if out is not None else None


def _respelled(a: Word, opt: str, value: str) -> Word | None:
    """Word `a` with its option part `opt` written as `value`'s; None when that part is not
    fixed text (`--ch$X=DIR` could be any option)."""
    if a.literal:
        return new_word(a.text, value, escape_pattern(value), True)
    tail = a.pattern[len(opt):]
    if not a.pattern.startswith(opt) or tail[:1] not in ("", "="):
        return None
    return new_word(a.text, value, escape_pattern(value.partition("=")[0]) + tail, False,
                    a.dynamic, a.glob, a.tilde)


#: `watched_text()` as made last (`python -m statewright.policy.programs.spelling` makes it
#: anew; tests/policy/test_spelling.py checks it is current): a hook process reads its line
#: here rather than working it out from the rules (0.2 ms for git)
_WATCHED = """
awk: --assign --exec --field-separator --file --include --load --source
aws: --endpoint-url --profile --query --region
bsdtar: --absolute-names --after-date --append --blocking-factor --catenate --checkpoint-action
    --create --directory --exclude --exclude-from --extract --file --files-from --format --get
    --group --index-file --info-script --label --listed-incremental --mode --new-volume-script
    --newer --owner --rsh-command --starting-file --tape-length --to-command --transform
    --update --use-compress-program --xform
bzip2: --decompress --stdout
chgrp: --recursive
chmod: --recursive
chown: --recursive
cp: --backup-dir --chmod --chown --exclude --exclude-from --filter --group --include
    --include-from --mode --owner --recursive --rsh --suffix --target-directory
cpio: --directory --extract --get
egrep: --after-context --before-context --binary-files --context --devices --directories
    --exclude --exclude-dir --exclude-from --file --group-separator --include --label
    --max-count --regexp
env: --argv0 --chdir --ignore-environment --split-string --unset
fgrep: --after-context --before-context --binary-files --context --devices --directories
    --exclude --exclude-dir --exclude-from --file --group-separator --include --label
    --max-count --regexp
flock: --command --format --timeout
gawk: --assign --exec --field-separator --file --include --load --source
gdb: --adjustment --class --classdata --kill-after --signal
git: --add --after-context --all --author --before-context --binary-files --blob --branch
    --cached --cc-cmd --chmod --comment --config --config-env --conflict --context --date
    --default --depth --devices --directories --discard-changes --dry-run --edit --exclude
    --exclude-dir --exclude-from --exec --exec-path --extcmd --file --fixup --force --format
    --get --get-all --get-color --get-colorbool --get-regexp --get-urlmatch --git-dir --grep
    --group-separator --hard --header-cmd --include --include-untracked --inter-hunk-context
    --keep --label --list --max-count --max-depth --merge --message --namespace --no-index
    --onto --open-files-in-pager --orphan --pathspec-from-file --pretty --receive-pack --regexp
    --remove-section --rename-section --replace-all --reset --reuse-message --since
    --smtp-server --source --squash --staged --super-prefix --template --threads --to-cmd
    --trailer --type --unified --unset --unset-all --until --upload-pack --value --work-tree
    --worktree
gmake: --assume-new --assume-old --directory --environment-overrides --eval --file
    --include-dir --jobs --load-average --makefile --new-file --old-file --print-data-base
    --what-if
grep: --after-context --before-context --binary-files --context --devices --directories
    --exclude --exclude-dir --exclude-from --file --group-separator --include --label
    --max-count --regexp
gsed: --expression --file --in-place --line-length
gtar: --absolute-names --after-date --append --blocking-factor --catenate --checkpoint-action
    --create --directory --exclude --exclude-from --extract --file --files-from --format --get
    --group --index-file --info-script --label --listed-incremental --mode --new-volume-script
    --newer --owner --rsh-command --starting-file --tape-length --to-command --transform
    --update --use-compress-program --xform
gzip: --decompress --stdout
install: --backup-dir --chmod --chown --exclude --exclude-from --filter --group --include
    --include-from --mode --owner --rsh --suffix --target-directory
ionice: --adjustment --class --classdata --kill-after --signal
less: --LOG-FILE --lesskey-content --lesskey-file --lesskey-src
ln: --backup-dir --chmod --chown --exclude --exclude-from --filter --group --include
    --include-from --mode --owner --rsh --suffix --target-directory
ltrace: --adjustment --class --classdata --kill-after --signal
make: --assume-new --assume-old --directory --environment-overrides --eval --file --include-dir
    --jobs --load-average --makefile --new-file --old-file --print-data-base --what-if
man: --config-file --pager
more: --LOG-FILE --lesskey-content --lesskey-file --lesskey-src
mv: --backup-dir --chmod --chown --exclude --exclude-from --filter --group --include
    --include-from --mode --owner --rsh --suffix --target-directory
nice: --adjustment --class --classdata --kill-after --signal
npm: --cache --call --default-index --dir --directory --env-file --extra --filter --from
    --globalconfig --group --index --index-url --loglevel --module --no-group --node-options
    --only-group --package --pip-args --prefix --project --python --registry --script-shell
    --spec --userconfig --with --with-editable --with-requirements --workspace
npx: --call --default-index --dir --directory --env-file --extra --filter --from --group
    --index --index-url --module --no-group --only-group --package --pip-args --prefix
    --project --python --spec --with --with-editable --with-requirements --workspace
nsenter: --adjustment --class --classdata --kill-after --signal
pdm: --call --default-index --dir --directory --env-file --extra --filter --from --group
    --index --index-url --module --no-group --only-group --package --pip-args --prefix
    --project --python --spec --with --with-editable --with-requirements --workspace
pip: --abi --cert --client-cert --config-settings --constraint --dest --editable
    --exists-action --extra-index-url --find-links --global-option --implementation --index-url
    --log --no-binary --only-binary --platform --pre-build --prefix --progress-bar --proxy
    --python --python-version --report --requirement --retries --root --root-user-action --src
    --target --timeout --trusted-host --upgrade-strategy --wheel-dir
pip3: --abi --cert --client-cert --config-settings --constraint --dest --editable
    --exists-action --extra-index-url --find-links --global-option --implementation --index-url
    --log --no-binary --only-binary --platform --pre-build --prefix --progress-bar --proxy
    --python --python-version --report --requirement --retries --root --root-user-action --src
    --target --timeout --trusted-host --upgrade-strategy --wheel-dir
pipx: --call --default-index --dir --directory --env-file --extra --filter --from --group
    --index --index-url --module --no-group --only-group --package --pip-args --prefix
    --project --python --spec --with --with-editable --with-requirements --workspace
pnpm: --cache --call --cwd --default-index --dir --directory --env-file --extra --filter --from
    --globalconfig --group --index --index-url --loglevel --module --no-group --only-group
    --package --pip-args --prefix --project --python --registry --shell-emulator --spec
    --userconfig --with --with-editable --with-requirements --workspace
rm: --recursive
rsync: --backup-dir --chmod --chown --exclude --exclude-from --files-from --filter --group
    --include --include-from --mode --owner --rsh --rsync-path --suffix --target-directory
    --temp-dir
runuser: --adjustment --class --classdata --kill-after --signal
script: --command
sed: --expression --file --in-place --line-length
setsid: --command --format --timeout
shred: --recursive
sort: --buffer-size --compress-program --field-separator --key --temporary-directory
strace: --adjustment --class --classdata --kill-after --signal
su: --command --session-command
sudo: --chdir --chroot --close-from --command-timeout --edit --group --host --login
    --other-user --prompt --role --shell --type --user
systemd-run: --adjustment --class --classdata --kill-after --signal
tar: --absolute-names --after-date --append --blocking-factor --catenate --checkpoint-action
    --create --directory --exclude --exclude-from --extract --file --files-from --format --get
    --group --index-file --info-script --label --listed-incremental --mode --new-volume-script
    --newer --owner --rsh-command --starting-file --tape-length --to-command --transform
    --update --use-compress-program --xform
tee:
time: --command --format --timeout
timeout: --adjustment --class --classdata --kill-after --signal
unshare: --adjustment --class --classdata --kill-after --signal
watch: --differences --interval
wget: --append-output --body-file --config --directory-prefix --execute --post-file
    --save-cookies --use-askpass
xargs: --arg-file --delimiter --eof --max-args --max-chars --max-lines --max-procs
    --process-slot-var --replace
xvfb-run: --adjustment --class --classdata --kill-after --signal
xz: --decompress --stdout
zstd: --decompress --stdout
"""
