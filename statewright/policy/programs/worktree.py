"""Programs that change the worktree wholesale, as data (DESIGN section 4, check 1: "judge
every command that changes the worktree by its effect, not its name"): what a git subcommand
removes or restores, where copies, moves and archive extraction land, which programs leave
work running after the call. `protect.worktree` turns these facts into refusals; each entry's
examples are checked by `tests/security/test_escape_corpora.py`.

Each function takes the command's name and its arguments' values (unquoted) and answers with
plain data; none looks at the file system.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence


class GitEffect:
    """What one git command line does to the worktree: the pathspecs it acts on (empty: the
    whole tree below the cwd), and whether it removes untracked files, ignored files, or
    rewrites tracked ones."""

    __slots__ = ("ignored", "pathspecs", "tracked", "untracked")

    def __init__(self, pathspecs: list[str], untracked: bool = False, ignored: bool = False,
                 tracked: bool = False) -> None:
        self.pathspecs = pathspecs
        self.untracked = untracked  # removes untracked files (clean, stash -u)
        self.ignored = ignored  # removes ignored files too (clean -x/-X, stash -a)
        self.tracked = tracked  # rewrites tracked files to another version (checkout ., reset)


#: git's global options that take the next word as their value
_GIT_GLOBAL_WITH_ARG = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "-c",
                                  "--config-env", "--super-prefix"})
#: subcommand options that take the next word as their value
_GIT_OPT_WITH_ARG = frozenset({"-s", "--source", "-m", "--message", "-e", "--exclude",
                               "-b", "-B", "--orphan", "--conflict", "--pathspec-from-file",
                               "--chmod", "--inter-hunk-context", "-U", "--unified"})


def git_subcommand(vals: Sequence[str]) -> tuple[str, list[str]]:
    """(subcommand, its arguments) of `git VALS`, past git's global options."""
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        i += 2 if vals[i] in _GIT_GLOBAL_WITH_ARG else 1
    if i >= len(vals):
        return "", []
    return vals[i], list(vals[i + 1:])


def _split(args: list[str]) -> tuple[set[str], list[str], int]:
    """(options, plain words, how many plain words came before `--`) of a subcommand's
    arguments; after `--` every word is plain."""
    opts: set[str] = set()
    plain: list[str] = []
    before = -1
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            before = len(plain)
            plain += args[i + 1:]
            opts.add("--")
            break
        if a.startswith("--"):
            opts.add(a.split("=", 1)[0])
            if a in _GIT_OPT_WITH_ARG:
                i += 1
        elif a.startswith("-") and len(a) > 1:
            if a[:2] in _GIT_OPT_WITH_ARG:
                if len(a) == 2:
                    i += 1
                opts.add(a[:2])
            else:
                opts.update("-" + ch for ch in a[1:])
        else:
            plain.append(a)
        i += 1
    return opts, plain, len(plain) if before < 0 else before


_STASH_VERBS = frozenset({"push", "save", "list", "show", "pop", "apply", "drop", "branch",
                          "clear", "create", "store", "export", "import"})


#: the subcommands `git_effect` finds an effect for (with some of their options)
_GIT_CHANGERS = frozenset({"clean", "stash", "checkout", "restore", "reset", "rm", "mv",
                           "switch", "checkout-index", "read-tree"})


