"""The hash chain of a run's history (tamper evidence; both stores write it, `statewright audit
verify` checks it offline). Stdlib only: the hook appends history rows.

Each history row of a run carries `prev_hash` (the `hash` of the run's row before it; 64 zeros
for the first) and `hash` = SHA-256 of the bytes of `prev_hash` followed by the row's canonical
form: the compact JSON (ASCII, `","` and `":"` separators, keys in the order written) of

    [run_id, at, actor, kind, version, state, machine, data]

`data` is the row's data exactly as stored (the store writes it with the same encoder, so its
text and a re-encoding of what it parses to are the same bytes). Changing a row changes its
hash; removing or reordering rows breaks the link of the row after; an export says each run's
last hash and count, so cutting rows off the end is seen when checked against the store (or a
copy of the heads kept elsewhere).
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, compact_dumps, sha256

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

GENESIS = "0" * 64
#: JSON as the store writes it: compact, anything unknown as its `str`
to_json = compact_dumps(str)


def canonical(run_id: str, at: float, actor: str, kind: str, version: int, state: str | None,
              machine: str | None, data_json: str) -> str:
    """The canonical text of a history row whose data is already JSON (`data_json`)."""
    head = to_json([run_id, at, actor, kind, version, state, machine])
    return f"{head[:-1]},{data_json}]"


def link(prev_hash: str, text: str) -> str:
    """The hash of a row of canonical `text` after a row whose hash is `prev_hash`."""
    return str(sha256(bytes.fromhex(prev_hash) + text.encode("ascii")).hexdigest())


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The hash of an exported history row (`{run_id, at, actor, kind, version, state, machine,
    data}`) after `prev_hash`: what `audit verify` recomputes."""
    text = canonical(row["run_id"], row["at"], row["actor"], row["kind"], row["version"],
                     row["state"], row.get("machine"), to_json(row["data"]))
    return link(prev_hash, text)


#: the first line of an export (`statewright audit export`): what it is and its format
EXPORT_FORMAT = "statewright-audit/1"


def verify_export(lines: list[str]) -> tuple[dict[str, int], list[str]]:
    """Check an export offline: every row's hash, every link, each run's head (its count and
    last hash). ({run_id: rows checked}, problems, each naming its line); no problems: intact.
    A row changed shows as a hash that does not match it; a row removed or moved as a link
    that does not match the row before it; rows cut off the end as a head that does not match.
    """
    problems: list[str] = []
    heads: dict[str, str] = {}
    counts: dict[str, int] = {}
    declared: dict[str, tuple[int, dict[str, Any]]] = {}
    from ..lean import loads

    if not lines or not lines[0].strip():
        return {}, ["line 1: empty: not an export of statewright's history"]
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = loads(line)
        except ValueError as exc:
            problems.append(f"line {no}: not JSON ({exc})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {no}: not a JSON object")
            continue
        kind = row.get("type")
        if no == 1:
            if kind != "header" or row.get("format") != EXPORT_FORMAT:
                return {}, [f"line 1: not an export of statewright's history (expected a header"
                            f" of format {EXPORT_FORMAT})"]
            continue
        if kind == "head":
            declared[str(row.get("run_id"))] = (no, row)
            continue
        if kind != "event":
            problems.append(f"line {no}: unknown row type {kind!r}")
            continue
        try:
            rid = row["run_id"]
            prev = heads.get(rid, GENESIS)
            if row.get("prev_hash") != prev:
                problems.append(
                    f"line {no}: run {rid}: its link does not match the row before it (a row "
                    "was removed, inserted or moved here)")
            computed = row_hash(str(row.get("prev_hash") or prev), row)
            if computed != row.get("hash"):
                problems.append(f"line {no}: run {rid}: the row does not match its hash (it was "
                                "changed)")
            heads[rid] = str(row.get("hash"))
            counts[rid] = counts.get(rid, 0) + 1
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"line {no}: a history row without its fields ({exc})")
    for rid in sorted(set(declared) | set(counts)):
        if rid not in declared:
            problems.append(f"run {rid}: no head row (the export was cut short)")
            continue
        no, head = declared[rid]
        if head.get("count") != counts.get(rid, 0) or head.get("hash") != heads.get(rid, GENESIS):
            problems.append(
                f"line {no}: run {rid}: the head says {head.get('count')} rows ending in "
                f"{str(head.get('hash'))[:12]}, the rows give {counts.get(rid, 0)} ending in "
                f"{heads.get(rid, GENESIS)[:12]} (rows were removed or added)")
    return counts, problems
