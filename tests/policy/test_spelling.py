"""Long options written short (`policy/programs/spelling.py`): the walk reads each abbreviation
as the option it stands for, every rule sees the full name, and no real option of a program is
taken for an abbreviation (checked against the `--help` of the programs installed here)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from statewright.policy.programs import spelling
from statewright.policy.shell import analyze
from statewright.policy.shell.words import literal_word


def _values(line: str, index: int = 0) -> list[str]:
    return [w.value for w in analyze(line).commands[index].argv]


@pytest.mark.parametrize(("line", "index", "values"), [
    ("env --chd=workflows rm f", 0, ["env", "--chdir=workflows", "rm", "f"]),
    ("sort --outp out.txt in.txt", 0, ["sort", "--output", "out.txt", "in.txt"]),
    ("tar -cf a.tar --checkpoint-act=exec=id src", 0,
     ["tar", "-cf", "a.tar", "--checkpoint-action=exec=id", "src"]),
    ("git reset --har", 0, ["git", "reset", "--hard"]),
    ("cp --target=dir a", 0, ["cp", "--target-directory=dir", "a"]),  # its own option first
    ("/usr/bin/env --chd=d ls", 0, ["/usr/bin/env", "--chdir=d", "ls"]),
    ("env sort --outp=x", 1, ["sort", "--output=x"]),  # the wrapped command, as itself
    ("env ls --chd=x", 1, ["ls", "--chd=x"]),  # not env's: ls takes no such option
    ("sort -- --outp", 0, ["sort", "--", "--outp"]),  # an operand after `--`
    ("tar --list -f a.tar", 0, ["tar", "--list", "-f", "a.tar"]),  # an option of its own
    ("tar --checkpoint=10 -cf a.tar src", 0, ["tar", "--checkpoint=10", "-cf", "a.tar", "src"]),
    ("pytest --override=addopts=-px", 0, ["pytest", "--override=addopts=-px"]),  # no prefixes
    ("git ls-files --stage", 0, ["git", "ls-files", "--stage"]),
])
def test_the_walk_writes_abbreviations_out(line: str, index: int, values: list[str]) -> None:
    assert _values(line, index) == values


def test_a_respelled_word_keeps_its_text_and_is_the_lines_word() -> None:
    a = analyze('grep --regex=environ -rn src')
    word = a.commands[0].argv[1]
    assert (word.text, word.value, word.literal) == ("--regex=environ", "--regexp=environ", True)
    assert word in a.words  # (the line's words are what its commands read)
    dynamic = analyze('env --chd="$D" rm f').commands[0].argv[1]
    assert (dynamic.value, dynamic.pattern, dynamic.literal) == ("--chdir=", "--chdir=*", False)
    # an option part that is not fixed text is left as it is (it could be any option)
    assert analyze("env --ch$X=d rm f").commands[0].argv[1].value == "--ch=d"


def test_spell_leaves_a_line_without_abbreviations_alone() -> None:
    args = tuple(literal_word(v) for v in ("-cf", "a.tar", "--create", "src"))
    problems: list[str] = []
    assert spelling.spell("tar", args, problems) is None
    assert spelling.spell("pytest", (literal_word("--override"),), problems) is None
    assert spelling.spell_argv("ls", (literal_word("ls"), literal_word("--col")), problems) \
        == ()
    assert problems == []


def test_what_the_rules_name_in_their_code_is_watched() -> None:
    # (read from the rules' code objects: `_collect`)
    assert {"--hard", "--open-files-in-pager", "--exec-path", "--include-untracked",
            "--output"} <= set(spelling.watched("git"))
    assert {"--chdir", "--split-string", "--ignore-environment"} <= set(spelling.watched("env"))
    assert {"--replace", "--arg-file"} <= set(spelling.watched("xargs"))
    assert {"--checkpoint-action", "--directory", "--extract"} <= set(spelling.watched("tar"))
    assert {"--target-directory", "--recursive"} <= set(spelling.watched("cp"))
    assert spelling.watched("pytest") == ()
    assert spelling.full_option("sort", "--compress") == "--compress-program"
    assert spelling.full_option("tar", "--checkpoint") is None  # (EXACT)
    assert spelling.full_option("tar", "--create") is None  # (no watched option starts so)


_LONG = re.compile(r"--[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]")


def _real_options(name: str) -> set[str] | None:
    exe = shutil.which(name)
    if exe is None:
        return None
    if name == "git":
        words = ("status", "reset", "checkout", "switch", "restore", "stash", "clean", "rm",
                 "grep", "log", "diff", "ls-files", "config", "commit", "rebase", "clone",
                 "fetch", "push", "format-patch", "difftool", "init", "archive", "branch")
        runs = [[exe, w, "--git-completion-helper"] for w in words]
    elif name in ("pip", "pip3"):
        runs = [[exe, w, "--help"] for w in ("install", "download", "wheel", "config", "list")]
    else:
        runs = [[exe, "--help"]]
    text = ""
    for argv in runs:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        text += r.stdout + r.stderr
    return set(_LONG.findall(re.sub(r"-\n\s+", "-", text)))  # (an option a line wraps)


def test_no_real_option_is_taken_for_an_abbreviation() -> None:
    """A program's own option that is a proper prefix of one statewright watches must be in
    `EXACT` (`tar --list` is not `--listed-incremental`), or `spell` would rewrite it."""
    checked = []
    wrong = []
    for name in sorted(spelling.ABBREVIATING):
        real = _real_options(name)
        if real is None:
            continue
        checked.append(name)
        watched = set(spelling.watched(name))
        for opt in sorted(real):
            if spelling.full_option(name, opt) is not None:
                wrong.append(f"{name} {opt} -> {spelling.full_option(name, opt)}")
    assert {"git", "tar", "sort", "cp", "env", "grep", "pip"} <= set(checked), checked
    assert not wrong, wrong
    assert watched  # (the last program checked watches some options)



def test_the_kept_table_is_what_the_rules_name_now() -> None:
    """`spelling._WATCHED` is what the rules name in their tables and code (else: run
    `python -m statewright.policy.programs.spelling`)."""
    assert spelling._WATCHED == spelling.watched_text(), \
        "stale: run `python -m statewright.policy.programs.spelling`"
    assert spelling.own_options("tar")[:2] == ("--absolute-names", "--after-date")
    assert spelling.own_options("tee") == () and spelling.own_options("ls") == ()


def test_an_abbreviation_of_several_options_is_a_problem() -> None:
    """The program refuses such a word itself, unless some of those options are not its own
    (then it is one of them, and which one the walk cannot know): refused, written as it is."""
    a = analyze("tar --ex -f a.tar")
    assert a.commands[0].argv[1].value == "--ex"
    assert a.problems == ("`tar --ex` abbreviates more than one option (--exclude, "
                          "--exclude-from, --extract): write the option out",)
    assert spelling.full_option("sudo", "--c") == ("--chdir", "--chroot", "--close-from",
                                                    "--command-timeout")
    # its own options first: one of them is the answer, whatever any program writes with
    assert spelling.full_option("git", "--ha") == "--hard"
