"""The session every kernel-corpus case shares (one per xdist worker): secrets, home, tmux
server outside, one template project per state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import Session


@pytest.fixture(scope="session")
def ksession(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    s = Session(tmp_path_factory.mktemp("kcorpus"))
    yield s
    s.close()
