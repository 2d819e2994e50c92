"""The workflow drawn for people: a layered layout of its states, as inline SVG. Pure, stdlib.

The edges are `definition.graph.edges` (the ones `statewright graph` draws), merged per pair
of states. Layout (the usual layered drawing, kept small):

1. edges that close a cycle (found by a depth-first walk from the initial state) are turned
   around, so the rest is acyclic; a state's column is its longest path from a source;
2. an edge that spans several columns passes through a point in each column between, so it
   runs between states instead of across them;
3. the states of a column are ordered by the mean row of their neighbours, a few sweeps each
   way, which removes most crossings.

Drawn left to right; the current state is highlighted, and the edges that leave it say whether
they pass now (from the state answer's `transitions`, never recomputed here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from ..definition.compiled import RETURN_TARGET, CompiledWorkflow
from ..definition.graph import edges

NODE_H = 36
ROW_GAP = 26
COL_GAP = 110
CHAR_W = 7.4  # px per character of the 13 px node font (labels are measured, not rendered)
LABEL_MAX = 16  # characters of an edge label drawn (the whole label is in its tooltip)
MARGIN = 24
START_W = 30  # room left of the first column for the start marker
SWEEPS = 4


@dataclass
class _Node:
    name: str
    width: float
    dummy: bool = False
    layer: int = 0
    x: float = 0.0
    y: float = 0.0  # centre


@dataclass
class _Edge:
    source: str
    target: str
    events: list[str]
    labels: list[str]
    dashed: bool
    points: list[str] = field(default_factory=list)  # node names the edge passes, in order
    back: bool = False


@dataclass
class Layout:
    nodes: dict[str, _Node]
    edges: list[_Edge]
    width: float
    height: float


def _merged_edges(wf: CompiledWorkflow) -> list[_Edge]:
    by_pair: dict[tuple[str, str], _Edge] = {}
    for e in edges(wf):
        if not e.target:
            continue
        event = e.label.split(" ", 1)[0]
        cur = by_pair.get((e.source, e.target))
        if cur is None:
            by_pair[(e.source, e.target)] = _Edge(e.source, e.target, [event], [e.label],
                                                  e.style == "dashed")
        else:
            cur.events.append(event)
            cur.labels.append(e.label)
            cur.dashed = cur.dashed and e.style == "dashed"
    return list(by_pair.values())


def _back_edges(order: list[str], out: dict[str, list[str]], start: list[str]) -> set[tuple]:
    """Edges closing a cycle in a depth-first walk from `start`, then from every other node."""
    state: dict[str, int] = {}  # 1 on the walk's path, 2 done
    back: set[tuple[str, str]] = set()
    for root in start + order:
        if root in state:
            continue
        stack = [(root, iter(out.get(root, ())))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                back.add((node, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(out.get(nxt, ()))))
    return back


def _layers(names: list[str], dag: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a source, in a topological order of the acyclic edges."""
    preds: dict[str, list[str]] = {n: [] for n in names}
    indeg = dict.fromkeys(names, 0)
    succ: dict[str, list[str]] = {n: [] for n in names}
    for s, t in dag:
        preds[t].append(s)
        succ[s].append(t)
        indeg[t] += 1
    layer = dict.fromkeys(names, 0)
    ready = [n for n in names if indeg[n] == 0]
    while ready:
        n = ready.pop(0)
        for t in succ[n]:
            layer[t] = max(layer[t], layer[n] + 1)
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    return layer


def layout(wf: CompiledWorkflow) -> Layout:
    es = _merged_edges(wf)
    names = list(wf.states)
    if any(e.target == RETURN_TARGET for e in es):
        names.append(RETURN_TARGET)
    nodes = {n: _Node(n, max(80.0, CHAR_W * len(n) + 28)) for n in names}
    out: dict[str, list[str]] = {}
    for e in es:
        out.setdefault(e.source, []).append(e.target)
    starts = [wf.initial] + [i.target for i in wf.interrupts]
    back = _back_edges(names, out, starts)
    dag = []
    for e in es:
        e.back = (e.source, e.target) in back
        if e.source != e.target:
            dag.append((e.target, e.source) if e.back else (e.source, e.target))
    for n, layer in _layers(names, dag).items():
        nodes[n].layer = layer
    _route_through_dummies(nodes, es)
    columns = _order(nodes, es)
    return _place(nodes, es, columns)


def _route_through_dummies(nodes: dict[str, _Node], es: list[_Edge]) -> None:
    """`points` of each edge, from its source to its target: one point in every column between
    (a turned-around edge runs right to left)."""
    for k, e in enumerate(es):
        if e.source == e.target:
            e.points = [e.source, e.target]
            continue
        lo, hi = (e.target, e.source) if e.back else (e.source, e.target)
        pts = [lo]
        for layer in range(nodes[lo].layer + 1, nodes[hi].layer):
            d = f"\0{k}:{layer}"
            nodes[d] = _Node(d, 0.0, dummy=True, layer=layer)
            pts.append(d)
        pts.append(hi)
        e.points = pts[::-1] if e.back else pts


