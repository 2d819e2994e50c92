"""Long options written short.

GNU getopt_long and argp, git's parse-options, Python's optparse and argparse (unless told
otherwise), npm's nopt and less take any unambiguous prefix of a long option for the option:
`tar --checkpoint-act=exec=CMD` is `--checkpoint-action`, `env --chd=DIR` is `--chdir`,
`sort --outp=F` is `--output`, `git reset --har` is `--hard`. Every rule of statewright looks
for an option by its full name, so the walk writes each such word as the option it stands for
(`spell`) before any rule sees the command: one reading for the entries of `programs`, the
wrappers of `shell.wrappers` and self-protection alike.

`WATCHED` says, per program that takes abbreviations, where the long options its rules look
for are kept (the entries' tables, the wrappers' and self-protection's sets, and the few
options a rule names in its code); `EXACT` lists the program's own options that are a proper
prefix of one of them: a word that is exactly an option is never an abbreviation
(`tar --checkpoint=10` is not `--checkpoint-action`). A word that is neither, and a proper
prefix of a watched option, is read as that option; when it is a prefix of several, the
program would refuse it as ambiguous, and it is read as the first of them in order (a line
that does not run loses nothing by a refusal). `tests/policy/test_spelling.py` checks that
every long option a rule of these programs names in its code is watched.

Programs whose parser takes no abbreviation (pytest, curl, rg, fd, cargo, go, docker, kubectl,
gh, node, uv) are not listed: there `--outp` is an error, not `--output`.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover

    from ..shell.records import Word

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


def _watched(name: str) -> tuple[str, ...]:
    """The long options the rules of program `name` look for besides `ANY_PROGRAM_OUTPUTS`, in
    order. An entry's tables say them as data; a rule
    written as code names them in its code, read here from the code object (its constants, and
    the module-level values and functions it uses), so that a rule that learns an option is
    never behind."""
    from .. import channels
    from ..protect import line as protect_line
    from ..shell import wrappers as wr
    from . import _entry, worktree
    from .text import GIT_TREE_OPTIONS, PATTERN_SEARCHERS
    from .writers import ANY_PROGRAM_OUTPUTS

    sources: list[object] = []
    entry = _entry(name)
    if entry is not None:
        sources += [entry.code_options, entry.long_output_options, entry.value_options,
                    [t for words, _, _ in entry.subcommands for t in words.split()],
                    entry.risks, entry.writes, entry.dumps_env]
    if name == "git":
        sources += [worktree.git_subcommand, worktree.git_effect,
                    PATTERN_SEARCHERS["git grep"], GIT_TREE_OPTIONS]
    if name in ("tar", "gtar", "bsdtar", "cpio"):
        sources.append(worktree.extract_target)
    if name in ("gzip", "xz", "bzip2", "zstd"):
        sources.append(worktree.decompressed)
    if name in worktree.COPIERS:
        sources.append(worktree.copy_operands)
    if name in protect_line._RECURSIVE_BY_OPTION:
        sources.append(protect_line._recursive)
    if name in PATTERN_SEARCHERS:
        sources.append(PATTERN_SEARCHERS[name])
    if name == "env":
        sources.append(channels._pinned)
    handler = wr._HANDLERS.get(name)
    if handler is not None:
        sources += [handler, wr._RUNNER_WITH_ARG.get(name, ())]
    own: set[str] = set()
    seen: set[int] = set()
    for src in sources:
        _collect(src, own, seen)
    return tuple(sorted(own - ANY_PROGRAM_OUTPUTS))


def _collect(src: object, out: set[str], seen: set[int]) -> None:
    """Add to `out` every long option (`--name`, without `=...`) `src` holds: a string, a
    collection of them (a dict's keys and values), or a function's code (its constants, the
    code nested in it, and the module-level values its code names, functions of the same
    module followed in turn)."""
    if isinstance(src, str):
        if src[:2] == "--" and len(src) > 2:
            out.add(src.split("=", 1)[0])
        return
    if id(src) in seen:
        return
    seen.add(id(src))
    if isinstance(src, dict):
        src = [*src, *src.values()]
    if isinstance(src, (frozenset, set, tuple, list)):
        for v in src:
            if type(v) is str:
                if v[:2] == "--" and len(v) > 2:
                    out.add(v.split("=", 1)[0])
            else:
                _collect(v, out, seen)
    elif callable(src) and hasattr(src, "__code__"):
        module = getattr(src, "__module__", None)
        names = getattr(src, "__globals__", {})
        todo = [src.__code__]
        while todo:
            code = todo.pop()
            for c in code.co_consts:
                if hasattr(c, "co_consts"):
                    todo.append(c)
                else:
                    _collect(c, out, seen)
            for n in code.co_names:
                v = names.get(n)
                if isinstance(v, (str, dict, frozenset, set, tuple, list)) or (
                        callable(v) and getattr(v, "__module__", None) == module):
                    _collect(v, out, seen)


def watched(name: str) -> tuple[str, ...]:
    """The long options statewright looks for in `name`'s command lines, if `name` (a program
    name, not a path) takes abbreviated long options (empty otherwise), in matching order: its
    own (`_watched`, as `_WATCHED` keeps them), then those any program is taken to write with
    (`cp --target=` is `--target-directory`, not `--target-dir`)."""
    return sum(_tiers(name), ())


def _tiers(name: str) -> tuple[tuple[str, ...], ...]:
    """`watched(name)` as its two sorted parts (none for a program not `ABBREVIATING`)."""
    tiers = _TABLE.get(name)
    if tiers is None:
        if name in ABBREVIATING:
            from .writers import ANY_PROGRAM_OUTPUTS

            own = own_options(name)
            tiers = (own, tuple(sorted(ANY_PROGRAM_OUTPUTS.difference(own))))
        else:
            tiers = ()
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


def watched_text() -> str:
    """What `_WATCHED` holds when it is current: `_watched` of each program of
    `ABBREVIATING`, a program a line (`name: --opt ...`, wrapped)."""
    out = [""]
    for name in sorted(ABBREVIATING):
        row = name + ":"
        for o in _watched(name):
            if len(row) + len(o) + 1 > 95:
                out.append(row)
                row = "   "
            row += " " + o
        out.append(row)
    return "\n".join([*out, ""])


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
    words are the command's) at the first word that is no option."""
    if name not in ABBREVIATING:
        return None
    out: list[Word] | None = None
    for i, a in enumerate(args):
        v = a.value
        if v[:2] != "--":
            if options_first and v[:1] != "-":
                break
            continue
        if len(v) == 2:  # (`--`)
            break
        opt, eq, rest = v.partition("=")
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
    from ..shell.records import new_word
    from ..shell.words import escape_pattern

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

if __name__ == "__main__":  # pragma: no cover
    from pathlib import Path

    here = Path(__file__)
    text = here.read_text()
    start = text.index('_WATCHED = """') + len('_WATCHED = """')
    here.write_text(text[:start] + watched_text() + text[text.index('"""', start):])
