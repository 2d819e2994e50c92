"""Render a compiled workflow as a Mermaid state diagram or a Graphviz DOT graph. Pure, stdlib.

Edges: simple/guarded/branched transitions to their targets (guard names in the label,
`[approval]` when a human must approve); invoke to `on_complete` / `on_fail`; fork to each
branch's initial state (dashed) and to `on_complete` / `on_fail`; `safe_next` as `*`;
`$return` to a pseudo-state; each interrupt as a pseudo-state pointing at its handler.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compiled import RETURN_TARGET, CompiledWorkflow


@dataclass(frozen=True)
class Edge:
    source: str
    target: str  # a state name, or RETURN_TARGET
    label: str
    style: str = "solid"  # "solid" | "dashed"


def edges(wf: CompiledWorkflow) -> list[Edge]:
    out: list[Edge] = []
    for name, st in wf.states.items():
        for event, t in st.on.items():
            if t.kind == "invoke":
                out.append(Edge(name, t.on_complete or "", f"{event} invoke {t.invoke} ok"))
                if t.on_fail:
                    out.append(Edge(name, t.on_fail, f"{event} invoke {t.invoke} failed"))
            elif t.kind == "fork" and t.fork is not None:
                f = t.fork
                for bname, fb in f.branches.items():
                    out.append(Edge(name, fb.initial, f"{event} fork {bname}", "dashed"))
                out.append(Edge(name, f.on_complete, f"{event} join {f.join}"))
                if f.on_fail:
                    out.append(Edge(name, f.on_fail, f"{event} branch failed"))
            else:
                for b in t.branches:
                    label = event
                    if b.guards:
                        label += " [" + " & ".join(b.guards) + "]"
                    elif t.kind == "branched":
                        label += " [default]"
                    if t.checks:
                        label += " [checks " + ", ".join(t.checks) + "]"
                    if t.requires_approval:
                        label += " [approval]"
                    out.append(Edge(name, b.target, label))
        if st.safe_next:
            out.append(Edge(name, st.safe_next, "* (safe_next)", "dashed"))
    return out


def _mermaid_text(s: str) -> str:
    # Mermaid labels: keep them on one line and free of characters that end a label.
    return (s.replace("\n", " ").replace('"', "#quot;").replace(":", "#58;")
            .replace(";", "#59;").replace("{", "#123;").replace("}", "#125;"))


def to_mermaid(wf: CompiledWorkflow) -> str:
    ids = {name: f"s{i}" for i, name in enumerate(wf.states)}
    lines = ["stateDiagram-v2"]
    for name, sid in ids.items():
        lines.append(f'    state "{_mermaid_text(name)}" as {sid}')
    lines.append(f"    [*] --> {ids[wf.initial]}")
    uses_return = False
    for e in edges(wf):
        dst: str | None
        if e.target == RETURN_TARGET:
            uses_return = True
            dst = "ret"
        else:
            dst = ids.get(e.target)
            if dst is None:
                continue
        lines.append(f"    {ids[e.source]} --> {dst} : {_mermaid_text(e.label)}")
    if uses_return:
        lines.insert(1, '    state "$return (back to the interrupted state)" as ret')
    for i, it in enumerate(wf.interrupts):
        iid = f"int{i}"
        label = f"interrupt {_mermaid_text(it.name)}#58; {_mermaid_text(it.file_pattern)}"
        lines.append(f'    state "{label}" as {iid}')
        if it.target in ids:
            lines.append(f"    {iid} --> {ids[it.target]} : file changed")
    for name, st in wf.states.items():
        if st.final:
            lines.append(f"    {ids[name]} --> [*]")
    return "\n".join(lines) + "\n"


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(wf: CompiledWorkflow) -> str:
    lines = [f"digraph {_dot_str(wf.id)} {{", "    rankdir=LR;",
             '    node [shape=box, style=rounded, fontname="Helvetica"];',
             '    edge [fontname="Helvetica", fontsize=10];',
             '    "__start__" [shape=point, label=""];',
             f"    \"__start__\" -> {_dot_str(wf.initial)};"]
    for name, st in wf.states.items():
        attrs = ["shape=doublecircle"] if st.final else []
        lines.append(f"    {_dot_str(name)}" + (f" [{', '.join(attrs)}];" if attrs else ";"))
    uses_return = False
    for e in edges(wf):
        if e.target == RETURN_TARGET:
            uses_return = True
        attrs = [f"label={_dot_str(e.label)}"]
        if e.style == "dashed":
            attrs.append("style=dashed")
        lines.append(f"    {_dot_str(e.source)} -> {_dot_str(e.target)} [{', '.join(attrs)}];")
    if uses_return:
        lines.append(f"    {_dot_str(RETURN_TARGET)} [shape=note, "
                     "label=\"$return\\n(back to the interrupted state)\"];")
    for i, it in enumerate(wf.interrupts):
        iid = f"__interrupt_{i}__"
        label = _dot_str(f"interrupt {it.name}: {it.file_pattern}")
        lines.append(f"    {_dot_str(iid)} [shape=hexagon, label={label}];")
        lines.append(f"    {_dot_str(iid)} -> {_dot_str(it.target)} "
                     "[style=dotted, label=\"file changed\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"
