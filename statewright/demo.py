"""`make demo` (`python -m statewright.demo`): watch statewright govern an agent end to end.

What runs, all for real: a temporary project; `statewright serve` as a subprocess in front of the
official filesystem MCP server (`@modelcontextprotocol/server-filesystem`, run with `node`); an
"agent" scripted with the MCP SDK's own `Client` that follows the shipped `demo-proxy` workflow;
and the `statewright` CLI as a human would use it (`statewright approve`, `statewright history`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

console = Console(highlight=False)
REPO = Path(__file__).resolve().parent.parent
WORKFLOW = "demo-proxy"


def _fs_server_js() -> Path | None:
    bases = (Path(os.environ.get("STATEWRIGHT_NPM_DIR", "")), REPO / "tests" / "npm",
             Path.cwd() / "tests" / "npm")
    for base in bases:
        p = (base / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist"
             / "index.js")
        if str(base) and p.is_file():
            return p
    return None


def _workflow_source() -> Path:
    from .config import examples_dir

    for d in (REPO / "workflows", examples_dir()):
        p = d / f"{WORKFLOW}.json"
        if p.is_file():
            return p
    raise SystemExit(f"demo: cannot find {WORKFLOW}.json among the shipped workflows")


def _statewright_cmd() -> list[str]:
    return [sys.executable, "-m", "statewright"]


class Agent:
    """The scripted agent: one MCP client connection to `statewright serve`."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.list_changed = 0

    async def on_message(self, msg: Any) -> None:
        import mcp_types as types

        if isinstance(getattr(msg, "root", msg), types.ToolListChangedNotification):
            self.list_changed += 1

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return await self.client.session.call_tool(name, args or {})

    async def tools(self) -> list[str]:
        return [t.name for t in (await self.client.list_tools(cache_mode="bypass")).tools]

    async def wait_list_changed(self, before: int, timeout: float = 15.0) -> bool:
        import anyio

        with anyio.move_on_after(timeout):
            while self.list_changed <= before:
                await anyio.sleep(0.02)
            return True
        return False


def _text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


def _answer(result: Any) -> dict[str, Any]:
    return result.structured_content or json.loads(_text(result))


def step(title: str) -> None:
    console.print()
    console.print(Rule(f"[bold]{title}", align="left", style="cyan"))


PROJECT_TAG = "<project>"
_project_root = [""]


def show_call(name: str, args: dict[str, Any], result: Any, note: str = "") -> None:
    shown = json.dumps(args)
    if _project_root[0]:
        shown = shown.replace(_project_root[0], PROJECT_TAG)
    if len(shown) > 110:
        shown = shown[:107] + "..."
    if result.is_error:
        head = Text("  REFUSED ", style="bold white on red")
    else:
        head = Text("  ALLOWED ", style="bold white on green")
    head.append(f" {name} ", style="bold")
    head.append(shown, style="dim")
    console.print(head)
    body = _text(result).strip()
    if _project_root[0]:
        body = body.replace(_project_root[0], PROJECT_TAG)
    if body:
        lines = body.splitlines()
        if len(lines) > 12:
            lines = [*lines[:12], "..."]
        style = "red" if result.is_error else ""
        for line in lines:
            s = "bold magenta" if line.startswith("[STATEWRIGHT INTERRUPT]") else style
            console.print(Text("    " + line, style=s))
    if note:
        console.print(f"    [dim]{note}[/]")


def show_state(answer: dict[str, Any], label: str = "state") -> None:
    if "error" in answer and "state" not in answer:
        err = answer["error"]
        console.print(f"  {label}: [yellow]{err['code']}[/] {err['message']}")
        return
    transitions = answer.get("transitions") or []
    events = ", ".join(f"{t['event']}→{t['target']}" for t in transitions) or "—"
    tools = answer.get("allowed_tools")
    tools_s = "any" if tools is None else (", ".join(tools) or "statewright tools only")
    console.print(f"  {label}: [bold cyan]{answer.get('state')}[/] ({answer.get('status')}, "
                  f"version {answer.get('version')})  allowed: [green]{tools_s}[/]  "
                  f"events: {events}")
    if answer.get("pending_approval"):
        pa = answer["pending_approval"]
        console.print(f"  [yellow]waiting for human approval[/] {pa.get('approval_id')}: "
                      f"{pa.get('message')}")


