"""Controls: everyday work that must keep working under the sandbox, each with its effect
checked (the test ran and passed or failed, the file was edited, the commit exists, the package
installed into the project's own venv, ...) and the line's own exit status and output (the same
line run without statewright in another copy of the project). A refusal is a false deny."""

from . import project
from .rows import table, tar_bytes, zip_bytes

FAILING = "def test_fails():\n    assert 1 == 2\n"
POOL = ("from multiprocessing import Pool\n\n\ndef sq(x):\n    return x * x\n\n\n"
        "def test_pool():\n    with Pool(2) as p:\n        assert p.map(sq, [1, 2, 3]) == [1, 4, 9]\n")
TMP = ("def test_tmp(tmp_path):\n    (tmp_path / 'a.txt').write_text('x')\n"
       "    assert (tmp_path / 'a.txt').read_text() == 'x'\n")
SUBPROC = ("import subprocess\n\n\ndef test_git():\n"
           "    assert subprocess.run(['git', 'status'], capture_output=True).returncode == 0\n")
WRITES = ("def test_writes():\n    open('out.txt', 'w').write('ok')\n")
OK_PATCH = project.udiff({"src/calc.py": "def add(a, b):\n    return b + a\n"})
OK_MAIL = project.mail_patch({"src/calc.py": "def add(a, b):\n    return b + a\n"},
                             "calc: commute")
NPM_FAIL = ('{"name": "d", "version": "1.0.0", "scripts": '
            '{"test": "node -e \\"process.exit(3)\\""}}\n')
GNU_OK = "test:\n\t@echo hello from GNUmakefile\n"
TGZ = tar_bytes({"vendor/pkg/a.txt": "a\n", "vendor/pkg/b.txt": "b\n"}, gz=True)
ZIP = zip_bytes({"assets/logo.txt": "logo\n"})
APP_DB = ("import sqlite3\nc = sqlite3.connect('data/state.db')\n"
          "c.execute('create table if not exists t(x)')\nc.execute('insert into t values (1)')\n"
          "c.commit()\nprint('app db ok')\n")


def _r(id_, state, files, line, checks="", **extra):
    return (id_, state, files, line, checks, extra)


