"""Path resolution and the caches of the hot path: same answers as the slow way, and nothing
cached that a later tool call could change on disk (a symlink made by one call is seen by the
next)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.policy.paths import real_path

from .corpus import REALISTIC_STATE, attacks, legit

_NAMES = ["a", "b", "lnk", "dang", "loop", "file", "..", ".", "x", "up", "", "back", "abs"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    r = os.path.realpath(tmp_path_factory.mktemp("tree"))
    os.makedirs(f"{r}/a/b")
    open(f"{r}/file", "w").close()
    os.symlink(f"{r}/a/b", f"{r}/lnk")  # absolute link to a directory
    os.symlink("a/b/nofile", f"{r}/dang")  # dangling
    os.symlink("loop", f"{r}/loop")  # a loop
    os.symlink("a/b/../..", f"{r}/up")  # relative link with `..`
    os.symlink("../..", f"{r}/a/b/back")
    os.symlink("/", f"{r}/abs")
    return r


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5),
       root_kind=st.sampled_from(["none", "top", "a"]))
def test_real_path_is_realpath(tree, parts, root_kind):
    p = tree + "/" + "/".join(parts)
    root = {"none": None, "top": tree, "a": tree + "/a"}[root_kind]
    assert real_path(p, root) == os.path.realpath(p)


@pytest.fixture
def proj(tmp_path):
    root = tmp_path / "proj"
    (root / ".statewright").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("a\n")
    (root / "workflows").mkdir()
    (root / "workflows" / "flow.json").write_text("{}")
    return root


def _ctx(root):
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       protected_files=frozenset({str(root / "workflows" / "flow.json")}),
                       events=("DONE",))


def test_symlink_made_between_two_calls_is_seen(proj):
    ctx = _ctx(proj)
    state = State(name="s", allowed_commands=("echo",))
    edit = ToolCall("Write", {"file_path": "src/notes.txt", "content": "x"})
    bash = ToolCall("Bash", {"command": "echo hi > src/notes.txt"})
    assert gate(state, Counters(), edit, ctx).allowed
    assert gate(state, Counters(), bash, ctx).allowed
    # the agent swaps `src` for a link into the store, then tries the very same calls again
    (proj / "src" / "app.py").unlink()
    (proj / "src").rmdir()
    os.symlink(proj / ".statewright", proj / "src")
    d = gate(state, Counters(), edit, ctx)
    assert not d.allowed and d.rule == "self_protection"
    d = gate(state, Counters(), bash, ctx)
    assert not d.allowed and d.rule == "self_protection"


def test_link_to_a_protected_workflow_made_later_is_seen(proj):
    ctx = _ctx(proj)
    free = State(name="free")
    call = ToolCall("Write", {"file_path": "notes/flow.json", "content": "{}"})
    assert gate(free, Counters(), call, ctx).allowed
    os.symlink(proj / "workflows", proj / "notes")
    d = gate(free, Counters(), call, ctx)
    assert not d.allowed and d.rule == "self_protection"


def test_files_follow_links_made_later(proj):
    ctx = _ctx(proj)
    state = State(name="s", max_files_per_state=5)
    call = ToolCall("Edit", {"file_path": "alias/app.py", "old_string": "a", "new_string": "b"})
    assert gate(state, Counters(), call, ctx).files == ("alias/app.py",)
    os.symlink(proj / "src", proj / "alias")
    assert gate(state, Counters(), call, ctx).files == ("src/app.py",)


def test_cd_into_a_directory_then_touching_a_protected_file(proj):
    """Self-protection follows literal `cd`s, even in a state with no command rules."""
    ctx = _ctx(proj)
    free = State(name="free")
    for line in ("cd workflows && rm flow.json", "cd workflows; mv flow.json x.json",
                 "cd src && cd ../workflows && cp /tmp/x flow.json",
                 "cd $D && rm flow.json"):
        d = gate(free, Counters(), ToolCall("Bash", {"command": line}), ctx)
        assert not d.allowed and d.rule == "self_protection", line
    assert gate(free, Counters(), ToolCall("Bash", {"command": "cd src && rm app.py"}),
                ctx).allowed


def test_repeated_decisions_agree_with_the_first(proj):
    """The per-line caches (analysis, verdicts) give the same decision the second time."""
    ctx = _ctx(proj)
    lines = attacks()[::3] + legit()
    first = [gate(REALISTIC_STATE, Counters(), ToolCall("Bash", {"command": ln}), ctx)
             for ln in lines]
    again = [gate(REALISTIC_STATE, Counters(), ToolCall("Bash", {"command": ln}), ctx)
             for ln in lines]
    for ln, a, b in zip(lines, first, again, strict=True):
        assert (a.allowed, a.rule, a.reason, a.explanation, a.files) == \
               (b.allowed, b.rule, b.reason, b.explanation, b.files), ln


def test_same_line_different_working_directory(proj):
    """Cached verdicts are per line; whatever depends on the directory is decided each time."""
    ctx = _ctx(proj)
    state = State(name="s", allowed_commands=("echo",))
    call_root = ToolCall("Bash", {"command": "echo x > flow.json"})
    call_wf = ToolCall("Bash", {"command": "echo x > flow.json"}, cwd=str(proj / "workflows"))
    assert gate(state, Counters(), call_root, ctx).allowed
    d = gate(state, Counters(), call_wf, ctx)
    assert not d.allowed and d.rule == "self_protection"
    assert gate(state, Counters(), call_root, ctx).allowed


def test_glob_match_without_re_agrees_with_the_compiled_glob() -> None:
    """`glob_match` matches common patterns segment by segment (no `re` import in a hook that
    watches files); it must say exactly what the regular expression of `compile_glob` says."""
    import random

    from statewright.policy.paths import compile_glob, glob_match

    rng = random.Random(13)
    checked = 0
    for chars, path_chars in (("ab*?/.", "ab/."), ("a*/", "a/"), ("ab*?/", "ab/")):
        for _ in range(20_000):
            pattern = "".join(rng.choice(chars) for _ in range(rng.randint(1, 8)))
            path = "".join(rng.choice(path_chars) for _ in range(rng.randint(0, 8)))
            if pattern.endswith("/") or pattern.startswith("./"):
                continue
            assert glob_match(pattern, path) == (compile_glob(pattern).match(path) is not None), (
                pattern, path)
            checked += 1
    for pattern, path, expected in [
            ("**/*.env*", ".env", True), ("**/*.env*", "a/b/.env.local", True),
            ("*.js", "src/app.js", False), ("*.js", "app.js", True), ("src/**", "src", False),
            ("src/**", "src/a/b.py", True), ("config/**/*.yml", "config/app.yml", True)]:
        assert glob_match(pattern, path) is expected, (pattern, path)
    assert checked > 40_000


def test_name_filter_passes_every_name_a_matched_path_ends_in() -> None:
    """A walk skips a file its name filter rejects: the filter (equality, a start and an end,
    or the segment match) must pass every file name the pattern's paths end in."""
    import random

    from statewright.policy.paths import glob_match, name_filter

    rng = random.Random(7)
    checked = 0
    for _ in range(30_000):
        pattern = "".join(rng.choice("ab*?./") for _ in range(rng.randint(1, 7)))
        name = "".join(rng.choice("ab.") for _ in range(rng.randint(1, 6)))
        quick = name_filter(pattern)
        if quick is None or pattern.endswith("/"):
            continue
        for path in (name, f"a/{name}", f"b/a/{name}"):
            if glob_match(pattern, path):
                assert quick(name), (pattern, name)
                checked += 1
        last = pattern.rsplit("/", 1)[-1].replace("**", "*")
        if "*" not in last and "?" not in last:  # a literal name: nothing else passes
            assert quick(name) == (name == last), (pattern, name)
    assert checked > 1_000
    assert name_filter("**/conftest.py")("conftest.py") and \
        not name_filter("**/conftest.py")("conftest.pyc")
    assert name_filter("src/*.py")("a.py") and not name_filter("src/*.py")("a.pyc")
    assert name_filter("test_*")("test_") and not name_filter("ab*ba")("aba")
