"""The official MCP Inspector CLI (npm @modelcontextprotocol/inspector 2.12.0, on Node 22 from
tests/npm-node22) against a real `statewright serve`, over stdio and over streamable HTTP:
tools/list (with `--strict`, its schema portability report; handshake era and 2026 era),
tools/call of a forwarded tool
and of one of statewright's own tools."""

from __future__ import annotations

import json

import pytest

from .harness import (
    INSPECTOR_JS,
    ServeHttp,
    bin_path,
    everything_server,
    fs_server,
    make_project,
    node22,
)
from .workflows import SIMPLE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_inspector")]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspector") / "proj"
    make_project(root, {"fs": fs_server(root), "every": everything_server()}, {"simple": SIMPLE})
    return root


@pytest.fixture(scope="module")
def http(project):
    with ServeHttp(project) as server:
        yield server


@pytest.fixture(params=["stdio", "http"])
def target(request, project) -> list[str]:
    """The Inspector's arguments naming the server, for each transport."""
    if request.param == "stdio":
        return [bin_path("statewright"), "serve", "--project", str(project)]
    server = request.getfixturevalue("http")
    return ["--transport", "http", "--server-url", server.url]


def inspect(target: list[str], *args: str, home) -> tuple[int, dict, str]:
    # a generous connect timeout (default 15 s): a loaded 2-core machine starts Python slowly
    cp = node22(INSPECTOR_JS, "--cli", "--connect-timeout", "120000", *target, *args,
                "--format", "json", home=home, timeout=240)
    out = cp.stdout.strip().splitlines()
    return cp.returncode, (json.loads(out[-1]) if out else {}), cp.stderr


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_tools_list_is_portable_under_strict(target, era, tmp_path):
    rc, answer, err = inspect(target, "--protocol-era", era, "--method", "tools/list",
                              "--strict", home=tmp_path)
    assert rc == 0, err
    names = {t["name"] for t in answer["result"]["tools"]}
    assert {"statewright_get_state", "statewright_transition", "every__echo",
            "fs__read_text_file"} <= names
    # --strict reports every schema portability finding (errors and warnings) in
    # `schemaFindings`; statewright's schemas and the forwarded ones have none
    assert "schemaFindings" not in answer, json.dumps(answer.get("schemaFindings"), indent=1)
    assert "Schema portability" not in err and "Warning: tool" not in err


def test_tools_call_forwarded_and_own(target, tmp_path):
    rc, answer, err = inspect(target, "--method", "tools/call", "--tool-name", "every__echo",
                              "--tool-arg", "message=hello", home=tmp_path)
    assert rc == 0, err
    assert answer["result"]["content"][0]["text"] == "Echo: hello"
    rc, answer, err = inspect(target, "--method", "tools/call", "--tool-name",
                              "statewright_list_workflows", home=tmp_path)
    assert rc == 0, err
    ids = [w["id"] for w in answer["result"]["structuredContent"]["workflows"]]
    assert "simple" in ids


def test_a_refused_call_is_a_tool_error(target, tmp_path):
    # statewright_get_state with no run: an isError result, which the Inspector exits 5 for
    rc, answer, err = inspect(target, "--method", "tools/call", "--tool-name",
                              "statewright_get_state", home=tmp_path)
    assert rc == 5, err
    assert "NO_ACTIVE_RUN" in json.dumps(answer)