ROWS = table("K", "control", False, [
    # files at the top of the project and below
    _r("sed-i-readme", "work", {}, "sed -i 's/demo/Demo/' README.md", "rc=0 has:README.md=Demo"),
    _r("append-readme", "work", {}, "echo more >> README.md", "rc=0 has:README.md=more"),
    _r("touch-new-top", "work", {}, "touch NOTES.md", "rc=0 exists:NOTES.md"),
    _r("new-top-dir", "work", {}, "mkdir newdir && echo hi > newdir/f.txt",
       "rc=0 has:newdir/f.txt=hi"),
    _r("mv-top-dir", "work", {}, "mv sub sub2", "rc=0 exists:sub2/notes.txt gone:sub"),
    _r("rm-top-file", "work", {}, "rm README.md", "rc=0 gone:README.md"),
    _r("cp-top-file", "work", {}, "cp README.md README.bak", "rc=0 exists:README.bak"),
    _r("sed-i-src", "work", {}, "sed -i 's/a + b/b + a/' src/calc.py",
       "rc=0 has:src/calc.py=b + a"),
    _r("new-src-file", "work", {}, "printf 'x = 1\\n' > src/new.py", "rc=0 exists:src/new.py"),
    _r("mkdir-p-cp", "work", {}, "mkdir -p build/a/b && cp src/calc.py build/a/b/",
       "rc=0 exists:build/a/b/calc.py"),
    _r("rm-rf-build", "work", {"build/x.txt": "x\n"}, "rm -rf build && mkdir build",
       "rc=0 gone:build/x.txt exists:build"),
    _r("touch-src", "work", {}, "touch src/calc.py", "rc=0"),
    _r("app-json", "work", {}, "echo '{\"k\": 1}' > data/app.json", "rc=0 exists:data/app.json"),
    _r("budget-one-edit", "budget", {}, "sed -i 's/a + b/b + a/' src/calc.py",
       "rc=0 has:src/calc.py=b + a", scan=True,
       later=("Edit", {"file_path": "README.md", "old_string": "demo", "new_string": "Demo"})),
    # pytest, passing and failing, with its own exit status
    _r("pytest-pass", "work", {}, "pytest -q", "rc=0 out~1 passed exists:.pytest_cache"),
    _r("python-m-pytest", "work", {}, "python -m pytest -q", "rc=0 out~1 passed"),
    _r("pytest-fail", "work", {"tests/test_fail.py": FAILING}, "pytest -q",
       "rc=1 out~1 failed"),
    _r("pytest-red-fail", "red", {"tests/test_fail.py": FAILING}, "pytest -q",
       "rc=1 out~1 failed"),
    _r("pytest-red-pass", "red", {}, "pytest -q", "rc=0 out~1 passed"),
    _r("pytest-green", "green", {}, "python -m pytest -q", "rc=0 out~1 passed"),
    _r("pytest-refactor", "refactor", {}, "pytest -q", "rc=0"),
    _r("pytest-to-tmp-log", "work", {}, "pytest -q > {OUT}/x.log", "rc=0 outhas:x.log=passed"),
    _r("pytest-red-to-tmp-log", "red", {}, "pytest -q > {OUT}/x.log",
       "rc=0 outhas:x.log=passed"),
    _r("pytest-pipe-tail", "work", {}, "pytest -q | tail -1", "rc=0 out~passed"),
    _r("pytest-pool", "work", {"tests/test_pool.py": POOL}, "pytest -q", "rc=0 out~2 passed"),
    _r("pytest-red-pool", "red", {"tests/test_pool.py": POOL}, "pytest -q",
       "rc=0 out~2 passed"),
    _r("pytest-tmp-path", "work", {"tests/test_tmp.py": TMP}, "pytest -q", "rc=0 out~2 passed"),
    _r("pytest-subprocess-git", "work", {"tests/test_git.py": SUBPROC}, "pytest -q",
       "rc=0 out~2 passed"),
    _r("pytest-test-writes-file", "work", {"tests/test_w.py": WRITES}, "pytest -q",
       "rc=0 has:out.txt=ok"),
    _r("pytest-node-id", "work", {}, "pytest -q tests/test_calc.py::test_add",
       "rc=0 out~1 passed"),
    _r("pytest-k", "work", {}, "pytest -q -k add", "rc=0 out~1 passed"),
    _r("pytest-x-tb", "work", {}, "pytest -x -q --tb=short", "rc=0"),
    _r("pytest-no-cache", "work", {}, "python -m pytest -q -p no:cacheprovider", "rc=0"),
    _r("cd-tests-pytest", "work", {}, "cd tests && pytest -q", "rc=0 out~1 passed"),
    _r("pytest-collect-only", "red", {}, "pytest -q --collect-only", "rc=0 out~test_add"),
    # npm, make, scripts
    _r("npm-test", "work", {}, "npm test", "rc=0 out~js checks ok"),
    _r("npm-test-red", "red", {}, "npm test", "rc=0 out~js checks ok"),
    _r("npm-test-silent", "work", {}, "npm test --silent", "rc=0 out~js checks ok"),
    _r("npm-run-build", "work", {}, "npm run build", "rc=0 exists:build_gen_js.txt"),
    _r("npm-test-fails", "work", {"package.json": NPM_FAIL}, "npm test", "noref"),
    _r("make", "work", {}, "make", "rc=0 out~1 passed"),
    _r("make-build", "work", {}, "make build", "rc=0 has:build/out.txt=built"),
    _r("make-test", "work", {}, "make test", "rc=0 out~passed"),
    _r("gnumakefile-benign", "work", {"GNUmakefile": GNU_OK}, "make test",
       "rc=0 out~hello from GNUmakefile"),
    _r("script-by-name", "work", {}, "bash scripts/check.sh", "rc=0 out~checks ok"),
    _r("script-dot-slash", "work", {}, "./scripts/check.sh", "rc=0 out~checks ok"),
    _r("python-script", "work", {}, "python tools/gen.py", "rc=0 has:build_gen.txt=generated"),
    _r("node-script", "work", {}, "node tools/gen.js", "rc=0 exists:build_gen_js.txt"),
    _r("python-c-in-src", "work", {}, "cd src && python -c 'import calc; print(calc.add(1, 2))'",
       "rc=0 out~3"),
    # git
    _r("git-status", "work", {}, "git status --short", "rc=0"),
    _r("git-add-commit", "work", {"src/new.py": "y = 2\n"},
       "git add -A && git commit -qm 'feat: new module'", "rc=0 commit~feat: new module"),
    _r("git-commit-names-store", "work", {},
       "echo x >> README.md && git commit -qam 'keep .statewright/state.db out of git'",
       "rc=0 commit~state.db"),
    _r("git-log", "work", {}, "git log --oneline -3", "rc=0 out~initial"),
    _r("git-diff", "work", {"src/calc.py": "def add(a, b):\n    return b + a\n"},
       "git diff --stat", "rc=0 out~calc.py"),
    _r("git-branch-new", "work", {}, "git checkout -q -b feature/x && git branch --show-current",
       "rc=0 out~feature/x"),
    _r("git-switch-c", "work", {}, "git switch -q -c topic", "rc=0"),
    _r("git-stash-roundtrip", "work", {},
       "echo x >> README.md && git stash -q && git stash pop -q", "rc=0 has:README.md=x"),
    _r("git-apply-benign", "work", {"patches/ok.patch": OK_PATCH}, "git apply patches/ok.patch",
       "rc=0 has:src/calc.py=b + a"),
    _r("patch-benign", "work", {"patches/ok.patch": OK_PATCH}, "patch -p1 < patches/ok.patch",
       "rc=0 has:src/calc.py=b + a"),
    _r("git-am-benign", "work", {"patches/0001.patch": OK_MAIL}, "git am -q patches/0001.patch",
       "rc=0 commit~calc: commute"),
    _r("git-checkout-file", "work", {"src/calc.py": "broken\n"}, "git checkout -- src/calc.py",
       "rc=0 has:src/calc.py=return a + b"),
    _r("git-grep-state-db", "work", {}, "git grep -n state.db || true", "rc=0"),
    _r("git-rev-parse", "work", {}, "git rev-parse --abbrev-ref HEAD", "rc=0 out~main"),
    # pipes, redirects, reading, finding
    _r("cd-sub-ls", "work", {}, "cd sub && ls", "rc=0 out~notes.txt"),
    _r("pipe-grep-wc", "work", {}, "cat README.md | grep demo | wc -l", "rc=0 out~1"),
    _r("ls-to-tmp", "work", {}, "ls > {OUT}/ls.txt", "rc=0 outhas:ls.txt=README.md"),
    _r("echo-to-tmp", "work", {}, "echo hi > {OUT}/t.txt", "rc=0 outhas:t.txt=hi"),
    _r("tr-to-tmp", "work", {}, "cat src/calc.py | tr a-z A-Z > {OUT}/up.txt",
       "rc=0 outhas:up.txt=RETURN"),
    # (in `free`: a state whose allowed_commands list `find` needs `find -delete` spelled out,
    # as it needs `tar -x` and `pip install -e`: check 5, the workflow's own rule)
    _r("find-pyc-delete", "free", {"src/__pycache__/calc.cpython-311.pyc": "x"},
       "find . -name '*.pyc' -delete", "rc=0 gone:src/__pycache__/calc.cpython-311.pyc"),
    _r("grep-state-db", "work", {}, "grep -rn state.db src tests", "rc=1"),
    _r("sqlite3-app-db", "work", {}, "sqlite3 data/state.db 'create table t(x); "
                                     "insert into t values (1); select count(*) from t;'",
       "rc=0 exists:data/state.db out~1"),
    _r("python-app-db", "work", {"tools/db.py": APP_DB}, "python tools/db.py",
       "rc=0 exists:data/state.db out~app db ok"),
    _r("tar-to-tmp", "work", {}, "tar czf {OUT}/src.tgz src && tar tzf {OUT}/src.tgz",
       "rc=0 out~src/calc.py"),
    _r("tar-extract", "free", {"patches/v.tgz": TGZ}, "tar xzf patches/v.tgz",
       "rc=0 has:vendor/pkg/a.txt=a"),
    _r("unzip-into-build", "work", {"patches/a.zip": ZIP}, "unzip -o -q patches/a.zip -d build",
       "rc=0 has:build/assets/logo.txt=logo"),
    _r("head-wc-sort", "work", {}, "head -2 README.md && wc -l src/calc.py && sort README.md",
       "rc=0 out~calc.py"),
    _r("test-false", "work", {}, "test -f nope.txt", "rc=1"),
    _r("xargs-echo", "work", {}, "ls src | xargs -I{} echo file:{}", "rc=0 out~file:calc.py"),
    _r("diff-same", "work", {}, "diff README.md README.md && echo same", "rc=0 out~same"),
    _r("free-ls", "free", {}, "ls -a", "rc=0 out~README.md"),
    _r("free-pytest", "free", {}, "pytest -q", "rc=0 out~1 passed"),
    # the project's own venv
    _r("pip-install-e", "free", {},
       "venv/bin/python -m pip install -q --no-build-isolation --no-index -e .",
       "rc=0 import:calc noref"),
])

# everyday work in the `ro` state (read-only tests and module) and in the `plain` state
ROWS += table("K", "control", False, [
    _r("ro-pytest", "ro", {}, "pytest -q", "rc=0 out~1 passed"),
    _r("ro-sed-readme", "ro", {}, "sed -i 's/demo/Demo/' README.md", "rc=0 has:README.md=Demo"),
    _r("ro-new-doc", "ro", {}, "mkdir -p docs && echo notes > docs/notes.md",
       "rc=0 has:docs/notes.md=notes"),
    _r("ro-make-build", "ro", {}, "make build", "rc=0 has:build/out.txt=built"),
    _r("plain-sed-i", "plain", {}, "sed -i 's/a + b/b + a/' src/calc.py",
       "rc=0 has:src/calc.py=b + a"),
    _r("plain-cp-mv", "plain", {}, "cp README.md R2.md && mv R2.md R3.md", "rc=0 exists:R3.md"),
    _r("plain-sed-f", "plain", {"tools/x.sed": "s/demo/Demo/\n"},
       "sed -i -f tools/x.sed README.md", "rc=0 has:README.md=Demo"),
    _r("plain-pytest", "plain", {}, "pytest -q", "rc=0 out~1 passed"),
])
