"""What the hook's path reads by hand rather than with `re` or `shlex` (a hook process would pay
for compiling a pattern or importing `shlex` on every line that needs one) gives the answers
the pattern or `shlex` gives."""

from __future__ import annotations

import re
import shlex

import pytest

from statewright.policy.programs import _variable_first
from statewright.policy.programs.python import PYTHON, _python_family
from statewright.policy.shell.env import _is_name, _quote

NAMES = ["python", "python3", "python3.12", "pypy3", "py", "python3-dbg", "python3.11_dbg",
         "pythondbg", "pytest", "py.test", "ipython", "pythonw", "pyright", "python-", "pyp",
         "python3.x", "pypy", "python_", "pydbg", "python3-", "pypy3.10-dbg", "pyenv"]


@pytest.mark.parametrize("base", NAMES)
def test_python_names(base: str) -> None:
    assert _python_family(base) is (re.fullmatch(PYTHON.name_pattern or "", base) is not None)


@pytest.mark.parametrize("text", ["$f", '"$f"', "${x}", "$(cmd)", '"$(x)"', "$", "x$f", "$@",
                                  "$1", '"', "$-", "$?x"])
def test_variable_first(text: str) -> None:
    assert _variable_first(text) is (re.match(r'"?\$(?:[A-Za-z_0-9@*#?]|\{)', text) is not None)


@pytest.mark.parametrize("s", ["", "abc", "a b", "it's", "x$y", "é", "a/b-c.d", "a;b", "-x", "~",
                               "a\nb", "%+=:,./@_"])
def test_quote(s: str) -> None:
    assert _quote(s) == shlex.quote(s)


@pytest.mark.parametrize("n", ["A", "_a1", "1a", "a-b", "é", "AWS_SECRET", "", "a b"])
def test_names(n: str) -> None:
    assert _is_name(n) is (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) is not None)


def test_tree_sitter_loads_without_re_and_its_queries_still_match() -> None:
    """The parser's extension keeps `re.compile` for its queries' `#match?`; the hook loads it
    with a stand-in (`lean.load_extension(defer=...)`), which imports `re` when first called."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from statewright.policy.shell.parser import bash_parser\n"
        "p = bash_parser()\n"
        "assert 're' not in sys.modules, 'the parser imported re'\n"
        "from statewright.lean import load_extension\n"
        "import tree_sitter_bash\n"
        "core = load_extension('tree_sitter')\n"
        "q = core.Query(core.Language(tree_sitter_bash.language()),"
        " '((word) @w (#match? @w \"^x\"))')\n"
        "caps = core.QueryCursor(q).captures(p.parse(b'xa yb xc').root_node)\n"
        "print(sorted(n.text.decode() for n in caps['w']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['xa', 'xc']"