async def run_agent(project: Path, log_path: Path) -> str:
    """Steps 1-7: the scripted agent against `statewright serve`; returns the run id."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = _statewright_cmd()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    env["STATEWRIGHT_SESSION"] = "demo"
    params = StdioServerParameters(command=cmd[0],
                                   args=[*cmd[1:], "serve", "--project", str(project)],
                                   env=env, cwd=str(project))
    with open(log_path, "w") as log:
        holder: dict[str, Agent] = {}

        async def on_message(message: Any) -> None:
            if "agent" in holder:
                await holder["agent"].on_message(message)

        t0 = time.perf_counter()
        async with Client(stdio_client(params, errlog=log), mode="legacy", cache=None,
                          message_handler=on_message) as client:
            agent = holder["agent"] = Agent(client)
            tools = await agent.tools()
            console.print(f"  connected to [bold]statewright serve[/] (protocol "
                          f"{client.protocol_version}) in {time.perf_counter() - t0:.1f}s; "
                          f"{len(tools)} tools listed with no workflow running")
            forwarded = ", ".join(t for t in tools if t.startswith("fs__"))
            console.print(f"  forwarded from the filesystem server: {forwarded}")
            run_id = await _start_and_check(agent, project)
            await _budgets_and_interrupt(agent, project)
            await _human_approval(agent, project, cmd, env)
    return run_id


async def _start_and_check(agent: Agent, project: Path) -> str:
    """Steps 2-4: start the workflow, calls checked against 'explore', a transition."""
    step("2. The agent starts the workflow: the tool list shrinks to what 'explore' allows")
    before = agent.list_changed
    answer = _answer(await agent.call("statewright_load_workflow", {"name": WORKFLOW}))
    run_id = answer.get("run_id", "")
    show_state(answer)
    got = await agent.wait_list_changed(before)
    console.print(f"  notifications/tools/list_changed received: {'yes' if got else 'no'}")
    console.print(f"  tools now: {', '.join(await agent.tools())}")

    step("3. Calls are checked against the state's rules")
    args = {"path": str(project / "src" / "app.py"), "content": "print('hi')\n"}
    show_call("fs__write_file", args, await agent.call("fs__write_file", args),
              "editing is not allowed while exploring; the reason names the way forward")
    args = {"path": str(project / "README.md")}
    show_call("fs__read_text_file", args, await agent.call("fs__read_text_file", args))

    step("4. A transition: PLAN_READY moves the run to 'implement'")
    before = agent.list_changed
    show_state(_answer(await agent.call("statewright_transition", {"event": "PLAN_READY"})))
    await agent.wait_list_changed(before)
    console.print(f"  tools now: {', '.join(await agent.tools())}")
    return run_id


async def _budgets_and_interrupt(agent: Agent, project: Path) -> None:
    """Steps 5-6: edit budgets and disallowed tools; an interrupt and its `$return`."""
    step("5. Budgets: small edits pass, a 30-line write does not")
    args = {"path": str(project / "src" / "app.py"),
            "content": "def main():\n    print('hello')\n"}
    show_call("fs__write_file", args, await agent.call("fs__write_file", args))
    big = "".join(f"line {i}\n" for i in range(30))
    args = {"path": str(project / "src" / "big.py"), "content": big}
    show_call("fs__write_file", args, await agent.call("fs__write_file", args),
              "max_edit_lines is 10 in this state")
    args = {"source": str(project / "src" / "app.py"), "destination": str(project / "app.py")}
    show_call("fs__move_file", args, await agent.call("fs__move_file", args),
              "move_file is in the state's disallowed_tools")

    step("6. An interrupt: writing under config/ diverts the run, `$return` brings it back")
    await agent.call("fs__create_directory", {"path": str(project / "config")})
    before = agent.list_changed
    args = {"path": str(project / "config" / "settings.json"), "content": '{"debug": false}\n'}
    show_call("fs__write_file", args, await agent.call("fs__write_file", args))
    await agent.wait_list_changed(before)
    args = {"path": str(project / "config" / "settings.json")}
    show_call("fs__read_text_file", args, await agent.call("fs__read_text_file", args))
    r = await agent.call("statewright_transition", {"event": "CONFIG_REVIEWED"})
    show_state(_answer(r), "after $return")


async def _human_approval(agent: Agent, project: Path, cmd: list[str],
                          env: dict[str, str]) -> None:
    """Step 7: DONE parks until a human runs `statewright approve` in another process."""
    import anyio

    step("7. DONE needs a human: the transition parks until someone approves it")
    show_state(_answer(await agent.call("statewright_transition", {"event": "DONE"})))
    err = _answer(await agent.call("statewright_transition", {"event": "DONE"})).get("error", {})
    console.print(f"  firing DONE again: [yellow]{err.get('code')}[/] {err.get('message')}")

    console.print("  [bold]$ statewright approve[/]   (a human, in another terminal)")
    before = agent.list_changed
    cp = await anyio.to_thread.run_sync(lambda: subprocess.run(
        [*cmd, "approve", "--project", str(project), "--session", "demo"],
        capture_output=True, text=True, env={**env, "COLUMNS": "100"}, timeout=60))
    if cp.returncode != 0:
        raise RuntimeError(f"statewright approve failed: {cp.stderr.strip()}")
    for line in cp.stdout.strip().splitlines()[:3]:
        console.print(Text("    " + line, style="dim"))
    got = await agent.wait_list_changed(before)
    console.print("  the proxy noticed the change made by another process and told the agent: "
                  f"{'yes' if got else 'no'}")
    answer = _answer(await agent.call("statewright_get_state"))
    if answer.get("status") == "completed":
        console.print("  agent sees: the run is [bold green]completed[/]; statewright_get_state "
                      "answers status completed and nothing is enforced any more")
    else:
        show_state(answer, "agent sees")
    console.print(f"  tools now: {len(await agent.tools())} (everything again)")


_QUIET = {"reason", "digest", "requested_at", "source", "message", "workflow", "status"}


def show_history(project: Path, run_id: str) -> None:
    cp = subprocess.run([*_statewright_cmd(), "history", run_id, "--json",
                         "--project", str(project)],
                        capture_output=True, text=True, timeout=60)
    if cp.returncode != 0:
        raise RuntimeError(f"statewright history failed: {cp.stderr.strip()}")
    rows = json.loads(cp.stdout)
    if isinstance(rows, dict):
        rows = rows.get("events") or rows.get("history") or []
    table = Table(title=f"history of {run_id}  ($ statewright history {run_id})", show_lines=False)
    for col in ("#", "actor", "event", "state", "details"):
        table.add_column(col, overflow="fold")
    start = None
    for i, ev in enumerate(rows, 1):
        at = ev.get("at")
        start = start if start is not None else at
        data = ev.get("data") or {}
        detail = ", ".join(f"{k}={v}" for k, v in data.items()
                           if k not in _QUIET and v not in (None, "", [], {}))
        if data.get("rule"):
            detail = f"{data.get('tool')} refused by {data['rule']}"
        elif data.get("code"):
            detail = str(data["code"])
        style = {"tool_denied": "red", "interrupted": "magenta", "approved": "green",
                 "approval_requested": "yellow"}.get(ev.get("kind"), "")
        table.add_row(str(i), str(ev.get("actor", "")), Text(str(ev.get("kind", "")), style=style),
                      str(ev.get("state") or ""), detail[:100])
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    import anyio

    t0 = time.perf_counter()
    fs_js = _fs_server_js()
    node = shutil.which("node")
    if fs_js is None or node is None:
        console.print("[red]demo: needs `node` and the npm test servers; run `make demo` "
                      "(it installs them)[/]")
        return 1
    keep = "--keep" in (argv if argv is not None else sys.argv[1:])
    tmp = Path(tempfile.mkdtemp(prefix="statewright-demo-"))
    project = tmp / "project"
    try:
        (project / "workflows").mkdir(parents=True)
        (project / "src").mkdir()
        (project / "README.md").write_text(
            "# demo project\nA tiny project for the statewright demo.\n")
        shutil.copy(_workflow_source(), project / "workflows" / f"{WORKFLOW}.json")
        config = {"mcpServers": {"fs": {"command": node, "args": [str(fs_js), str(project)]}}}
        (project / "statewright.json").write_text(json.dumps(config, indent=2) + "\n")

        console.print(Panel.fit(
            "[bold]statewright demo[/]: an agent (the MCP SDK's Client) talks to "
            "[bold]statewright serve[/],\n"
            "which sits in front of the official filesystem MCP server and enforces the\n"
            f"[bold]{WORKFLOW}[/] workflow on every call.", border_style="cyan"))
        step("1. A project with statewright.json pointing at the filesystem server")
        _project_root[0] = str(project)
        console.print(f"  project: {project}  (shown below as {PROJECT_TAG})")
        console.print(Text("  " + json.dumps(config["mcpServers"]), style="dim"))
        run_id = anyio.run(run_agent, project, tmp / "serve.log")

        step("8. The run's history, as recorded in .statewright/state.db")
        show_history(project, run_id)
        console.print(f"\n[bold green]demo finished in {time.perf_counter() - t0:.1f}s[/]"
                      + (f"; project kept at {project}" if keep else ""))
        return 0
    except Exception as exc:
        log = tmp / "serve.log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        console.print(f"[red]demo failed: {type(exc).__name__}: {exc}[/]")
        if tail:
            console.print(Text(tail, style="dim"))
        return 1
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
