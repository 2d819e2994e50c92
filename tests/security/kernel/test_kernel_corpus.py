"""Binding by the kernel (DESIGN section 4): every row of the corpus tables, carried out as the
host would, its effects checked on disk, in the store and in what the agent's code could
exfiltrate (`harness.py`). One test per row, so each case's failure is its own; the rows of a
class share their template projects (`conftest.ksession`) and stay together on one xdist worker
(`--dist loadgroup`-friendly: each test carries its class as its group)."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import (
    cases_controls,
    cases_data,
    cases_effect,
    cases_env,
    cases_files,
    cases_leftovers,
    cases_outside,
    cases_procs,
    cases_readonly,
    cases_store,
)
from .harness import PLAIN, Session, record, run
from .rows import Row

pytestmark = pytest.mark.e2e

TABLES = (cases_files, cases_store, cases_env, cases_procs, cases_effect, cases_data,
          cases_leftovers, cases_outside, cases_readonly, cases_controls)
ROWS: list[Row] = [r for t in TABLES for r in t.ROWS]


def test_ids_are_unique_and_the_corpus_is_large_enough() -> None:
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    attacks = [r for r in ROWS if r.kind == "attack"]
    controls = [r for r in ROWS if r.kind == "control"]
    assert len(attacks) >= 150 and len(controls) >= 70, (len(attacks), len(controls))


@pytest.mark.parametrize("row", [pytest.param(r, id=r.id, marks=pytest.mark.xdist_group(r.cls))
                                 for r in ROWS])
def test_row(row: Row, ksession: Session, tmp_path: Path) -> None:
    outcome = run(ksession, row, tmp_path)
    record(outcome, row)
    if PLAIN and row.kind == "attack":  # the proof that the attack works without statewright
        assert outcome.findings, f"{row.id}: the attack did nothing even without statewright"
        return
    if outcome.findings:
        head = ("ESCAPED" if row.kind == "attack" else "BROKEN") + \
            f" ({outcome.decision or 'no decision'}; " + \
            ("under the launcher" if outcome.sandboxed else
             "rewritten, no launcher" if outcome.rewritten else "run as sent") + \
            f"; exit {outcome.rc})"
        pytest.fail(head + "\n  - " + "\n  - ".join(outcome.findings), pytrace=False)
