"""Proxy overhead (DESIGN.md section 8): median added latency per forwarded `tools/call`.

The same MCP SDK `Client` code calls server-everything's `echo` tool (node, stdio) three ways:
directly; through `statewright serve` (a real subprocess) with no workflow running; and
through a second `statewright serve` whose session runs a workflow that allows the tool, so
every call pays the full governed path (argument check, `authorize`, forwarding, `record`).
After a warm-up, calls are interleaved one by one (the order rotates every round), so load from
other processes hits the three paths alike. The measurement is repeated `--reps` times; each
repetition gives a median per path, and the added latency is the difference of medians. The
table reports the typical (median over repetitions) and best repetition; the budget applies to
the typical figure. (Work the proxy defers until after an answer -- `record` of a call it may
answer first -- can overlap the next measured call of any path, the direct one included; a real
agent's next call comes later, after the model has thought.)

    .venv/bin/python benchmarks/bench_proxy.py [--calls N] [--reps R] [--compare PYTHON]

`--compare PYTHON` adds a fourth path in the same interleaved run: a governed proxy started by
another interpreter (`PYTHON -m statewright serve`, e.g. the venv of another checkout), so two
versions of the proxy are compared under the same load.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVERYTHING = (REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol"
              / "server-everything" / "dist" / "index.js")
BUDGET_MS = 1.0  # DESIGN section 8

WORKFLOW = {
    "id": "bench-proxy",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["mcp__every__echo"], "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


async def _measure(projects: dict[str, Path], calls: int, reps: int,
                   compare: str | None = None) -> list[dict[str, list[float]]]:
    import anyio
    from mcp import Client, StdioServerParameters

    node = shutil.which("node") or "node"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    direct = StdioServerParameters(command=node, args=[str(EVERYTHING), "stdio"], env=env)

    def serve(session: str, python: str = sys.executable) -> StdioServerParameters:
        project = str(projects[session])
        return StdioServerParameters(command=python,
                                     args=["-m", "statewright", "serve", "--project", project],
                                     env={**env, "STATEWRIGHT_SESSION": session}, cwd=project)

    out: list[dict[str, list[float]]] = []
    with open(os.devnull, "w") as devnull:
        from mcp.client.stdio import stdio_client

        def client(params: StdioServerParameters) -> Client:
            return Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None)

        async with AsyncExitStack() as stack:
            d = await stack.enter_async_context(client(direct))
            p = await stack.enter_async_context(client(serve("bench")))
            i = await stack.enter_async_context(client(serve("idle")))
            targets = [("direct", d, "echo"), ("idle", i, "every__echo"),
                       ("governed", p, "every__echo")]
            governed = [p]
            if compare:
                cmp = await stack.enter_async_context(client(serve("compare", compare)))
                targets.append(("compare", cmp, "every__echo"))
                governed.append(cmp)
            for c in governed:
                r = await c.session.call_tool("statewright_load_workflow",
                                              {"name": WORKFLOW["id"]})
                assert not r.is_error, r
            for _, c, tool in targets[1:]:
                names = {t.name for t in (await c.list_tools()).tools}
                assert tool in names, names
            for _, c, tool in targets:  # warm up every path
                for _ in range(200):
                    res = await c.session.call_tool(tool, {"message": "warm"})
                    assert not res.is_error, res
            for _ in range(reps):
                rep: dict[str, list[float]] = {label: [] for label, _, _ in targets}
                for n in range(calls):
                    k = n % len(targets)
                    for label, c, tool in targets[k:] + targets[:k]:
                        t0 = time.perf_counter()
                        res = await c.session.call_tool(tool, {"message": "benchmark"})
                        rep[label].append((time.perf_counter() - t0) * 1000)
                        assert not res.is_error, res
                out.append(rep)
            await anyio.sleep(0)
    return out


def _project(project: Path) -> Path:
    """One project per proxy, as in real use: a proxy's store commits and file watcher never
    meet another proxy's (with a shared project, every commit of one proxy would wake the
    others' watchers, and the proxies' row caches would keep invalidating each other)."""
    (project / "workflows").mkdir(parents=True)
    (project / "workflows" / "bench-proxy.json").write_text(json.dumps(WORKFLOW))
    (project / "statewright.json").write_text(json.dumps(
        {"mcpServers": {"every": {"command": shutil.which("node"),
                                  "args": [str(EVERYTHING), "stdio"]}}}))
    return project


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    import anyio

    argv = sys.argv[1:] if argv is None else argv
    calls = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 1000
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 3
    compare = argv[argv.index("--compare") + 1] if "--compare" in argv else None
    if not EVERYTHING.is_file() or not shutil.which("node"):
        print("bench_proxy: needs node and tests/npm/node_modules "
              "(run `make test` or `make bench`)")
        raise SystemExit(2)
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-proxy-"))
    try:
        projects = {session: _project(tmp / session) for session in ("bench", "idle", "compare")}
        res = anyio.run(_measure, projects, calls, reps, compare)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = statistics.median
    per_rep = [{k: med(v) for k, v in rep.items()} for rep in res]
    added_idle = [r["idle"] - r["direct"] for r in per_rep]
    added_gov = [r["governed"] - r["direct"] for r in per_rep]
    allv = {k: [x for rep in res for x in rep[k]] for k in res[0]}
    md = med(allv["direct"])
    rows = [
        ("direct echo, median", md, "ms", ""),
        ("direct echo, p95", _pct(allv["direct"], 0.95), "ms", ""),
        ("proxied, no workflow, median", med(allv["idle"]), "ms", ""),
        ("proxied, no workflow, p95", _pct(allv["idle"], 0.95), "ms", ""),
        ("proxied, governed, median", med(allv["governed"]), "ms", ""),
        ("proxied, governed, p95", _pct(allv["governed"], 0.95), "ms", ""),
        ("added, no workflow, median (typical rep)", med(added_idle), "ms", ""),
        ("added, no workflow, median (best rep)", min(added_idle), "ms", ""),
        ("added, governed, p95 - direct p95",
         _pct(allv["governed"], 0.95) - _pct(allv["direct"], 0.95), "ms", ""),
        ("governed / direct, median ratio", med(allv["governed"]) / md, "x", ""),
        ("added, governed, median (best rep)", min(added_gov), "ms", ""),
        ("added per governed call, median (typical rep)", med(added_gov), "ms", f"<= {BUDGET_MS}"),
    ]
    if compare:
        added_cmp = [r["compare"] - r["direct"] for r in per_rep]
        rows += [
            ("compare: proxied, governed, median", med(allv["compare"]), "ms", ""),
            ("compare: added per governed call (typical rep)", med(added_cmp), "ms", ""),
            ("compare: added, governed (best rep)", min(added_cmp), "ms", ""),
        ]
    width = max(len(r[0]) for r in rows)
    print(f"{'name':<{width}} | {'value':>8} | unit | budget")
    for name, value, unit, budget in rows:
        print(f"{name:<{width}} | {value:8.3f} | {unit:<4} | {budget}")
    print(f"({calls} interleaved calls per path per repetition, {reps} repetitions; added per rep: "
          f"no workflow {', '.join(f'{x:.3f}' for x in added_idle)}; "
          f"governed {', '.join(f'{x:.3f}' for x in added_gov)} ms)")
    typical = med(added_gov)
    if typical > BUDGET_MS:
        print(f"OVER BUDGET: the proxy adds {typical:.3f} ms per governed call "
              f"(budget {BUDGET_MS} ms)")
        raise SystemExit(1)
    return rows


if __name__ == "__main__":
    main()
