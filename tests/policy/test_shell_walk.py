"""The walk's own shortcuts (`policy.shell.walker`, `words`): node texts sliced from the line
(tree-sitter's offsets are bytes of UTF-8, a `str` is indexed by characters), and the Words of
plain bare words shared between lines."""

from __future__ import annotations

from statewright.policy.shell import analyze, redirects, walker, words
from statewright.policy.shell.records import Word


def _texts(line: str) -> list[str]:
    return [w.text for w in walker._analyze(line).words]


def test_node_texts_of_a_line_with_text_beyond_ascii() -> None:
    a = walker._analyze('echo "é $(printf ü)" > 日本.txt && ls -l über')
    assert [c.name for c in a.commands] == ["printf", "echo", "ls"]
    assert [w.value for w in a.commands[0].argv] == ["printf", "ü"]
    assert a.commands[1].text == 'echo "é $(printf ü)"'
    assert [r.target.value for r in a.redirects if r.target] == ["日本.txt"]
    assert a.commands[2].args[1].value == "über"
    # the same line in ASCII has its words at the same places
    ascii_line = 'echo "e $(printf u)" > ab.txt && ls -l uber'
    assert len(_texts(ascii_line)) == len(a.words)


def test_code_run_by_a_shell_is_sliced_from_its_own_text() -> None:
    # the inner code is parsed on its own: its offsets are its own, and the outer line's
    # slicing resumes after it (ASCII inside non-ASCII and the other way round)
    a = walker._analyze("sh -c 'echo ü; cat x' > é.txt")
    assert [c.text for c in a.commands] == ["sh -c 'echo ü; cat x'", "echo ü", "cat x"]
    assert [r.target.text for r in a.redirects if r.target] == ["é.txt"]
    a = walker._analyze("sh -c 'cat a > b' > é.txt; echo ö")
    assert [r.target.text for r in a.redirects if r.target] == ["é.txt", "b"]
    assert a.commands[-1].args[0].value == "ö"
    a = walker._analyze("sh -c 'cat ä > b' > e.txt; echo o")
    assert [r.target.text for r in a.redirects if r.target] == ["e.txt", "b"]
    assert [c.text for c in a.commands] == ["sh -c 'cat ä > b'", "cat ä", "echo o"]


def test_a_plain_bare_word_is_made_once_and_shared() -> None:
    walker._analyze("git status --short")  # (shared from the second line that holds it on)
    first = walker._analyze("git status --short")
    again = walker._analyze("git status --short && git log")
    assert first.commands[0].argv[0] is again.commands[0].argv[0]
    assert first.commands[0].argv[0] == Word("git", "git", "git", True)
    # words that are not plain bare words are never shared: they are made anew
    for line in ("echo 'a b'", "echo ~/x", "echo *.py", "echo {a,b}", "echo a\\ b", "echo $X"):
        w1, w2 = walker._analyze(line).commands[0].args[0], analyze(line).commands[0].args[0]
        assert w1 == w2
        assert w1.text not in words.WORD_CACHE


def test_the_shared_words_are_bounded() -> None:
    limit = words._PLAIN_MAX
    for i in range(limit + 10):
        walker._analyze(f"echo w{i}")
        walker._analyze(f"echo w{i}")
    assert 0 < len(words.WORD_CACHE) <= limit
    assert 0 < len(words._MET) <= limit
    assert walker._analyze("echo w1").commands[0].args[0] == Word("w1", "w1", "w1", True)


def test_a_line_nested_deeper_than_the_walk_can_follow_is_a_problem() -> None:
    # the depth at which Python's recursion limit stops the walk depends on the call stack
    # (and moved deeper when the walk made fewer calls per node): a line nested well within
    # it is analysed in full, one far beyond it is a problem, and check 5 refuses it
    def nested(n: int) -> str:
        return "echo " + "$(echo " * n + "x" + ")" * n

    a = walker._analyze(nested(100))
    assert a.ok and len(a.commands) == 101
    a = walker._analyze(nested(1000))
    assert "shell code nested too deeply to analyse" in a.problems
    from statewright.policy.shell import check_commands

    assert not check_commands(a, ("echo",)).allowed


def test_a_word_the_grammar_splits_at_an_expansion_is_one_word() -> None:
    # tree-sitter-bash reads `$D/$F.json` as `$D/$` and `F.json` (two arguments, the first
    # ending in a literal `$`), after any other part (`'a'/$F.c`, `` `x`/$F.c ``, `$(x)/$F.c`),
    # and an assignment's value likewise (`X=$A/$B.c env` ran `B.c`)
    for line, pattern in (("rm $D/$F.json", "*/*.json"), ("rm 'a'/$F.c", "a/*.c"),
                          ("rm `x`/$F.c", "*/*.c"), ("rm $(x)/$F.c", "*/*.c"),
                          ("rm $A/$B/$C/d/$E.x", "*/*/*/d/*.x"), ("rm a$X$Y*", "a***"),
                          ("rm $A/$1.c", "*/*.c"), ("rm 'w/'fl$@ow.json", "w/fl*ow.json"),
                          ("rm 'w'/$!x", "w/*x")):
        rm = next(c for c in analyze(line).commands if c.name == "rm")
        assert [a.pattern for a in rm.args] == [pattern], line
    a = analyze("X=$A/$B.c env")
    assert [c.name for c in a.commands] == ["env"]
    # a literal `$` stays one (`a$`, `\$B`, `'$B'`)
    for line, value in (("echo a$", "a$"), ("echo \\$B.c", "$B.c"), ("echo '$A/$B.c'", "$A/$B.c")):
        assert [w.value for w in analyze(line).commands[0].args] == [value], line


