"""What makes a test runner's line a real run of the suite (DESIGN section 3, `_observed`).

`_observed.commands.<entry>` credits the last line an `allowed_commands` entry matched. A line
that selects or deselects tests, only collects or lists them, prints a version or help, or
changes what runs through its options is no evidence that the suite passes: such a line is
not credited (the entry keeps what it had). Nor is a run after the agent changed, in this
state, the configuration that decides what runs (`Runner.config`: `conftest.py`,
`pytest.ini`, `package.json`, ...).

One `Runner` per test runner, as data, each with examples that must and must not count
(`tests/policy/test_runs.py` checks them all): the options that make a line partial
(`partial`: option -> why; a short option matches glued and in a cluster), the options that
take a value (so their value is not read as an operand), what operands mean (`operands`:
`"select"` every operand narrows what runs, `"files"` an operand naming a file or a test id
does, a directory does not, `"ignore"` operands are not judged), and for runners started
through a package manager the words after `--` (handed to the script: each selects).

Stdlib only; pure.
"""

from __future__ import annotations

from ...lean import Record, set_field
from .spec import getopt

SELECT, FILES, IGNORE = "select", "files", "ignore"


class RunExample(Record):
    """A command line and whether it is a real run of the suite (evidence)."""

    __slots__ = __match_args__ = _fields = ("line", "evidence")
    line: str
    evidence: bool

    def __init__(self, line: str, evidence: bool) -> None:
        set_field(self, "line", line)
        set_field(self, "evidence", evidence)


class Runner(Record):
    """What statewright knows about one test runner's command line."""

    __slots__ = __match_args__ = _fields = ("names", "subcommand", "partial", "short_values",
                                            "long_values", "operands", "script_args",
                                            "config", "examples")
    names: tuple[str, ...]
    subcommand: str | None
    partial: dict[str, str]
    short_values: str
    long_values: frozenset[str]
    operands: str
    script_args: bool
    config: tuple[str, ...]
    examples: tuple[RunExample, ...]

    def __init__(self, names: tuple[str, ...], *, subcommand: str | None = None,
                 partial: dict[str, str] | None = None, short_values: str = "",
                 long_values: frozenset[str] = frozenset(), operands: str = IGNORE,
                 script_args: bool = False, config: tuple[str, ...] = (),
                 examples: tuple[RunExample, ...] = ()) -> None:
        set_field(self, "names", names)  # the program's names (a path's last component too)
        set_field(self, "subcommand", subcommand)  # `npm test`: the runner is this subcommand
        set_field(self, "partial", partial or {})  # option -> why the line is not a full run
        set_field(self, "short_values", short_values)  # short options that take a value
        set_field(self, "long_values", long_values)  # long options that take the next word
        set_field(self, "operands", operands)  # SELECT | FILES | IGNORE
        set_field(self, "script_args", script_args)  # words after `--` go to a script: select
        set_field(self, "config", config)  # project-relative globs that decide what runs
        set_field(self, "examples", examples)


_VERSION_HELP = {"--version": "prints a version", "-V": "prints a version",
                 "--help": "prints help", "-h": "prints help"}
_PY_CONFIG = ("**/conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg",
              "tox.ini")
_JS_CONFIG = ("package.json", "**/jest.config.*", "**/vitest.config.*", "**/vite.config.*",
              "**/.mocharc*", "**/babel.config.*", "**/.babelrc*", "**/tsconfig.json")

