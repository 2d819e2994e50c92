"""The policy layer's import diet (docs/hooks.md "Start-up cost"): every `statewright-hook`
process imports it, so a decision imports only what it needs. And the cheaper replacements
(records instead of dataclasses, the C LRU cache without `functools`, the store-name check
without a regex, the tree-sitter C extensions loaded without their packages' `__init__`)
give the same answers as what they replace."""

from __future__ import annotations

import json
import os
import pickle
import re
import shlex
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.lean import FrozenInstanceError, LazyRe, load_extension
from statewright.policy import protect, shell
from statewright.policy.protect import store as _store_module  # noqa: F401  (protect.store)
from statewright.policy.shell import (
    Command,
    Redirect,
    ShellAnalysis,
    Verdict,
    Word,
    commands,
    walker,
    words,
)
from statewright.sandbox.launcher import unwrap

from .corpus import attacks, legit

# a decision in a fresh interpreter, reporting the modules it imported
_DECIDE = textwrap.dedent("""
    import os, sys, json
    before = set(sys.modules)
    {prelude}
    from statewright.definition.compiled import State
    from statewright.policy import Counters, GateContext, ToolCall, gate
    root = sys.argv[1]
    ctx = GateContext(project_root=root, store_dir=os.path.join(root, ".statewright"),
                      read_text=lambda p: open(p).read() if os.path.exists(p) else None)
    state = State(name="s", allowed_tools=("Read", "Write", "Bash", "Glob"),
                  allowed_commands=("pytest", "git status", "tee"), blocked_env=("SECRET",))
    call = ToolCall(*json.loads(sys.argv[2]))
    d = gate(state, Counters(), call, ctx)
    print(json.dumps({{"allowed": d.allowed, "reason": d.reason,
                      "updated": d.updated_input,
                      "modules": sorted(set(sys.modules) - before)}}))
""")