def _order(nodes: dict[str, _Node], es: list[_Edge]) -> list[list[str]]:
    depth = max((n.layer for n in nodes.values()), default=0)
    columns: list[list[str]] = [[] for _ in range(depth + 1)]
    for n in nodes.values():  # first order: the definition's, dummies where they were made
        columns[n.layer].append(n.name)
    left: dict[str, list[str]] = {n: [] for n in nodes}
    right: dict[str, list[str]] = {n: [] for n in nodes}
    for e in es:
        for a, b in zip(e.points, e.points[1:], strict=False):
            a, b = (a, b) if nodes[a].layer < nodes[b].layer else (b, a)
            if a != b:
                right[a].append(b)
                left[b].append(a)
    for _ in range(SWEEPS):
        for i in range(1, len(columns)):
            _sort_by_mean(columns[i], columns[i - 1], left)
        for i in range(len(columns) - 2, -1, -1):
            _sort_by_mean(columns[i], columns[i + 1], right)
    return columns


def _sort_by_mean(column: list[str], beside: list[str], links: dict[str, list[str]]) -> None:
    row = {n: i for i, n in enumerate(beside)}

    def mean(item: tuple[int, str]) -> float:
        i, n = item
        rows = [row[m] for m in links[n] if m in row]
        return sum(rows) / len(rows) if rows else float(i)

    column[:] = [n for _, n in sorted(enumerate(column), key=mean)]


def _place(nodes: dict[str, _Node], es: list[_Edge], columns: list[list[str]]) -> Layout:
    heights = [sum(NODE_H if not nodes[n].dummy else 8 for n in col) + ROW_GAP * (len(col) - 1)
               for col in columns]
    tallest = max(heights, default=NODE_H)
    x: float = MARGIN + START_W
    for col, h in zip(columns, heights, strict=True):
        width = max((nodes[n].width for n in col), default=0.0)
        y = MARGIN + (tallest - h) / 2 + 14  # room above for loops
        for n in col:
            node = nodes[n]
            step = NODE_H if not node.dummy else 8
            node.x, node.y = x + width / 2, y + step / 2
            y += step + ROW_GAP
        x += width + COL_GAP
    return Layout(nodes, es, x - COL_GAP + MARGIN, tallest + 2 * MARGIN + 14)


# -- drawing ---------------------------------------------------------------------------------

def _short(text: str) -> str:
    return text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 1] + "…"


def _bezier(x0: float, y0: float, x1: float, y1: float, t: float) -> tuple[float, float]:
    """The point at `t` of the segment drawn by `_edge_path` (control points at mid-x)."""
    mid, u = (x0 + x1) / 2, 1 - t
    return (u ** 3 * x0 + 3 * u * t * mid + t ** 3 * x1,
            u ** 3 * y0 + 3 * u * u * t * y0 + 3 * u * t * t * y1 + t ** 3 * y1)


def _edge_path(lay: Layout, e: _Edge, fan: int) -> tuple[str, float, float]:
    """The SVG path of an edge and where its label goes. `fan` > 0: its source has more edges
    out than its target has in (the label goes near the target, where edges spread), < 0 the
    other way round."""
    ns = lay.nodes
    if e.source == e.target:
        n = ns[e.source]
        top = n.y - NODE_H / 2
        return (f"M{n.x - 14:.1f},{top:.1f} C{n.x - 24:.1f},{top - 34:.1f} "
                f"{n.x + 24:.1f},{top - 34:.1f} {n.x + 14:.1f},{top:.1f}", n.x, top - 30)
    pts = [ns[p] for p in e.points]
    way = -1 if e.back else 1  # a turned-around edge leaves its source on the left, lower
    xs = ([pts[0].x + way * pts[0].width / 2] + [p.x for p in pts[1:-1]]
          + [pts[-1].x - way * pts[-1].width / 2])
    lift = 9.0 if e.back else 0.0
    ys = [p.y + lift for p in pts]
    d = f"M{xs[0]:.1f},{ys[0]:.1f}"
    for i in range(1, len(xs)):
        mid = (xs[i - 1] + xs[i]) / 2
        d += f" C{mid:.1f},{ys[i - 1]:.1f} {mid:.1f},{ys[i]:.1f} {xs[i]:.1f},{ys[i]:.1f}"
    if fan > 0:
        lx, ly = _bezier(xs[-2], ys[-2], xs[-1], ys[-1], 0.7)
    else:
        lx, ly = _bezier(xs[0], ys[0], xs[1], ys[1], 0.3 if fan < 0 else 0.5)
    return d, lx, ly + (14 if e.back else -5)