PYTEST = Runner(
    ("pytest", "py.test"),
    partial={**_VERSION_HELP,
             "-k": "selects tests by name", "-m": "selects tests by marker",
             "--collect-only": "only collects tests", "--co": "only collects tests",
             "--lf": "runs only the tests that failed last time",
             "--last-failed": "runs only the tests that failed last time",
             "--sw": "starts at the last failing test", "--stepwise": "starts at the last "
             "failing test", "--sw-skip": "skips the first failing test",
             "--stepwise-skip": "skips the first failing test",
             "--deselect": "deselects tests", "--ignore": "ignores test paths",
             "--ignore-glob": "ignores test paths", "-o": "overrides the configuration that "
             "decides what runs", "--override-ini": "overrides the configuration that decides "
             "what runs", "--fixtures": "only lists fixtures", "--markers": "only lists "
             "markers", "--setup-only": "runs no test", "--setup-plan": "runs no test",
             "--continue-on-collection-errors": "runs the tests that could be collected",
             "--noconftest": "drops the project's conftest.py files",
             "--trace-config": "only prints its configuration",
             "--runxfail": "changes what counts as passing"},
    short_values="kmrWcpon", long_values=frozenset({
        "--deselect", "--ignore", "--ignore-glob", "--override-ini", "--maxfail", "--tb",
        "--durations", "--log-level", "--basetemp", "--junitxml", "--junit-xml", "--rootdir",
        "--confcutdir", "--import-mode", "--cov", "--cov-report", "--cov-fail-under",
        "--timeout", "--numprocesses", "--dist", "--color", "--capture"}),
    operands=FILES, config=_PY_CONFIG,
    examples=(
        RunExample("pytest", True), RunExample("pytest -q", True),
        RunExample("pytest -x -q tests", True), RunExample("pytest -q --maxfail=1", True),
        RunExample("pytest -n 2 -q", True), RunExample("pytest --tb=short tests/", True),
        RunExample("python -m pytest -q", True), RunExample("python3 -m pytest", True),
        RunExample("pytest -p no:cacheprovider -q", True),
        RunExample("pytest --junitxml report.xml", True),
        RunExample("pytest --version", False), RunExample("pytest -V", False),
        RunExample("pytest -q --collect-only", False), RunExample("pytest --co -q", False),
        RunExample("pytest -q -k 'not failing'", False), RunExample("pytest -knot_x", False),
        RunExample("pytest -qk x", False), RunExample("pytest -m 'not slow'", False),
        RunExample("pytest --lf", False), RunExample("pytest --last-failed", False),
        RunExample("pytest --deselect tests/test_a.py::test_b", False),
        RunExample("pytest --ignore=tests/test_a.py", False),
        RunExample("pytest tests/test_a.py", False),
        RunExample("pytest tests/test_a.py::test_b", False),
        RunExample("python -m pytest --collect-only", False),
        RunExample("pytest -o python_files=none.py", False),
        RunExample("pytest -h", False), RunExample("pytest --sw", False),
    ),
)

_JEST_PARTIAL = {**_VERSION_HELP, "-t": "selects tests by name",
                 "--testNamePattern": "selects tests by name",
                 "--testPathPattern": "selects test files",
                 "--testPathPatterns": "selects test files",
                 "--testPathIgnorePatterns": "ignores test files",
                 "-o": "runs only tests of changed files",
                 "--onlyChanged": "runs only tests of changed files",
                 "--changedSince": "runs only tests of changed files",
                 "--lastCommit": "runs only tests of the last commit's files",
                 "--findRelatedTests": "runs only the tests of some files",
                 "--listTests": "only lists tests", "--passWithNoTests": "passes with no tests",
                 "--shard": "runs a part of the suite", "--changed": "runs only tests of "
                 "changed files", "--related": "runs only the tests of some files",
                 "--bail": "stops early"}

JEST = Runner(
    ("jest", "vitest", "mocha"),
    partial={**_JEST_PARTIAL, "--grep": "selects tests by name", "-g": "selects tests by name",
             "--fgrep": "selects tests by name", "--spec": "selects test files"},
    short_values="tg", long_values=frozenset({"--testNamePattern", "--testPathPattern",
                                              "--changedSince", "--shard", "--grep",
                                              "--config", "--reporter"}),
    operands=SELECT, config=_JS_CONFIG,
    examples=(
        RunExample("jest", True), RunExample("npx jest --ci", True),
        RunExample("vitest run", True), RunExample("mocha", True),
        RunExample("jest -t 'adds'", False), RunExample("jest src/a.test.js", False),
        RunExample("jest --onlyChanged", False), RunExample("jest --listTests", False),
        RunExample("vitest run --changed", False), RunExample("mocha --grep x", False),
        RunExample("jest --version", False), RunExample("npx vitest run -t x", False),
    ),
)

NPM_TEST = Runner(
    ("npm", "pnpm", "yarn", "bun"), subcommand="test",
    partial={**_VERSION_HELP}, script_args=True, operands=SELECT, config=_JS_CONFIG,
    examples=(
        RunExample("npm test", True), RunExample("npm test --silent", True),
        RunExample("yarn test", True), RunExample("pnpm test", True),
        RunExample("npm test -- -t adds", False), RunExample("npm test -- --listTests", False),
        RunExample("yarn test src/a.test.js", False), RunExample("npm test -- --version", False),
    ),
)

