"""A real `statewright ui` process for the web page's tests, and plain HTTP to it."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import bin_path, clean_env

LINK = re.compile(r"(http://127\.0\.0\.1:(\d+))/#login=([A-Za-z0-9_-]+)")


class UiProcess:
    """`statewright ui --port 0 --project ROOT`, started and stopped by its own pid."""

    def __init__(self, project: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.project = project
        self.proc = subprocess.Popen(
            [bin_path("statewright"), "ui", "--port", "0", "--project", str(project), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=clean_env(**(env or {})))
        assert self.proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 60
        m = None
        while m is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"statewright ui ended: {''.join(lines)}"
                                   f"{self.proc.stderr.read() if self.proc.stderr else ''}")
            lines.append(line)
            m = LINK.search(line)
        assert m is not None, lines
        self.printed = "".join(lines)
        self.base, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        self.login_url = m.group(0)
        self._wait_ready()

    def _wait_ready(self) -> None:
        for _ in range(200):
            try:
                if self.request("GET", "/static/ui.css")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("statewright ui does not answer")

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request, headers exactly as given (plus Host unless given)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        hdrs = {"Host": f"127.0.0.1:{self.port}"}
        hdrs.update(headers or {})
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        resp = conn.getresponse()
        out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        conn.close()
        return out

    def sign_in(self, token: str | None = None) -> tuple[int, str | None]:
        status, _h, body = self.request(
            "POST", "/api/session", {"token": token or self.token},
            {"Origin": self.base, "Content-Type": "application/json"})
        return status, json.loads(body).get("key")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        finally:
            for f in (self.proc.stdout, self.proc.stderr):
                if f is not None:
                    f.close()
