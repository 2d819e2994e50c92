"""What the proxy holds back (DESIGN section 4): arguments past the size it accepts
(`argument_size_problem`), output past the state's byte budget (`cut_to_budget`, check 4, by
`raw_result_bytes`) and the variables a workflow blocks, which downstream servers start without
(`blocked_anywhere`, check 6)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

MAX_ARGUMENT_BYTES = int(os.environ.get("STATEWRIGHT_MAX_ARGUMENT_BYTES", str(8 * 1024 * 1024)))


def argument_size_problem(args: dict[str, Any]) -> str | None:
    """Why a call's arguments are refused for their size or form, if they are."""
    if not args:
        return None
    try:
        size = len(json.dumps(args, separators=(",", ":"), ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        return f"arguments are not plain JSON: {exc}"
    if size > MAX_ARGUMENT_BYTES:
        return (f"arguments are {size} bytes, more than the proxy accepts "
                f"({MAX_ARGUMENT_BYTES}); split the work into smaller calls")
    return None


def raw_result_bytes(result: dict[str, Any]) -> int:
    """Size of what the agent receives from a wire-shaped result: text, embedded data (base64
    as sent) and structured content."""
    n = 0
    for block in result.get("content") or ():
        if not isinstance(block, dict):
            n += len(json.dumps(block, default=str))
            continue
        text = block.get("text")
        data = block.get("data")
        if isinstance(text, str) and len(block) <= 3:
            n += len(text.encode("utf-8", "replace"))
        elif isinstance(data, str) and len(block) <= 4:
            n += len(data)
        else:
            n += len(json.dumps(block, separators=(",", ":"), default=str))
    sc = result.get("structuredContent")
    if sc is not None:
        n += len(json.dumps(sc, separators=(",", ":"), default=str))
    return n


def cut_to_budget(result: dict[str, Any], room: int, budget: int) -> dict[str, Any]:
    """The part of a result that fits in `room` bytes of the state's context budget (DESIGN
    section 4, check 4: a result that would cross the budget is cut): text blocks cut at a
    character boundary, other blocks and structured content dropped once they do not fit,
    and a note saying so. The cut result is flagged `isError`."""
    room = max(0, room)
    out: list[dict[str, Any]] = []
    for block in result.get("content") or ():
        if not isinstance(block, dict):
            continue
        text = block.get("text")
        size = (len(text.encode("utf-8", "replace")) if isinstance(text, str) else
                len(json.dumps(block, separators=(",", ":"), default=str)))
        if size <= room:
            out.append(block)
            room -= size
            continue
        if isinstance(text, str) and room > 0:
            out.append({**block, "text": text.encode("utf-8", "replace")[:room]
                        .decode("utf-8", "ignore")})
        room = 0
    out.append({"type": "text", "text": f"[statewright] output cut: this state's context "
                f"budget of {budget} bytes is used up; transition to read more"})
    cut = {k: v for k, v in result.items() if k not in ("content", "structuredContent")}
    cut["content"] = out
    # flagged as an error: the whole result was not delivered, and a client that checks
    # structured output against the tool's schema must not take the cut text for it
    cut["isError"] = True
    return cut


def launcher_of(rt: Any) -> Callable[[frozenset[str]], list[str] | None]:
    """How the proxy starts a stdio server of `rt`'s project: under the kernel sandbox, without
    the variables it withholds (`runtime.confinement.server_launcher`)."""
    from ..runtime.confinement import server_launcher

    return lambda withheld: server_launcher(rt, withheld)


def blocked_anywhere(rt: Any) -> frozenset[str]:
    """Every variable some state of some workflow on the search path blocks: downstream
    servers start without them, so a later state's `blocked_env` needs no restart."""
    out: set[str] = set()
    try:
        dirs = rt.config.workflow_dirs()
    except Exception:
        return frozenset()
    for d in dirs:
        try:
            files = sorted(d.glob("*.json")) if d.is_dir() else []
        except OSError:
            continue
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            states = doc.get("states") if isinstance(doc, dict) else None
            for st in (states.values() if isinstance(states, dict) else ()):
                if isinstance(st, dict):
                    for key in ("blocked_env", "deny_env"):
                        names = st.get(key)
                        if isinstance(names, list):
                            out.update(n for n in names if isinstance(n, str))
    return frozenset(out)
