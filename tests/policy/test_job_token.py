"""`parser.has_job_token`: a `&` left running is found the same way by the lookup of the node at
each `&` byte (trees without errors) and by the node-by-node search (trees with errors), but for
arithmetic's bitwise and, which is no job (a tree without errors only)."""

from __future__ import annotations

from pathlib import Path

from statewright.policy.shell import parser

LINES = [
    "sleep 10 &", "a & b", "a && b", "a >&2", "a &> log", "(sleep 1 &); echo", "echo '&'",
    "echo \\&", "x=$(a &)", "for i in 1 2; do a & done", "f() { b & }; f", "a | b & c",
    "echo a&&b", "a &>>log", "cat <(a &)", "coproc x { a; }", "a 2>&1 &", "echo \"a & b\"",
    # (a `&&` token is asked once: what follows it is still asked)
    "a && b &", "a&&b&", "a && b && c & d", "a&&b 2>&1 &", "x && { y & }", "a &&& b",
]


def _corpus() -> list[str]:
    here = Path(__file__).parent
    lines = list(LINES)
    for name in ("attacks.txt", "legit.txt"):
        lines += [ln for ln in (here / name).read_text().splitlines()
                  if ln.strip() and not ln.startswith("#")]
    return lines


def _by_node(root, bitwise_too: bool = True) -> bool:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "&" and (bitwise_too or n.parent.type != "binary_expression"):
            return True
        stack.extend(n.children)
    return False


def test_the_byte_lookup_and_the_node_by_node_search_agree() -> None:
    p = parser.bash_parser()
    checked = 0
    for line in _corpus():
        for text in (line, "  \n " + line, "é " + line):  # the root may not start at byte 0
            data = text.encode()
            root = p.parse(data).root_node
            if root.has_error:
                continue
            expected = _by_node(root, bitwise_too=False)
            assert parser.has_job_token(root, data) is expected, text
            assert parser.has_job_token(root) is expected, text
            checked += 1
    assert checked > 300


def test_a_tree_with_errors_is_searched_node_by_node() -> None:
    p = parser.bash_parser()
    for line, job in (("a & )", True), ("a && )", False), ("( a &", True)):
        root = p.parse(line.encode()).root_node
        assert root.has_error
        assert parser.has_job_token(root) is job, line


def test_arithmetic_bitwise_and_is_no_job_but_a_job_beside_it_is() -> None:
    p = parser.bash_parser()
    for line, job in (("echo $(( 5 & 3 ))", False), ("echo ${a[1&2]}", False),
                      ("(( x = 5 & 3 ))", False), ("x=$[5&3]", False), ("arr[1&2]=x", False),
                      ("echo $(( 5 & 3 )) &", True), ("(( x & 1 )) & sleep 9", True),
                      ("echo $(( 5 & 3 )); sleep 9 &", True)):
        root = p.parse(line.encode()).root_node
        assert not root.has_error, line
        assert parser.has_job_token(root) is job, line