CARGO_TEST = Runner(
    ("cargo",), subcommand="test",
    partial={**_VERSION_HELP, "--no-run": "only compiles the tests", "--lib": "runs only the "
             "library's tests", "--bins": "runs only the binaries' tests", "--bin": "runs "
             "only one binary's tests", "--test": "runs only one test target", "--tests":
             "runs only the test targets", "--doc": "runs only the doc tests", "--example":
             "runs only an example", "--examples": "runs only the examples", "--bench":
             "runs only a benchmark", "--exclude": "leaves packages out", "-p": "runs only "
             "one package", "--package": "runs only one package", "--list": "only lists "
             "tests", "--skip": "skips tests", "--exact": "selects tests by exact name",
             "--ignored": "runs only the ignored tests", "--no-fail-fast": ""},
    short_values="pj", long_values=frozenset({"--test", "--bin", "--example", "--bench",
                                              "--exclude", "--package", "--skip", "--jobs",
                                              "--features", "--target", "--profile",
                                              "--manifest-path"}),
    script_args=True, operands=SELECT,
    config=("Cargo.toml", "**/Cargo.toml", ".cargo/config", ".cargo/config.toml", "build.rs"),
    examples=(
        RunExample("cargo test", True), RunExample("cargo test --workspace", True),
        RunExample("cargo test -q", True), RunExample("cargo test --features x", True),
        RunExample("cargo test parse", False), RunExample("cargo test --no-run", False),
        RunExample("cargo test -- --skip slow", False), RunExample("cargo test --lib", False),
        RunExample("cargo test -- --list", False), RunExample("cargo test -p core", False),
        RunExample("cargo test --version", False),
    ),
)

GO_TEST = Runner(
    ("go",), subcommand="test",
    partial={**_VERSION_HELP, "-run": "selects tests by name", "-skip": "skips tests",
             "-list": "only lists tests", "-short": "lets tests skip their long parts",
             "-bench": "runs benchmarks", "-fuzz": "fuzzes", "-c": "only compiles the tests",
             "-exec": "runs the tests with another program", "-json": ""},
    operands=IGNORE, config=("go.mod", "go.work", "**/go.mod"),
    examples=(
        RunExample("go test ./...", True), RunExample("go test -v -count=1 ./...", True),
        RunExample("go test -run TestParse ./...", False), RunExample("go test -short ./...",
                                                                       False),
        RunExample("go test -list . ./...", False), RunExample("go test -c ./pkg", False),
    ),
)

RUNNERS: tuple[Runner, ...] = (PYTEST, JEST, NPM_TEST, CARGO_TEST, GO_TEST)
_BY_NAME: dict[str, tuple[Runner, ...]] = {}
for _r in RUNNERS:
    for _n in _r.names:
        _BY_NAME[_n] = (*_BY_NAME.get(_n, ()), _r)
_LAUNCHERS = frozenset({"npx", "pnpx", "bunx"})
_PYTHONS = ("python", "python3")


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def runner_of(argv: list[str]) -> tuple[Runner, list[str]] | None:
    """The runner a command line starts and the words it is given, else None
    (`python -m pytest -q` -> (PYTEST, ["-q"]); `npx jest` -> (JEST, []))."""
    if not argv:
        return None
    name, args = _base(argv[0]), argv[1:]
    if name in _LAUNCHERS:
        while args and args[0].startswith("-"):
            args = args[1:]
        if not args:
            return None
        name, args = _base(args[0]), args[1:]
    if name.startswith(_PYTHONS) and len(args) >= 2 and args[0] == "-m":
        name, args = args[1], args[2:]
    if name == "vitest" and args[:1] == ["run"]:
        args = args[1:]  # (`vitest run`: once, not watching)
    for r in _BY_NAME.get(name, ()):
        if r.subcommand is None:
            return r, args
        ops = [i for i, a in enumerate(args) if not a.startswith("-")]
        if ops and args[ops[0]] == r.subcommand:
            return r, args[:ops[0]] + args[ops[0] + 1:]
    return None


def not_a_full_run(argv: list[str]) -> str | None:
    """Why this command line (the runner and its words) is not a run of the whole suite, or
    None when it is one (or is no known runner's)."""
    found = runner_of(argv)
    if found is None:
        return None
    r, args = found
    script: list[str] = []
    if "--" in args and (r.script_args or r.operands != IGNORE):
        k = args.index("--")
        args, script = args[:k], args[k + 1:]
    if r is GO_TEST:  # go's flags have one dash and no clusters: `-run=X`, `-run X`
        for a in args:
            key = a.split("=", 1)[0]
            if key.startswith("--"):
                key = key[1:]
            why = r.partial.get(key)
            if why:
                return f"`{key}` {why}"
        return None
    opts, operands = getopt(args, r.short_values, r.long_values)
    for opt, _value, _i, _j in opts:
        why = r.partial.get(opt)
        if why:
            return f"`{opt}` {why}"
    for i in operands:
        op = args[i]
        if r.operands == SELECT:
            return f"`{op}` selects what runs"
        if r.operands == FILES and ("::" in op or op.endswith(".py")):
            return f"`{op}` selects what runs"
    for w in script:
        key = w.split("=", 1)[0]
        why = r.partial.get(key)
        if why:
            return f"`{key}` {why}"
        return f"`-- {w}` hands the script words that select what runs"
    return None


def config_of(argv: list[str]) -> tuple[str, ...]:
    """The globs of the configuration that decides what this runner's line runs (empty for
    a line that is no known runner's)."""
    found = runner_of(argv)
    return found[0].config if found is not None else ()
