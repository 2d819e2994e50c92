"""Subprocess worker for the store's concurrency and crash tests (run as a script)."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    mode, root = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from statewright.errors import StatewrightError
    from statewright.runtime import Runtime

    rt = Runtime.open(root)
    if mode == "hammer":
        ident, n = sys.argv[3], int(sys.argv[4])
        run_id = rt.get_state("default")["run_id"]
        print("ready", flush=True)
        sys.stdin.readline()  # start together
        for k in range(n):
            rt.transition("default", "TICK", {f"p{ident}_{k}": True,
                                              "machine": os.environ.get("STATEWRIGHT_MACHINE")})

            def bump(run, k=k):  # this round's k, bound now
                ctx = dict(run.context)
                ctx["n"] = ctx.get("n", 0) + 1
                return run.with_(context=ctx), [{"kind": "tool_allowed", "actor": "agent",
                                                 "data": {"w": ident, "k": k}}]

            with rt.store.transaction() as tx:
                run = tx.require_run(run_id)
                new, events = bump(run)
                tx.save_with_events(run, new, events)
        print("done", flush=True)
    elif mode == "decide":
        # the resident proxy's loop: authorize a call and record its result, n times
        from statewright.policy.types import ToolCall, ToolResult

        rt = Runtime.open(root, resident=True)
        n = int(sys.argv[3])
        bash = ToolCall("Bash", {"command": "pytest -q"})
        result = ToolResult("Bash", {"command": "pytest -q"}, output_bytes=10, exit_code=0)
        print("ready", flush=True)
        sys.stdin.readline()  # start together
        for _ in range(n):
            assert rt.authorize("default", bash).allowed
            rt.record("default", result)
        print("done", flush=True)
    elif mode == "hang":
        # Transition, but stop for good right after the run row and the first history row were
        # written, inside the open transaction: the parent SIGKILLs us there.
        from statewright.store import db

        tx_class: type = db.Tx
        if rt.store_url is not None:
            from statewright.store import pg

            tx_class = pg.PgTx
        original = tx_class.append_event

        def slow(self, *a, **kw):
            original(self, *a, **kw)
            print("mid-transaction", flush=True)
            sys.stdin.readline()  # until the parent says so (or kills us here)

        tx_class.append_event = slow
        try:
            rt.transition("default", "TICK", {"crash": True})
        except StatewrightError as exc:
            print(json.dumps({"error": exc.code, "message": exc.message}), flush=True)
            return
        print("committed", flush=True)
    elif mode == "flurry":
        print("ready", flush=True)
        k = 0
        while True:
            try:
                rt.transition("default", "TICK", {"k": k})
            except StatewrightError as exc:  # pragma: no cover - reported to the test
                print(json.dumps({"error": str(exc)}), flush=True)
                raise
            k += 1


if __name__ == "__main__":
    main()