def git_effect(vals: Sequence[str], path_exists: object = None) -> GitEffect | None:
    """What `git VALS` does to the worktree (None: it changes no file there, or only as a
    branch switch, merge or pull, which statewright leaves to the human's review: see
    docs/policy.md). `path_exists(word)`: whether a word names an existing path (tells
    `git checkout BRANCH` from `git checkout PATH`)."""
    sub, args = git_subcommand(vals)
    if sub not in _GIT_CHANGERS:
        return None  # (`status`, `diff`, `log`, ...: nothing below applies)
    opts, plain, before = _split(args)
    if sub == "clean":
        if opts & {"-n", "--dry-run"} or not opts & {"-f", "--force"}:
            return None  # a dry run, or refused by git (clean.requireForce)
        return GitEffect(plain, untracked=True, ignored=bool(opts & {"-x", "-X"}))
    if sub == "stash":
        verb = plain[0] if before > 0 and plain[0] in _STASH_VERBS else ""
        if verb not in ("", "push", "save"):
            return None  # list, show, pop, apply, drop, branch, ...
        specs = plain[1:] if verb == "push" else [] if verb == "save" else plain
        if not opts & {"-u", "--include-untracked", "-a", "--all"}:
            return None  # tracked changes only (see docs/policy.md, class 4)
        return GitEffect(specs, untracked=True, ignored=bool(opts & {"-a", "--all"}))
    if sub == "checkout":
        if "--" in opts:
            return GitEffect(plain[before:], tracked=True)
        exists = path_exists if callable(path_exists) else (lambda w: False)
        specs = [p for p in plain if exists(p)]
        if specs:
            return GitEffect(specs, tracked=True)
        if opts & {"-f", "--force"}:
            return GitEffect([], tracked=True)
        return None  # a branch switch
    if sub == "restore":
        if "--staged" in opts and not opts & {"-W", "--worktree"}:
            return None  # the index only
        return GitEffect(plain, tracked=True)
    if sub == "reset":
        if opts & {"--hard", "--merge", "--keep"}:
            return GitEffect([], tracked=True)
        return None  # the index only
    if sub == "rm":
        if "--cached" in opts:
            return None
        return GitEffect(plain, tracked=True)
    if sub == "mv":  # (moves its sources away, and may replace its destination: `-f`)
        if opts & {"-n", "--dry-run"}:
            return None
        return GitEffect(plain, tracked=True)
    if sub == "switch":
        if opts & {"-f", "--force", "--discard-changes"}:
            return GitEffect([], tracked=True)
        return None
    if sub in ("checkout-index", "read-tree"):
        if opts & {"-a", "--all", "-u", "--reset"}:
            return GitEffect(plain if sub == "checkout-index" else [], tracked=True)
    return None


# -- copies, moves, links, extraction -----------------------------------------------------------

#: programs that copy, move or link their operands to a destination (the last operand, or the
#: directory of `-t DIR` / `--target-directory=DIR`)
COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp", "link"})
#: of those, the ones that also remove their sources
MOVERS = frozenset({"mv"})
#: programs that delete their operands
REMOVERS = frozenset({"rm", "unlink", "shred", "srm", "trash", "rmdir"})
#: options of copiers that take the next word as their value
_COPY_OPT_WITH_ARG = frozenset({"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g",
                                "--group", "-e", "--rsh", "--exclude", "--include", "-f",
                                "--filter", "--backup-dir", "--chown", "--chmod", "-P",
                                "-i", "-F", "-l", "--exclude-from", "--include-from"})


def copy_operands(name: str, vals: Sequence[str]) -> tuple[list[int], int | None, bool]:
    """For a copier: (indices of the source operands in VALS, index of the destination or None,
    whether the destination is a directory the sources land in). `rsync src/ dst` with a
    trailing slash copies the contents of src: that is reported as its own source name `.`
    by `landing_names`."""
    opts_done = False
    target: int | None = None
    ops: list[int] = []
    i = 0
    while i < len(vals):
        v = vals[i]
        if not opts_done and v == "--":
            opts_done = True
        elif not opts_done and v in ("-t", "--target-directory") and i + 1 < len(vals):
            target = i + 1
            i += 1
        elif not opts_done and v.startswith("--target-directory="):
            target = i
        elif not opts_done and v.startswith("-") and len(v) > 1:
            if v in _COPY_OPT_WITH_ARG and name in ("install", "rsync", "scp"):
                i += 1
        else:
            ops.append(i)
        i += 1
    if target is not None:
        return ops, target, True
    if len(ops) < 2:
        return ops, None, False
    return ops[:-1], ops[-1], len(ops) > 2