def test_words_after_a_redirection_target_are_arguments_of_the_command() -> None:
    # tree-sitter-bash gives every word after a redirection's target to the redirection; bash
    # passes them to the command (`echo a > f b c` prints `a b c`, `cat <<EOF FILE` reads FILE)
    a = analyze("echo a >f b 2>g c")
    assert [c.values() for c in a.commands] == [["echo", "a", "b", "c"]]
    assert [(r.op, r.target.value) for r in a.redirects if r.target] == [(">", "f"), (">", "g")]
    assert a.ok
    a = analyze("find . >/dev/null -exec rm -rf {} +")
    assert [c.values() for c in a.commands] == [
        ["find", ".", "-exec", "rm", "-rf", "{}", "+"], ["rm", "-rf", "{}"]]
    a = analyze("echo hi > out.txt $(rm -rf x)")
    assert [c.name for c in a.commands] == ["rm", "echo"]
    assert a.commands[1].args[1].dynamic
    a = analyze("cat <<EOF /proc/self/environ\nx\nEOF")
    assert [c.values() for c in a.commands] == [["cat", "/proc/self/environ"]]
    a = analyze("cat <<EOF > f b && rm x\nx\nEOF")
    assert [c.values() for c in a.commands] == [["cat", "b"], ["rm", "x"]]
    # after a compound command bash refuses them: walked all the same, and a problem
    a = analyze("{ ls; } > f $(rm x)")
    assert [c.name for c in a.commands] == ["ls", "rm"]
    assert a.problems == ("`$(rm x)` follows the target of a redirection, where no command "
                          "takes it as an argument",)
    assert analyze("pytest -q > out.txt 2>&1 # a comment").ok
    # a builtin that evaluates its operands finds them there too
    a = analyze("read 2>&1 d <<< /; let > x 'a[$(id)]'")
    assert [c.values() for c in a.commands] == [["read", "d"], ["let", "a[$(id)]"]]
    assert a.hidden_code and not a.ok


def _forget() -> None:
    walker._PLAIN_COMMANDS.clear()
    redirects._PLAIN_REDIRECTS.clear()


def test_commands_and_redirections_of_plain_words_kept_by_their_text_walk_as_anew() -> None:
    # `walker._PLAIN_COMMANDS` keeps the words of `git status`, `cat x` by their text, and
    # `redirects._PLAIN_REDIRECTS` the `Redirect` of `2>&1`, `> out.txt`: the analysis of a
    # line with them kept is the analysis made without them, in any context
    lines = ["git status --short", "cat", "cat a b", "echo a | cat a b", "x=1 cat a b",
             "cat a b > f", "cat a b <<< x", "cat a b <<EOF\nx\nEOF", "f() { cat a b; }; f",
             "sh -c 'cat a b'", "cd src && cat a b", "a=b c", "c a=b", "cat a#b", "cat a #b",
             "find . -exec cat a b {} +", "read x", "echo $(cat a b) `cat a b`", "cat a b &",
             "sudo cat a b", "cat  a b", "cat a\\\n b", "! cat a b", "[ cat a b ]",
             "if cat a b; then cat a b; fi", "cat a b 2>&1 c", "time cat a b", "cat a;b",
             "cat 2>&1", "cat a 2>&1 | cat", ">out.txt cat", "cat > out.txt 2>&1",
             "cat > out.txt b", "{ cat; } > out.txt", "cat <<EOF > out.txt\nx\nEOF",
             "cat >& 2", "cat >&-", "cat < out.txt", "cat > 'out.txt'", "cat > $out.txt",
             "cat > out.txt # c", "cat 2> &1", "sh -c 'cat 2>&1' 2>&1"]
    _forget()
    cold = [repr(walker._analyze(line)) for line in lines]
    assert walker._PLAIN_COMMANDS  # (some were kept)
    assert [repr(walker._analyze(line)) for line in lines] == cold
    for line, before in zip(lines, cold, strict=True):
        _forget()
        walker._analyze(line)
        assert repr(walker._analyze(line)) == before, line
    for line in lines:
        walker._analyze(line)
    kept = set(walker._PLAIN_COMMANDS)
    assert {"git status --short", "cat", "cat a b", "c a=b"} <= kept
    assert not any("#" in k or "\n" in k or "  " in k for k in kept)
    assert {"2>&1", "> out.txt", "< out.txt"} <= set(redirects._PLAIN_REDIRECTS)
    assert not {"> 'out.txt'", "> out.txt b"} & set(redirects._PLAIN_REDIRECTS)
