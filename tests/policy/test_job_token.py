"""`parser.has_job_token`: a `&` left running is found the same way by the node-by-node search
(a process deciding its first lines) and by the tree-sitter query (compiled once a process has
searched `QUERY_AFTER` trees)."""

from __future__ import annotations

from pathlib import Path

from statewright.policy.shell import parser

LINES = [
    "sleep 10 &", "a & b", "a && b", "a >&2", "a &> log", "(sleep 1 &); echo", "echo '&'",
    "echo \\&", "x=$(a &)", "for i in 1 2; do a & done", "f() { b & }; f", "a | b & c",
    "echo a&&b", "a &>>log", "cat <(a &)", "coproc x { a; }", "a 2>&1 &", "echo \"a & b\"",
]


def _corpus() -> list[str]:
    here = Path(__file__).parent
    lines = list(LINES)
    for name in ("attacks.txt", "legit.txt"):
        lines += [ln for ln in (here / name).read_text().splitlines()
                  if ln.strip() and not ln.startswith("#")]
    return lines


def test_the_query_and_the_node_by_node_search_agree() -> None:
    p = parser.bash_parser()
    query = parser._job_query()
    assert query is not None
    checked = 0
    for line in _corpus():
        root = p.parse(line.encode()).root_node
        if root.has_error:
            continue
        stack, by_node = [root], False
        while stack:
            n = stack.pop()
            if n.type == "&":
                by_node = True
                break
            stack.extend(n.children)
        assert bool(query.captures(root)) == by_node, line
        checked += 1
    assert checked > 100


def test_a_process_compiles_the_query_only_after_its_first_trees(monkeypatch) -> None:
    monkeypatch.setattr(parser, "_JOBS", [])
    monkeypatch.setattr(parser, "_SEARCHED", [0])
    p = parser.bash_parser()
    for i in range(parser.QUERY_AFTER):
        line, job = (b"sleep 1 &", True) if i % 2 else (b"a && b", False)
        assert parser.has_job_token(p.parse(line).root_node) is job
    assert parser._JOBS == []  # the first trees were searched node by node
    assert parser.has_job_token(p.parse(b"sleep 1 &").root_node)
    assert parser._JOBS and parser._JOBS[0] is not None
    assert not parser.has_job_token(p.parse(b"a && b").root_node)