def landing_name(src: str, name: str) -> str:
    """The name a copied operand gets inside the destination directory: its last component, or
    `.` when its contents land there (`rsync src/ dst`, `cp -r src/. dst`)."""
    if src.endswith("/.") or src == "." or (name == "rsync" and src.endswith("/")):
        return "."
    return src.rstrip("/").rsplit("/", 1)[-1] or "."


#: archive extractors: a function of the argument values -> (extracts?, destination directory
#: or None for the cwd)
def extract_target(name: str, vals: Sequence[str]) -> tuple[bool, str | None]:
    """Whether `name VALS` extracts an archive, and where (None: the working directory)."""
    if name in ("tar", "bsdtar", "gtar"):
        first = vals[0] if vals else ""
        x = any(v in ("-x", "--extract", "--get") for v in vals) or (
            first and not first.startswith("-") and "x" in first) or any(
            v.startswith("-") and not v.startswith("--") and "x" in v for v in vals)
        dest = None
        for i, v in enumerate(vals):
            if v in ("-C", "--directory") and i + 1 < len(vals):
                dest = vals[i + 1]
            elif v.startswith("--directory="):
                dest = v.split("=", 1)[1]
            elif v.startswith("-C") and len(v) > 2:
                dest = v[2:]
        return bool(x), dest
    if name == "unzip":
        if any(v in ("-l", "-t", "-Z", "-v", "-p") for v in vals):
            return False, None
        for i, v in enumerate(vals):
            if v == "-d" and i + 1 < len(vals):
                return True, vals[i + 1]
        return True, None
    if name in ("7z", "7za", "7zr"):
        if vals and vals[0] in ("x", "e"):
            dest = next((v[2:] for v in vals if v.startswith("-o")), None)
            return True, dest
        return False, None
    if name == "cpio":
        return any(v.startswith("-i") or v in ("--extract",) for v in vals), None
    return False, None


#: decompressors that write `NAME` next to `NAME.gz` (the suffix they strip)
DECOMPRESSORS = {"gunzip": ".gz", "unxz": ".xz", "bunzip2": ".bz2", "unzstd": ".zst",
                 "unlzma": ".lzma", "uncompress": ".Z"}


def decompressed(name: str, vals: Sequence[str]) -> list[str]:
    """The files a decompressor writes (`gunzip a.json.gz` writes `a.json`)."""
    suffix = DECOMPRESSORS.get(name)
    if suffix is None and name in ("gzip", "xz", "bzip2", "zstd") and (
            "-d" in vals or "--decompress" in vals):
        suffix = {"gzip": ".gz", "xz": ".xz", "bzip2": ".bz2", "zstd": ".zst"}[name]
    if suffix is None or "-c" in vals or "--stdout" in vals:
        return []
    return [v[:-len(suffix)] for v in vals if not v.startswith("-") and v.endswith(suffix)]


# -- work that outlives the call -----------------------------------------------------------------

#: programs whose job is to leave a command running after they return (or after the shell
#: that started them exits): DESIGN section 4 point 5
DETACHERS = frozenset({"nohup", "setsid", "disown", "coproc", "at", "batch", "daemonize",
                       "start-stop-daemon", "systemd-run", "nq", "pueue", "bg", "screen",
                       "tmux", "dtach", "abduco"})



#: git configuration an allowed `git` runs with in a state that restricts commands (through
#: `GIT_CONFIG_COUNT`, which ranks as the command line): a repository the agent planted
#: (a bare repository's `config`, which git would discover from its directory) cannot make
#: git run its `core.fsmonitor` command; the human's own hooks (`core.hooksPath`) still run
GIT_HARDENING = (("safe.bareRepository", "explicit"), ("core.fsmonitor", "false"))
