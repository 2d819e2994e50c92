"""A real PostgreSQL server for the tests: Debian's `postgresql` (installed by `make postgres`),
`initdb` + `pg_ctl` in a temp directory, listening on a Unix socket only.

`initdb` refuses to run as root, and CI runs as root: then the server runs as the `postgres`
user (`runuser`), or as `nobody` where there is no such user (`setpriv`). Its directory is made
under the system temp dir (pytest's own temp dirs are private to the user that runs the tests).

Each test gets a schema of its own in the one database (`PgServer.fresh_url`): the store's
tables are made by its own migrations there, and the URL selects it with `search_path`.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

USER = "sw"
DATABASE = "statewright"


def pg_bin_dir() -> Path | None:
    """Where `initdb` and `pg_ctl` are: the newest Debian version, else the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _as_server_user() -> list[str]:
    """The command prefix that runs the server's programs as a user other than root."""
    if os.geteuid() != 0:
        return []
    try:
        import pwd

        pwd.getpwnam("postgres")
        return ["runuser", "-u", "postgres", "--"]
    except KeyError:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _owner() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One server: started by `start`, stopped by `stop` (its directory removed)."""

    def __init__(self) -> None:
        self.dir: Path | None = None
        self.port = 0
        self.prefix = _as_server_user()

    @property
    def socket_dir(self) -> str:
        assert self.dir is not None
        return str(self.dir)

    def _run(self, *args: str) -> None:
        cp = subprocess.run([*self.prefix, *args], capture_output=True, text=True, timeout=120,
                            cwd="/")
        if cp.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {cp.stdout}{cp.stderr}")

    def start(self) -> PgServer:
        bindir = pg_bin_dir()
        if bindir is None:
            raise RuntimeError("PostgreSQL's initdb was not found: `make postgres` installs "
                               "Debian's postgresql (the tests run a real server)")
        self.dir = Path(tempfile.mkdtemp(prefix="sw-pg-"))
        owner = _owner()
        if owner is not None:
            os.chown(self.dir, *owner)
        os.chmod(self.dir, 0o755)  # the clients (this user) reach the socket in it
        data = str(self.dir / "data")
        self._run(str(bindir / "initdb"), "-D", data, "-A", "trust", "-U", USER, "--no-sync",
                  "--no-locale", "-E", "UTF8")
        self.port = _free_port()
        # durable as in production (fsync and synchronous_commit stay on): the tests check
        # what survives a killed connection; a Unix socket only, nothing on the network
        opts = (f"-k {self.socket_dir} -p {self.port} -c listen_addresses='' "
                "-c max_connections=200")
        self._run(str(bindir / "pg_ctl"), "-D", data, "-w", "-t", "60", "-l",
                  str(self.dir / "server.log"), "-o", opts, "start")
        import psycopg

        with psycopg.connect(self.admin_url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        return self

    def stop(self) -> None:
        if self.dir is None:
            return
        bindir = pg_bin_dir()
        try:
            if bindir is not None:
                self._run(str(bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-m",
                          "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def admin_url(self, database: str = DATABASE) -> str:
        return f"postgresql://{USER}@/{database}?host={self.socket_dir}&port={self.port}"

    def fresh_url(self) -> str:
        """The URL of a new, empty schema of the test database (one per test)."""
        import psycopg

        schema = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.admin_url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.admin_url()}&options=-csearch_path%3D{schema}"