def _decide(root: str, tool: str, args: dict, prelude: str = "") -> dict:
    r = subprocess.run([sys.executable, "-c", _DECIDE.format(prelude=prelude), root,
                        json.dumps([tool, args])], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    r = os.path.realpath(tmp_path_factory.mktemp("imports"))
    os.makedirs(os.path.join(r, "src"))
    os.makedirs(os.path.join(r, ".statewright"))
    with open(os.path.join(r, "src", "app.py"), "w") as f:
        f.write("a = 1\nb = 2\n")
    return r


#: never imported by a non-shell decision (dataclasses: ~14 ms; typing: ~10 ms with re,
#: enum and contextlib; difflib: only for a Write's diff; tree-sitter: only for shell lines)
_NOT_FOR_A_READ = {"dataclasses", "typing", "difflib", "tree_sitter", "tree_sitter_bash",
                   "re", "enum", "fnmatch", "shlex", "inspect", "importlib.resources",
                   "statewright.policy.shell"}


def test_a_read_decision_imports_no_dataclasses_typing_difflib_or_tree_sitter(root):
    out = _decide(root, "Read", {"file_path": os.path.join(root, "src", "app.py")})
    assert out["allowed"], out
    mods = set(out["modules"])
    assert "statewright.policy.gate" in mods  # the real path was taken
    bad = sorted(m for m in mods if m in _NOT_FOR_A_READ or m.split(".")[0] in
                 ("tree_sitter", "tree_sitter_bash"))
    assert not bad, f"a Read decision imports {bad}"


def test_a_refused_read_of_the_store_needs_no_regex_either(root):
    out = _decide(root, "Read", {"file_path": "src/../.StateWright/state.db"})
    assert not out["allowed"] and "store" in out["reason"]
    assert not set(out["modules"]) & _NOT_FOR_A_READ


def test_a_write_over_an_existing_file_imports_difflib_and_nothing_of_the_shell(root):
    out = _decide(root, "Write", {"file_path": os.path.join(root, "src", "app.py"),
                                  "content": "a = 1\nb = 3\n"})
    assert out["allowed"], out
    mods = set(out["modules"])
    assert "difflib" in mods  # the "lines that differ" of a Write
    assert not mods & {"dataclasses", "typing", "tree_sitter", "statewright.policy.shell"}


def test_a_bash_decision_loads_the_grammar_without_the_packages_init(root):
    out = _decide(root, "Bash", {"command": "pytest -q && git status | tee out.log"})
    assert out["allowed"], out
    # blocked variables unset; git hardened against planted repositories (escape class 5); the
    # whole under the kernel sandbox
    cmd = unwrap(out["updated"]["command"])
    assert cmd is not None
    assert cmd.startswith("unset SECRET; export GIT_CONFIG_COUNT=2")
    assert cmd.endswith("\npytest -q && git status | tee out.log")
    mods = set(out["modules"])
    assert {"tree_sitter._binding", "tree_sitter_bash._binding"} <= mods
    # the packages' __init__ (typing; importlib.resources) were not run
    assert not mods & {"tree_sitter", "tree_sitter_bash", "typing", "importlib.resources",
                       "dataclasses"}, sorted(mods)


def test_a_bash_decision_falls_back_to_the_plain_import(root):
    """Any failure of the direct load (here: it raises) falls back to `import tree_sitter_bash`
    with the same decisions."""
    prelude = ("import statewright.policy.shell.parser as s\n"
               "def boom(pkg): raise OSError('no direct load')\n"
               "s.load_extension = boom")
    line = "pytest -q && git status | tee out.log"
    out = _decide(root, "Bash", {"command": line}, prelude)
    assert out["allowed"], out
    assert {"tree_sitter", "tree_sitter_bash"} <= set(out["modules"])
    refused = _decide(root, "Bash", {"command": "cat .statewright/state.db | tee x"}, prelude)
    assert not refused["allowed"] and "store" in refused["reason"]


def test_direct_and_imported_grammar_parse_the_corpus_identically():
    """Both paths in one fresh interpreter: the direct load first, then the packages imported
    on top of it (which must reuse the extensions already loaded), then a parser built from
    the packages' own objects: the same trees for every corpus line."""
    code = textwrap.dedent("""
        import sys, json
        from statewright.lean import load_extension
        from statewright.policy.shell import parser
        lines = json.loads(sys.stdin.read())
        direct = parser.bash_parser()
        assert "tree_sitter" not in sys.modules and "tree_sitter_bash" not in sys.modules
        a = [str(direct.parse(l.encode("utf-8", "surrogatepass")).root_node) for l in lines]
        binding = sys.modules["tree_sitter_bash._binding"]
        import tree_sitter, tree_sitter_bash
        # the packages' __init__ reuse the extensions loaded (registered under their names)
        assert tree_sitter_bash.language is binding.language
        assert tree_sitter.Parser is type(direct)
        p = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        b = [str(p.parse(l.encode("utf-8", "surrogatepass")).root_node) for l in lines]
        assert a == b
        # with the packages imported, the loader hands back what they imported
        assert load_extension("tree_sitter_bash") is binding
        print(len(a))
    """)
    lines = attacks() + legit()
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(lines), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == len(lines) > 100


def test_binding_loader_refuses_a_package_it_cannot_find(monkeypatch):
    monkeypatch.delitem(sys.modules, "no_such_pkg_sw._binding", raising=False)
    with pytest.raises(ImportError):
        load_extension("no_such_pkg_sw")


# -- the cheaper replacements give the same answers -------------------------------------------

_STORES = ["/p/.statewright", "/p/.Statewright/", "/p/store", "/p/st-ore.x", "/p/ſtore",
           "/tmp/sw home/.statewright", "relative/.statewright", "/"]
_TEXT = st.lists(st.sampled_from([*"sSaAtTeEwWrRiIgGhHdDbB.-_/ 0xſKıİ",
                                  "state.db", ".statewright", "store", "STATE.DB"]),
                 max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(store=st.sampled_from(_STORES), pre=_TEXT, post=_TEXT,
       mid=st.sampled_from(["", "state.db", ".statewright", "/p/store", "ſtate.db",
                            "xstate.db", "-state.db", "/state.db", "STORE"]))
def test_store_markers_match_the_regular_expression(store, pre, post, mid):
    text = pre + mid + post
    assert protect.StoreMarkers(store).search(text) == (
        protect.store._marker_re(store).search(text) is not None), (store, text)


def test_store_markers_on_known_cases():
    m = protect.StoreMarkers("/p/.statewright")
    assert m.search("cat /p/.STATEWRIGHT/x") and m.search("state.db") and m.search("a/state.db")
    assert not m.search("mystate.db") and not m.search("x_state.db") and not m.search("ok.txt")
    assert m.search("ſtate.db") == (protect.store._marker_re("/p/.statewright").search("ſtate.db")
                                    is not None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(commands._PLAIN_PREFIX_CHARS)), max_size=30))
