"""The CLI entry: the fast path and the typer path agree, errors have one form, completion works.
Every command line runs the installed `statewright` console script (or the same `main` with the
fast path switched off, `typer_only=True`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from statewright import __version__
from tests.cli.helpers import one_error_line, sw
from tests.conftest import bin_path, clean_env


def test_the_command_table_lists_exactly_the_commands_of_the_typer_app():
    from statewright.cli.app import app
    from statewright.cli.commands import all_modules, command_names, module_of
    from statewright.cli.full import load_commands

    load_commands([])  # every module
    registered = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert sorted(registered) == sorted(command_names())
    for name in command_names():  # and each is defined where the table says
        info = next((c for c in app.registered_commands if c.name == name), None)
        if info is not None:
            assert info.callback.__module__ == f"statewright.cli.{module_of(name)}", name
    assert len(all_modules()) == len(set(all_modules()))


@pytest.mark.parametrize("columns", ["80", "120", "60"])
def test_top_help_is_the_same_on_both_paths_and_lists_every_command(columns):
    from statewright.cli.commands import OPTIONS, command_names

    fast = sw("--help", COLUMNS=columns)
    bare = sw(COLUMNS=columns)
    short = sw("-h", COLUMNS=columns)
    typer_path = sw("--help", typer_only=True, COLUMNS=columns)
    assert fast.returncode == bare.returncode == short.returncode == typer_path.returncode == 0
    assert fast.stdout == bare.stdout == short.stdout == typer_path.stdout
    lines = fast.stdout.splitlines()
    assert all(len(line) <= int(columns) for line in lines)
    for name in command_names():
        assert any(line.startswith(f"  {name} ") for line in lines), name
    for opt, _help in OPTIONS:
        assert opt in fast.stdout


def test_top_level_options_of_the_typer_app_are_all_in_the_help():
    import typer

    from statewright.cli.app import app
    from statewright.cli.commands import OPTIONS

    group = typer.main.get_command(app)
    listed = " ".join(opt for opt, _ in OPTIONS)
    for param in group.params:
        for opt in param.opts:
            assert opt in listed, opt


def test_version_on_both_paths():
    assert sw("--version").stdout == f"statewright {__version__}\n"
    assert sw("--version", typer_only=True).stdout == f"statewright {__version__}\n"


FAST_FORMS = [
    ("status",),
    ("status", "--json"),
    ("status", "--session", "other", "--json"),
    ("status", "--session=other"),
    ("status", "-s", "other", "--json"),
    ("transition", "READY", "--data", '{"failing_test": "t1"}', "--json"),
    ("transition", "--json", "READY"),
    ("transition", "READY", "--expected-version", "99"),
    ("transition", "NOPE", "--json"),
    ("transition", "READY", "-d", "[1]"),
    ("transition", "READY", "--data", "{bad"),
]


@pytest.mark.parametrize("form", FAST_FORMS, ids=" ".join)
def test_fast_path_answers_exactly_as_the_typer_app(project, form):
    """Each form once through the console script (fast path) and once through typer alone, on
    two identical projects: same exit status, stdout and stderr."""
    import shutil

    twin = project.parent / "twin"
    shutil.copytree(project, twin)
    outs = []
    for root, typer_only in ((project, False), (twin, True)):
        assert sw("start", "tdd-feature", "--project", str(root)).returncode == 0
        p = sw(*form, "--project", str(root), typer_only=typer_only)
        outs.append((p.returncode, p.stdout.replace(str(root), "ROOT"),
                     p.stderr.replace(str(root), "ROOT")))
    # run ids differ between the two projects
    import re

    norm = [tuple(re.sub(r"run_[0-9a-f]+", "RUN", str(x)) for x in o) for o in outs]
    assert norm[0] == norm[1]
    assert "Traceback" not in outs[0][2]


def test_fast_path_imports_no_typer_rich_or_pydantic(project):
    sw("start", "tdd-feature", "--project", str(project))
    code = ("import sys; from statewright.cli import main\n"
            "for argv in (['--help'], ['--version'], ['status', '--project', sys.argv[1]],\n"
            "             ['transition', 'READY', '--project', sys.argv[1], '--json']):\n"
            "    assert main(argv) == 0, argv\n"
            "heavy = [m for m in ('typer', 'click', 'rich', 'pydantic', 'jsonschema', 'mcp')\n"
            "         if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    p = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True,
                       text=True, env=clean_env(), timeout=60)
    assert p.returncode == 0, p.stderr


def test_serve_on_stdio_answers_its_client_without_typer(project):
    """The MCP client starts `statewright serve` every session and waits for its first answer:
    the stdio form runs on the fast path (typer alone would be ~130 ms of that wait)."""
    code = ("import sys\n"
            "sys.argv = ['statewright', 'serve', '--project', sys.argv[1], '--connect-timeout', '5']\n"
            "from statewright.cli import main\n"
            "rv = main()\n"
            "heavy = [m for m in ('typer', 'rich') if m in sys.modules]\n"
            "sys.stderr.write('HEAVY %r RV %r\\n' % (heavy, rv))\n")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    p = subprocess.run([sys.executable, "-c", code, str(project)],
                       input=json.dumps(init) + "\n", capture_output=True, text=True,
                       env=clean_env(), timeout=120)
    answer = json.loads(p.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "statewright"
    assert "HEAVY [] RV 0" in p.stderr, p.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (("status", "--bogus"), "No such option: --bogus"),
    (("start",), "Missing argument"),
    (("frobnicate",), "No such command"),
    (("transition", "GO", "--expected-version", "x"), "--expected-version"),
    (("runs", "--limit", "-3"), "--limit"),
])
def test_usage_errors_are_one_line_with_a_code(tmp_path, args, needle):
    p = sw(*args, "--project", str(tmp_path))
    line = one_error_line(p, "USAGE")
    assert p.returncode == 2
    assert needle in line and "--help" in line
    assert "╭" not in p.stderr and "Usage:" not in p.stderr
    j = sw(*args, "--project", str(tmp_path), "--json")
    assert j.returncode == 2 and j.stdout == ""
    err = json.loads(j.stderr)
    assert err["error"]["code"] == "USAGE" and needle in err["error"]["message"]


@pytest.mark.parametrize(("args", "code"), [
    (("status",), "NO_ACTIVE_RUN"),
    (("history",), "NO_ACTIVE_RUN"),
    (("start", "no-such-workflow"), "UNKNOWN_WORKFLOW"),
    (("start", "tdd-feature", "--input", "[1]"), "INVALID_ARGUMENTS"),
    (("check", "Bash", "{"), "INVALID_ARGUMENTS"),
    (("show", "no-such-workflow"), "UNKNOWN_WORKFLOW"),
    (("show", "tdd-feature", "--bogus"), "USAGE"),
])
def test_every_error_is_json_under_json(project, args, code):
    one_error_line(sw(*args, "--project", str(project)), code)
    j = sw(*args, "--project", str(project), "--json")
    assert j.returncode != 0 and j.stdout == "", j
    err = json.loads(j.stderr)
    assert err["error"]["code"] == code and err["error"]["message"]


def test_completion_of_commands_and_options(tmp_path):
    env = {"_STATEWRIGHT_COMPLETE": "complete_bash", "COMP_WORDS": "statewright sta",
           "COMP_CWORD": "1"}
    p = sw(**env)
    assert p.returncode == 0 and set(p.stdout.split()) == {"start", "status"}
    p = sw(**{**env, "COMP_WORDS": "statewright history --", "COMP_CWORD": "2"})
    assert {"--limit", "--details", "--json", "--session"} <= set(p.stdout.split())


def test_completion_script_works_in_a_real_bash(tmp_path):
    """`eval "$(statewright --show-completion)"` in bash registers a completion that offers the
    commands, as a user's shell would."""
    script = (f'eval "$({bin_path("statewright")} --show-completion bash)"\n'
              "complete -p statewright\n"
              "COMP_WORDS=(statewright val); COMP_CWORD=1\n"
              "_statewright_completion statewright val statewright\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       env=clean_env(PATH=f"{bin_path('statewright').rsplit('/', 1)[0]}:"
                                     f"{clean_env()['PATH']}"), timeout=60)
    assert p.returncode == 0, p.stderr
    assert "_statewright_completion" in p.stdout and "validate" in p.stdout.split()


def test_install_completion_writes_to_the_users_bash_config(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    # (`; exit $?`: bash stays the command's parent, as in a user's terminal, rather than
    # exec-ing it; typer finds the shell among the command's ancestors, and a pytest whose own
    # ancestors hold none, started in the background and orphaned, would leave it none)
    p = subprocess.run(["bash", "-c", f"{bin_path('statewright')} --install-completion bash; "
                        "exit $?"],
                       capture_output=True, text=True, env=clean_env(HOME=str(home)), timeout=60)
    assert p.returncode == 0, p.stderr
    assert "completion installed" in p.stdout
    assert (home / ".bash_completions" / "statewright.sh").is_file()
    assert ".bash_completions/statewright.sh" in (home / ".bashrc").read_text()
