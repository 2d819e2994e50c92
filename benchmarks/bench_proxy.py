"""Proxy overhead (DESIGN.md section 8): median added latency per forwarded `tools/call`.

The same MCP SDK `Client` code calls server-everything's `echo` tool (node, stdio) directly, and
through `statewright serve` (a real subprocess) with a workflow running whose state allows the
tool, so every proxied call pays the full governed path: argument check, `authorize` (one store
transaction), forwarding, `record`. Calls alternate in small batches so drift hits both alike.

    .venv/bin/python benchmarks/bench_proxy.py [--calls N]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVERYTHING = REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
BUDGET_MS = 1.5

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


async def _measure(project: Path, calls: int) -> dict[str, list[float]]:
    import anyio
    from mcp import Client, StdioServerParameters

    node = shutil.which("node") or "node"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    direct = StdioServerParameters(command=node, args=[str(EVERYTHING), "stdio"], env=env)
    def serve(session: str) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable,
                                     args=["-m", "statewright", "serve", "--project", str(project)],
                                     env={**env, "STATEWRIGHT_SESSION": session}, cwd=str(project))

    out: dict[str, list[float]] = {"direct": [], "proxy": [], "idle": []}
    with open(os.devnull, "w") as devnull:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(direct, errlog=devnull), mode="legacy", cache=None) as d, \
                Client(stdio_client(serve("bench"), errlog=devnull), mode="legacy", cache=None) as p, \
                Client(stdio_client(serve("idle"), errlog=devnull), mode="legacy", cache=None) as i:
            r = await p.session.call_tool("statewright_load_workflow", {"name": WORKFLOW["id"]})
            assert not r.is_error, r
            names = {t.name for t in (await p.list_tools()).tools}
            assert "every__echo" in names, names
            targets = (("direct", d, "echo"), ("proxy", p, "every__echo"), ("idle", i, "every__echo"))
            for _, c, tool in targets:  # warm up both paths
                for _ in range(30):
                    res = await c.session.call_tool(tool, {"message": "warm"})
                    assert not res.is_error, res
            batch = 10
            for _ in range(max(1, calls // batch)):
                for label, c, tool in targets:
                    for _ in range(batch):
                        t0 = time.perf_counter()
                        res = await c.session.call_tool(tool, {"message": "benchmark"})
                        out[label].append((time.perf_counter() - t0) * 1000)
                        assert not res.is_error
            await anyio.sleep(0)
    return out


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    import anyio

    argv = sys.argv[1:] if argv is None else argv
    calls = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 1000
    if not EVERYTHING.is_file() or not shutil.which("node"):
        print("bench_proxy: needs node and tests/npm/node_modules (run `make test` or `make bench`)")
        raise SystemExit(2)
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-proxy-"))
    try:
        project = tmp / "proj"
        (project / "workflows").mkdir(parents=True)
        (project / "workflows" / "bench-proxy.json").write_text(json.dumps(WORKFLOW))
        (project / "statewright.json").write_text(json.dumps(
            {"mcpServers": {"every": {"command": shutil.which("node"), "args": [str(EVERYTHING), "stdio"]}}}))
        res = anyio.run(_measure, project, calls)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    d, p, i = res["direct"], res["proxy"], res["idle"]
    md, mp, mi = statistics.median(d), statistics.median(p), statistics.median(i)
    added = mp - md
    rows = [
        ("direct echo, median", md, "ms", ""),
        ("direct echo, p95", _pct(d, 0.95), "ms", ""),
        ("through statewright serve (governed), median", mp, "ms", ""),
        ("through statewright serve (governed), p95", _pct(p, 0.95), "ms", ""),
        ("through statewright serve (no run), median", mi, "ms", ""),
        ("added latency, no run (transport hop only)", mi - md, "ms", ""),
        ("added latency per governed call, median", added, "ms", f"<= {BUDGET_MS}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'name':<{width}} | {'value':>8} | unit | budget")
    for name, value, unit, budget in rows:
        print(f"{name:<{width}} | {value:8.3f} | {unit:<4} | {budget}")
    print(f"({len(d)} calls per path)")
    if added > BUDGET_MS:
        print(f"OVER BUDGET: the proxy adds {added:.3f} ms per call (budget {BUDGET_MS} ms)")
        raise SystemExit(1)
    return rows


if __name__ == "__main__":
    main()
