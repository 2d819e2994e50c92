"""The macOS Seatbelt policy of a `Profile` (`statewright.sandbox.seatbelt`): the exact text of a
few profiles (`seatbelt/*.sb`, reviewed by hand), its structure for any profile (balanced,
every parameter defined and used, no path in the text), the argv, and odd paths. No Mac runs
here: what the kernel makes of the text is untested (docs/policy.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statewright.sandbox import Profile
from statewright.sandbox.seatbelt import (
    ENV,
    SANDBOX_EXEC,
    argv,
    canonical,
    policy,
    sbpl_string,
    temp_dirs,
)

PINNED = Path(__file__).parent / "seatbelt"
HOME = "/Users/me"
ROOT = HOME + "/proj"

CASES = {
    "plain": (Profile(ROOT), ("/private/tmp",),
              [("ROOT", ROOT), ("TMP_0", "/private/tmp")]),
    "tdd-green": (Profile(ROOT, read_only=(ROOT + "/workflows", ROOT + "/.git/hooks", ROOT + "/tests"),
                          hidden=(ROOT + "/.statewright",), scrub=("AWS_SECRET",), network=False),
                  ("/private/tmp", "/private/var/folders/xy/T"),
                  [("ROOT", ROOT), ("TMP_0", "/private/tmp"), ("TMP_1", "/private/var/folders/xy/T"),
                   ("RO_0", ROOT + "/workflows"), ("RO_1", ROOT + "/.git/hooks"), ("RO_2", ROOT + "/tests"),
                   ("HIDDEN_0", ROOT + "/.statewright"), ("UP_0", ROOT), ("UP_1", HOME), ("UP_2", "/Users"),
                   ("UP_3", ROOT + "/.git")]),
    "sockets": (Profile(ROOT, read_only=(ROOT + "/workflows",),
                        hidden=(ROOT + "/.statewright", HOME + "/.config/statewright"), unix_sockets=True),
                ("/private/tmp",),
                [("ROOT", ROOT), ("TMP_0", "/private/tmp"), ("RO_0", ROOT + "/workflows"),
                 ("HIDDEN_0", ROOT + "/.statewright"), ("HIDDEN_1", HOME + "/.config/statewright"),
                 ("UP_0", ROOT), ("UP_1", HOME), ("UP_2", "/Users"), ("UP_3", HOME + "/.config")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_text_and_parameters(name):
    profile, temps, params = CASES[name]
    text, got = policy(profile, temps)
    assert text == (PINNED / f"{name}.sb").read_text()
    assert got == params


def _forms(text: str) -> list[str]:
    """The top-level forms of an SBPL text (comments dropped), checking the parentheses
    balance outside strings and regexes."""
    forms, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == ";" and depth == 0:
            i = text.index("\n", i)
            continue
        if ch == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            assert depth >= 0, text[:i]
            if depth == 0:
                forms.append(text[start:i + 1])
        i += 1
    assert depth == 0
    return forms


@pytest.mark.parametrize("name", sorted(CASES))
def test_structure(name):
    profile, temps, _ = CASES[name]
    text, params = policy(profile, temps)
    forms = _forms(text)
    assert forms[:2] == ["(version 1)", "(deny default)"]
    used = set(re.findall(r'\(param "([A-Z_0-9]+)"\)', text))
    assert used == {n for n, _ in params}  # every parameter used, none undefined
    assert len({n for n, _ in params}) == len(params)
    for _, path in params:  # paths travel as parameters only
        assert path not in text
    # the broad allows come before the denies that narrow them (the last match wins)
    heads = [f.split("\n")[0] for f in forms]
    assert heads.index("(allow file-read*)") < next(
        (i for i, h in enumerate(heads) if h == "(deny file-read*"), len(heads))
    if profile.read_only or profile.hidden:
        assert heads.index("(allow file-write*") < heads.index("(deny file-write*") < \
            heads.index("(deny file-write-unlink file-write-create")
    assert "(allow signal (target same-sandbox))" in heads
    assert "(allow process-info* (target same-sandbox))" in heads
    assert not any(h.startswith(("(allow signal)", "(allow process-info*)", "(allow network*)",
                                 "(allow mach-priv-task-port")) for h in heads)
    assert "kern.procargs" not in text


def test_writes_carve_out_every_protected_path_inside_a_writable_root():
    profile = Profile("/w/proj", read_only=("/w/proj/a", "/tmp/x/b", "/elsewhere/c"), hidden=("/w/proj/.s",))
    text, params = policy(profile, ("/tmp/x",))
    names = dict(params)
    assert names["ROOT"] == "/w/proj" and names["TMP_0"] == "/tmp/x"
    allow = next(f for f in _forms(text) if f.startswith("(allow file-write*"))
    assert allow == ('(allow file-write*\n'
                     '  (require-all (subpath (param "ROOT"))\n'
                     '    (require-not (subpath (param "RO_0")))\n'
                     '    (require-not (subpath (param "HIDDEN_0"))))\n'
                     '  (require-all (subpath (param "TMP_0"))\n'
                     '    (require-not (subpath (param "RO_1"))))\n'
                     ')')
    # a protected path above a writable root takes the whole root out
    text, _ = policy(Profile("/w/proj", read_only=("/w",)), ())
    assert '(require-all (subpath (param "ROOT"))\n    (require-not (subpath (param "RO_0"))))' in text


def test_move_blocking_names_every_ancestor_once():
    profile = Profile("/w/p", read_only=("/w/p/a/b/c", "/w/p/a/d"))
    text, params = policy(profile, ())
    ups = [p for n, p in params if n.startswith("UP_")]
    assert ups == ["/w/p/a/b", "/w/p/a", "/w/p", "/w"]
    rule = next(f for f in _forms(text) if f.startswith("(deny file-write-unlink file-write-create"))
    for n, _ in params:
        if n.startswith("UP_"):
            assert f'(literal (param "{n}"))' in rule
        if n.startswith(("RO_", "HIDDEN_")):
            assert f'(subpath (param "{n}"))' in rule


def test_network_and_unix_sockets_follow_the_profile():
    def rules(**kw):
        return policy(Profile("/p", hidden=("/p/.s",), **kw), ())[0]

    on, off = rules(network=True), rules(network=False)
    assert '(allow network-outbound (remote ip "*:*"))' in on
    assert "remote ip" not in off and "network-bind" not in off and "mDNSResponder" not in off
    assert "(socket-domain AF_INET)" not in off
    for text in (on, off):  # no state without the opt-out binds or connects a Unix socket
        assert "(remote unix-socket (path-regex" not in text and "local unix-socket" not in text
    assert '(path-literal "/private/var/run/mDNSResponder")' in on
    both = rules(network=False, unix_sockets=True)
    assert '(allow network-outbound (remote unix-socket (path-regex #"^/")))' in both
    assert "(deny network-outbound\n  (remote unix-socket (subpath (param \"HIDDEN_0\")))\n)" in both
    assert both.index("(allow network-outbound (remote unix-socket") < both.index("(deny network-outbound")


def test_argv_pins_the_programs_and_scrubs_first():
    profile = Profile("/p", read_only=("/p/w",), scrub=("AWS_SECRET", "GITHUB_TOKEN"),
                      setenv=(("PORT", "8080"), ("MODE", "a b=c")))
    a = argv(profile, ("/private/tmp",))
    text, params = policy(profile, ("/private/tmp",))
    assert a == [ENV, "-u", "AWS_SECRET", "-u", "GITHUB_TOKEN", "PORT=8080", "MODE=a b=c",
                 SANDBOX_EXEC, "-p", text, "-D", "ROOT=/p", "-D", "TMP_0=/private/tmp",
                 "-D", "RO_0=/p/w", "-D", "UP_0=/p"]
    assert SANDBOX_EXEC == "/usr/bin/sandbox-exec" and ENV == "/usr/bin/env"
    assert params[0] == ("ROOT", "/p")
    plain = argv(Profile("/p"), ())
    assert plain[:3] == [ENV, SANDBOX_EXEC, "-p"]


ODD = ["/Users/me/my proj", "/Users/me/it's \"quoted\"", "/Users/me/caf\u00e9/\u6f22\u5b57", "/Users/me/a\\b",
       "/Users/me/par(en)s;x", "/Users/me/eq=ual", "/Users/me/new\nline", "/Users/me/-D", "/Users/me/$(x)`y`"]


@pytest.mark.parametrize("root", ODD)
def test_odd_paths_leave_the_text_alone_and_travel_whole(root):
    odd = Profile(root, read_only=(root + "/tests",), hidden=(root + "/.statewright",))
    same = "/" + "/".join(f"d{i}" for i in range(root.count("/")))  # (as deep: as many ancestors)
    plain = Profile(same, read_only=(same + "/tests",), hidden=(same + "/.statewright",))
    odd_text, odd_params = policy(odd, ("/private/tmp",))
    plain_text, _ = policy(plain, ("/private/tmp",))
    assert odd_text == plain_text  # the same shape of profile: the same text, whatever the names
    assert dict(odd_params)["ROOT"] == root and dict(odd_params)["RO_0"] == root + "/tests"
    a = argv(odd, ("/private/tmp",))
    assert f"ROOT={root}" in a and a[a.index(f"ROOT={root}") - 1] == "-D"
    _forms(odd_text)


def test_sbpl_string_escapes_quotes_and_backslashes():
    assert sbpl_string('plain') == '"plain"'
    assert sbpl_string('say "hi"') == '"say \\"hi\\""'
    assert sbpl_string('a\\b') == '"a\\\\b"'
    assert sbpl_string('caf\u00e9') == '"caf\u00e9"'
    _forms("(x " + sbpl_string('")(deny default') + ")")  # a quote cannot end the string early


def test_paths_are_canonical(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert canonical(str(tmp_path / "link")) == str(real)
    assert canonical(str(tmp_path / "link" / "missing" / "x")) == str(real / "missing" / "x")
    _, params = policy(Profile(str(tmp_path / "link"), read_only=(str(tmp_path / "link" / "w"),)), ())
    assert dict(params)["ROOT"] == str(real) and dict(params)["RO_0"] == str(real / "w")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "link"))
    assert temp_dirs()[0] == str(real)
    monkeypatch.setenv("TMPDIR", "relative/dir")
    assert all(d.startswith("/") for d in temp_dirs())