def render_svg(wf: CompiledWorkflow, current: str | None = None,
               passing: dict[str, bool] | None = None, lay: Layout | None = None) -> str:
    """The workflow as an `<svg>` element. `passing`: event -> whether it passes now, for the
    edges leaving `current`."""
    lay = lay or layout(wf)
    passing = passing or {}
    out = [f'<svg class="graph" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" '
           f'width="{lay.width:.0f}" height="{lay.height:.0f}" role="img" '
           f'aria-label="workflow {escape(wf.id)}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/>'
           '</marker></defs>']
    first = lay.nodes[wf.initial]
    sx = first.x - first.width / 2
    out.append(f'<circle class="start" cx="{sx - START_W + 6:.1f}" cy="{first.y:.1f}" r="5"/>'
               f'<path class="edge" d="M{sx - START_W + 11:.1f},{first.y:.1f} '
               f'L{sx - 2:.1f},{first.y:.1f}" marker-end="url(#arrow)"/>')
    outs: dict[str, int] = {}
    ins: dict[str, int] = {}
    for e in lay.edges:
        outs[e.source] = outs.get(e.source, 0) + 1
        ins[e.target] = ins.get(e.target, 0) + 1
    placed: list[tuple[float, float, float, float]] = [
        (n.x - n.width / 2, n.y - NODE_H / 2, n.x + n.width / 2, n.y + NODE_H / 2)
        for n in lay.nodes.values() if not n.dummy]
    for e in lay.edges:
        fan = outs[e.source] - ins[e.target]
        out.append(_edge_svg(lay, e, fan, current, passing, placed))
    for n in lay.nodes.values():
        if not n.dummy:
            out.append(_node_svg(wf, n, current))
    out.append("</svg>")
    return "".join(out)


def _edge_svg(lay: Layout, e: _Edge, fan: int, current: str | None,
              passing: dict[str, bool], placed: list[tuple[float, float, float, float]]) -> str:
    d, lx, ly = _edge_path(lay, e, fan)
    cls = ["edge"]
    if e.dashed:
        cls.append("dashed")
    if e.source == current:
        cls.append("pass" if any(passing.get(ev) for ev in e.events) else "blocked")
    lines = _label_lines(e)
    ly = _free_spot(lx, ly, lines, placed)
    spans = "".join(
        f'<tspan x="{lx:.1f}" dy="{0 if i == 0 else LINE_H}"'
        + (' class="guard"' if i else "") + f">{escape(line)}</tspan>"
        for i, line in enumerate(lines))
    return (f'<g class="{" ".join(cls)}"><title>{escape(" | ".join(e.labels))}</title>'
            f'<path d="{d}" marker-end="url(#arrow)"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle">{spans}</text>'
            "</g>")


LINE_H = 12  # px between the lines of an edge label
LABEL_CHAR_W = 6.3  # px per character of the 11 px label font


def _label_lines(e: _Edge) -> list[str]:
    """An edge's label: its events on the first line, then what each needs (guards, an
    approval, the default branch) on lines of their own (whole in the tooltip)."""
    lines = [_short(", ".join(dict.fromkeys(e.events)))]
    for label in dict.fromkeys(e.labels):
        _event, _sp, rest = label.partition(" ")
        if rest:
            lines.append(_short(rest))
    return lines[:4]


def _free_spot(x: float, y: float, lines: list[str],
               placed: list[tuple[float, float, float, float]]) -> float:
    """A baseline near `y` where the label's box overlaps no node or label drawn before it
    (tried below and above in turn), and the box, recorded in `placed`."""
    w = max(len(line) for line in lines) * LABEL_CHAR_W + 4
    h = LINE_H * len(lines)

    def box(base: float) -> tuple[float, float, float, float]:
        return (x - w / 2, base - LINE_H + 2, x + w / 2, base - LINE_H + 2 + h)

    def clear(b: tuple[float, float, float, float]) -> bool:
        return all(b[2] <= o[0] or o[2] <= b[0] or b[3] <= o[1] or o[3] <= b[1]
                   for o in placed)

    for step in range(60):
        base = y + (step + 1) // 2 * 4 * (1 if step % 2 else -1)
        if clear(box(base)):
            placed.append(box(base))
            return base
    placed.append(box(y))
    return y


def _node_svg(wf: CompiledWorkflow, n: _Node, current: str | None) -> str:
    st = wf.states.get(n.name)
    cls = ["state"]
    if n.name == RETURN_TARGET:
        cls.append("pseudo")
    if st is not None and st.final:
        cls.append("final")
    if n.name == current:
        cls.append("current")
    x, y, w = n.x - n.width / 2, n.y - NODE_H / 2, n.width
    inner = ""
    if st is not None and st.final:
        inner = (f'<rect class="inner" x="{x + 3:.1f}" y="{y + 3:.1f}" width="{w - 6:.1f}" '
                 f'height="{NODE_H - 6}" rx="8"/>')
    tip = escape(st.instructions or n.name) if st is not None else "back to the interrupted state"
    return (f'<g class="{" ".join(cls)}" data-state="{escape(n.name)}"><title>{tip}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{NODE_H}" rx="10"/>{inner}'
            f'<text x="{n.x:.1f}" y="{n.y + 4.5:.1f}" text-anchor="middle">{escape(n.name)}'
            "</text></g>")
