"""Builds statewright's two native programs (Linux) with the platform's C compiler when the
package is built or installed (also `pip install -e .`):

- the sandbox launcher, `statewright/sandbox/swbox` (inside the package);
- the process-form hook's native client, `statewright/hook/swhook`, installed as
  `statewright-hook-native` in the environment's `bin/`, beside `statewright-hook`.

Without a compiler the package still installs: the kernel tier is then unavailable, which
`statewright doctor` reports and `sandbox: "required"` states refuse; and the hooks run
`statewright-hook` (Python) directly, which `statewright install` writes when the native client
is not there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = os.path.join("statewright", "sandbox", "swbox.c")
TARGET = os.path.join("statewright", "sandbox", "swbox")
CLIENT_SOURCE = os.path.join("statewright", "hook", "swhook.c")
CLIENT_TARGET = os.path.join("statewright", "hook", "swhook")
#: the client's name in `bin/` (statewright.hook.native.PROGRAM)
CLIENT_PROGRAM = "statewright-hook-native"


def build(root: str, source: str = SOURCE, target: str = TARGET) -> str | None:
    """Compile one program in place; returns why not, or None."""
    if not sys.platform.startswith("linux"):
        return f"no native programs on {sys.platform}"
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return "no C compiler (cc)"
    src, out = os.path.join(root, source), os.path.join(root, target)
    tmp = out + ".tmp"
    r = subprocess.run([cc, "-O2", "-Wall", "-o", tmp, src], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        return f"{cc} failed: {r.stderr.strip()[:2000]}"
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)
    return None


def install_client(root: str, bin_dir: str) -> str | None:
    """Build the native client and put it in `bin_dir` (beside `statewright-hook`); returns
    why not, or None. (`make venv`: the editable install's `bin/`.)"""
    why = build(root, CLIENT_SOURCE, CLIENT_TARGET)
    if why is not None:
        return why
    dest = os.path.join(bin_dir, CLIENT_PROGRAM)
    tmp = dest + ".tmp"
    shutil.copyfile(os.path.join(root, CLIENT_TARGET), tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
    return None


class LauncherHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        why = build(self.root)
        if why is not None:
            self.app.display_warning(f"statewright: the sandbox launcher was not built: {why}")
        else:
            build_data["force_include"][os.path.join(self.root, TARGET)] = TARGET
        client = build(self.root, CLIENT_SOURCE, CLIENT_TARGET)
        if client is not None:
            self.app.display_warning("statewright: the native hook client was not built "
                                     f"(the hooks run statewright-hook): {client}")
        else:
            build_data["shared_scripts"][os.path.join(self.root, CLIENT_TARGET)] = CLIENT_PROGRAM
        if why is None or client is None:
            build_data["pure_python"] = False
            build_data["infer_tag"] = True


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    problem = build(here)
    if problem:
        print(f"statewright: the sandbox launcher was not built: {problem}", file=sys.stderr)
    # `make venv`: the client into this interpreter's virtual environment, beside
    # statewright-hook (never into a system's bin/)
    client = install_client(here, os.path.join(sys.prefix, "bin")) \
        if sys.prefix != sys.base_prefix else "not run from a virtual environment"
    if client:
        print("statewright: the native hook client was not built (the hooks run "
              f"statewright-hook): {client}", file=sys.stderr)
    if problem:
        sys.exit(1)
