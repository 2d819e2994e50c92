"""Builds statewright's sandbox launcher (`statewright/sandbox/swbox`, Linux) with the
platform's C compiler when the package is built or installed (also `pip install -e .`).

Without a compiler the package still installs: the kernel tier is then unavailable, which
`statewright doctor` reports and `sandbox: "required"` states refuse."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = os.path.join("statewright", "sandbox", "swbox.c")
TARGET = os.path.join("statewright", "sandbox", "swbox")


def build(root: str) -> str | None:
    """Compile the launcher in place; returns why not, or None."""
    if not sys.platform.startswith("linux"):
        return f"no launcher on {sys.platform}"
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return "no C compiler (cc)"
    src, out = os.path.join(root, SOURCE), os.path.join(root, TARGET)
    tmp = out + ".tmp"
    r = subprocess.run([cc, "-O2", "-Wall", "-o", tmp, src], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        return f"{cc} failed: {r.stderr.strip()[:2000]}"
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)
    return None


class LauncherHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        why = build(self.root)
        if why is not None:
            self.app.display_warning(f"statewright: the sandbox launcher was not built: {why}")
            return
        build_data["force_include"][os.path.join(self.root, TARGET)] = TARGET
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    problem = build(os.path.dirname(os.path.abspath(__file__)))
    if problem:
        print(f"statewright: the sandbox launcher was not built: {problem}", file=sys.stderr)
        sys.exit(1)
