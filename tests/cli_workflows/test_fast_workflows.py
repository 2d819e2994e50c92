"""`statewright list` and `validate` answered from remembered verdicts (the fast path, no
validator loaded) print the same bytes as the typer commands that validate every file; what is
remembered can only ever say "this exact content was valid", and nothing that runs or enforces
a workflow reads it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, bin_path, clean_env

GOOD = {"id": "good", "initial": "a", "states": {
    "a": {"allowed_tools": ["Read"], "on": {"GO": "d"}}, "d": {"type": "final"}}}
# every problem at once: two bad targets and a bad type
BAD = {"id": "bad", "initial": "a", "states": {
    "a": {"on": {"GO": "nowhere", "BACK": "gone"}, "max_edit_lines": "ten"},
    "d": {"type": "final"}}}
PARENT = {"id": "parent", "initial": "a", "states": {
    "a": {"on": {"GO": {"invoke": "kid", "on_complete": "d"}}}, "d": {"type": "final"}}}
KID = {"id": "kid", "initial": "a", "states": {"a": {"on": {"OK": "d"}}, "d": {"type": "final"}}}

# Runs the installed CLI's `main` in a real process and says which path answered it (the
# typer app is imported only when the fast path handed the command line over).
_DRIVER = ("import sys\nfrom statewright.cli import main\nrc = main(sys.argv[2:])\n"
           "open(sys.argv[1], 'w').write('slow' if 'typer' in sys.modules else 'fast')\n"
           "sys.exit(rc)\n")


def cli(root: Path, *args: str, **env: str) -> tuple[str, subprocess.CompletedProcess[bytes]]:
    """(which path answered, the process) of `statewright ARGS` in `root`."""
    flag = root / ".path-taken"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(flag), *args], capture_output=True,
                       cwd=root, env=clean_env(**{"COLUMNS": "100", **env}), timeout=120)
    assert b"Traceback" not in p.stderr and b"INTERNAL" not in p.stderr, p.stderr
    return flag.read_text(), p


def same(a: subprocess.CompletedProcess[bytes], b: subprocess.CompletedProcess[bytes]) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".statewright").mkdir()  # a project with a store: verdicts are kept there
    (root / "workflows" / "good.json").write_text(json.dumps(GOOD))
    return root


def verdicts(root: Path) -> list[str]:
    d = root / ".statewright" / "validated"
    return sorted(os.listdir(d)) if d.is_dir() else []


CASES = [
    ["list"], ["list", "--json"],
    ["validate", str(EXAMPLES)], ["validate", str(EXAMPLES), "--json"],
    ["validate", str(EXAMPLES), "--strict"],  # the shipped examples' warnings fail it
    ["validate", "workflows/good.json", "--json", "--strict"],
    # missing files beside valid ones: exit 2, one line each, after the others were checked
    ["validate", "nope.json", "workflows", "missing/"],
    ["validate", "nope.json", "workflows", "--json"],
]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_remembered_answers_are_the_validators_bytes(project: Path, args: list[str]) -> None:
    first_path, first = cli(project, *args)
    assert first_path == "slow" and verdicts(project)  # validated, and remembered
    again_path, again = cli(project, *args)
    assert again_path == "fast"
    same(first, again)
    for env in ({"FORCE_COLOR": "1"}, {"COLUMNS": "50"}):  # colours and narrow terminals too
        for entry in verdicts(project):
            (project / ".statewright" / "validated" / entry).unlink()
        slow_path, slow = cli(project, *args, **env)
        fast_path, fast = cli(project, *args, **env)
        assert (slow_path, fast_path) == ("slow", "fast")
        same(slow, fast)


def test_shipped_examples_list_as_shipped(project: Path) -> None:
    cli(project, "list")
    path, p = cli(project, "list", COLUMNS="200")
    assert path == "fast" and b"tdd-feature.json (shipped)" in p.stdout
    assert b"workflows/good.json" in p.stdout and b"site-packages" not in p.stdout


def test_invalid_files_are_never_remembered_and_always_name_every_problem(project: Path) -> None:
    bad = project / "workflows" / "bad.json"
    bad.write_text(json.dumps(BAD))
    for args in (["validate", str(bad)], ["validate", str(bad), "--json"], ["list"],
                 ["list", "--json"]):
        runs = [cli(project, *args) for _ in range(2)]
        assert [path for path, _ in runs] == ["slow", "slow"]  # the validator ran both times
        same(runs[0][1], runs[1][1])
    report = json.loads(cli(project, "validate", str(bad), "--json")[1].stdout)
    pointers = {d["pointer"] for d in report["files"][0]["diagnostics"]}
    assert {"/states/a/on/GO", "/states/a/on/BACK", "/states/a/max_edit_lines"} <= pointers
    key_of_bad = _key(bad.read_bytes())
    assert key_of_bad not in verdicts(project)


def test_a_changed_byte_is_validated_again(project: Path) -> None:
    f = project / "workflows" / "good.json"
    cli(project, "validate", str(f))
    assert cli(project, "validate", str(f))[0] == "fast"
    f.write_text(json.dumps(BAD).replace('"bad"', '"good"'))
    path, p = cli(project, "validate", str(f))
    assert path == "slow" and p.returncode == 1 and b"nowhere" in p.stdout


def test_what_an_invoke_finds_is_part_of_the_verdict(project: Path) -> None:
    d = project / "flows"
    d.mkdir()
    (d / "parent.json").write_text(json.dumps(PARENT))
    (d / "kid.json").write_text(json.dumps(KID))
    assert cli(project, "validate", str(d))[1].returncode == 0
    assert cli(project, "validate", str(d))[0] == "fast"
    (d / "kid.json").unlink()  # the same parent bytes, but the workflow it invokes is gone
    path, p = cli(project, "validate", str(d / "parent.json"))
    assert path == "slow" and p.returncode == 1 and b"unknown-workflow" in p.stdout


def _key(content: bytes, context: str = "") -> str:
    from statewright.definition.verdicts import verdict_key

    return verdict_key(content, context)


def test_a_forged_verdict_says_at_most_valid_and_start_never_reads_it(project: Path) -> None:
    """An agent that could write the store (self-protection refuses it: tests/security) and
    computed the key: an entry that claims errors, or anything but warnings, is no verdict;
    one that says an invalid file was valid is printed by `validate`, but `start` validates
    the file itself and refuses it."""
    bad = project / "workflows" / "bad.json"
    bad.write_text(json.dumps(BAD))
    store = project / ".statewright" / "validated"
    store.mkdir()
    key = _key(bad.read_bytes())
    for body in ('[{"severity": "error", "pointer": "", "message": "m", "code": "c"}]',
                 '{"ok": true}', '[{"severity": "warning"}]', "not json"):
        (store / key).write_text(body)
        path, p = cli(project, "validate", str(bad))
        assert path == "slow" and p.returncode == 1 and b"nowhere" in p.stdout
    (store / key).write_text("[]")
    assert cli(project, "validate", str(bad))[0] == "fast"  # (a display, nothing more)
    started = subprocess.run([bin_path("statewright"), "start", "bad"], capture_output=True,
                             text=True, cwd=project, env=clean_env(), timeout=120)
    assert started.returncode == 1 and "INVALID_WORKFLOW" in started.stderr, started.stderr
    assert "nowhere" in started.stderr


def test_verdicts_are_never_trusted_across_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    import statewright
    from statewright.definition import verdicts

    monkeypatch.setattr(verdicts, "_fingerprint", [])
    before = verdicts.verdict_key(b"{}", "")
    monkeypatch.setattr(verdicts, "_fingerprint", [])
    monkeypatch.setattr(statewright, "__version__", statewright.__version__ + ".post1")
    assert verdicts.verdict_key(b"{}", "") != before
    assert verdicts.verdict_key(b"{} ", "") != verdicts.verdict_key(b"{}", "")
    assert verdicts.verdict_key(b"{}", "x") != verdicts.verdict_key(b"{}", "")
    assert len(before) == len(hashlib.sha256().hexdigest())


def test_read_only_commands_create_no_store(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / "workflows").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "workflows" / "good.json").write_text(json.dumps(GOOD))
    for args in (["list"], ["validate", "workflows"]):
        for _ in range(2):
            path, p = cli(root, *args)
            assert path == "slow" and p.returncode == 0
    assert not (root / ".statewright").exists()