def test_plain_prefix_tokens_are_shlex_split(prefix):
    assert commands._prefix_tokens(prefix) == tuple(shlex.split(prefix))


@pytest.mark.parametrize("prefix", ['git commit -m "x y"', "echo 'a b'", "a\\ b c", 'bad "quote',
                                    "tab\tsep", "x # y"])
def test_other_prefixes_still_use_shlex(prefix):
    try:
        want = tuple(shlex.split(prefix))
    except ValueError:
        want = tuple(prefix.split())
    assert commands._prefix_tokens(prefix) == want


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab$`\"\\\n \x00é\ud800\udfff")), max_size=20))
def test_surrogate_check_and_double_quote_unescape_are_unchanged(text):
    assert shell.has_surrogate(text) == bool(re.search("[\ud800-\udfff]", text))
    want = re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)
    assert words._unescape_double(text) == want


@settings(max_examples=200, deadline=None)
@given(names=st.lists(st.text(alphabet=st.sampled_from(list("AZ_az09-.é ")), max_size=6),
                      max_size=4),
       overrides=st.dictionaries(st.text(alphabet=st.sampled_from(list("AB_9-")), max_size=4),
                                 st.text(max_size=6), max_size=3))
def test_rewrite_for_env_quotes_as_shlex_does(names, overrides):
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    parts = []
    ok = [n for n in names if ident.fullmatch(n)]
    if ok:
        parts.append("unset " + " ".join(shlex.quote(n) for n in ok))
    parts += [f"export {k}={shlex.quote(str(v))}" for k, v in overrides.items()
              if ident.fullmatch(k)]
    want = "; ".join(parts) + "\ncmd" if parts else "cmd"
    assert shell.rewrite_for_env("cmd", names, overrides) == want


def test_lazy_re_compiles_on_first_use():
    rx = LazyRe(r"(?i)a(b)")
    assert rx._rx is None
    assert rx.search("xAB").group(1) == "B" and rx.match("ab") and rx.fullmatch("AB")
    assert rx.sub("-", "abab") == "--" and rx.split("1ab2") == ["1", "b", "2"]


def test_shell_records_keep_the_dataclass_behaviour():
    w = Word("a", "a", "a", True)
    assert w == Word(text="a", value="a", pattern="a", literal=True, dynamic=False)
    assert (w.dynamic, w.glob, w.tilde) == (False, False, False)
    assert hash(w) == hash(Word("a", "a", "a", True)) and w != Word("a", "a", "a", False)
    with pytest.raises(FrozenInstanceError):
        w.value = "b"
    with pytest.raises(AttributeError):
        w.other = 1  # __slots__
    c = Command(argv=(w, Word("-x", "-x", "-x", True)), text="a -x")
    assert (c.name, c.name_literal, c.args, c.context, c.kind, c.parent) == (
        "a", True, (c.argv[1],), "top", "simple", None)
    c2 = c.replace(parent=3, offset=1)
    assert (c2.parent, c2.offset, c2.argv) == (3, 1, c.argv) and c.parent is None
    r = Redirect(op=">", fd=None, target=w, output=True)
    a = ShellAnalysis(source="a -x > a", commands=(c,), redirects=(r,))
    assert a.ok and a.functions == frozenset() and not a.changes_dir
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(Verdict(True)) == "Verdict(allowed=True, reason='', trace=())"
    match a:
        case ShellAnalysis(src, (Command(argv=(Word(value="a"), *_)),)):
            assert src == "a -x > a"
        case _:
            raise AssertionError("no match")


def test_analysis_of_the_corpus_is_deterministic_and_hashable():
    for line in (attacks() + legit())[::7]:
        a, b = walker._analyze(line), walker._analyze(line)
        assert a == b and hash(a) == hash(b)
