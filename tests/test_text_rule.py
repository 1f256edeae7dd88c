"""One rule for text a user writes, on every write path: secrets are redacted before anything is
stored, and text that is not valid Unicode is bad input (exit 2) that writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import BadInput
from graphmem.model.text import check_text, clean, redact

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]
URL = "https://admin:Hunter2pass@atlas.example.org/?api_key=sk-proj-abcdefghijklmnopqrstuvwx"
SECRETS = ("Hunter2pass", "sk-proj-abcdefghijklmnopqrstuvwx", "AKIAIOSFODNN7EXAMPLE", "tok3n-value-99")


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.parametrize(("text", "kind"), [
    (URL, "url_password"), ("https://x.org/feed?token=tok3n-value-99&page=2", "url_token"),
    ("key AKIAIOSFODNN7EXAMPLE", "aws_access_key"), ("password: hunter2222", "password"),
])
def test_redact_finds_each_kind_and_is_idempotent(text: str, kind: str) -> None:
    once, counts = redact(text)
    assert kind in counts and "[REDACTED:" in once
    assert redact(once) == (once, {})


def test_plain_text_is_left_alone() -> None:
    for text in ("the key=value idea", "Atlas moved to Kuzu", "https://example.org/a?page=2"):
        assert clean(text, "x") == text


def test_the_gate_before_the_patterns_finds_every_mark_the_patterns_name() -> None:
    """``redact`` tries its patterns only on text its gate finds a mark in: the factored gate finds a text
    exactly when one of the marks is in it, so no secret a pattern would catch gets past it."""
    import random
    import re

    from graphmem.model.text import _ANY_MARK, _SECRETS
    marks = sorted({m for _, _, _, ms in _SECRETS for m in ms})
    flat = re.compile("|".join(re.escape(m) for m in marks))
    rng = random.Random(25)
    letters = "abcdefghijklmnopqrstuvwxyz_-=@ :/."
    for _ in range(50_000):
        text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 24)))
        mark = rng.choice(marks)
        cut = rng.randint(0, len(text))
        text = text[:cut] + (mark if rng.random() < 0.5 else mark[:rng.randint(0, len(mark))]) + text[cut:]
        assert bool(_ANY_MARK.search(text)) == bool(flat.search(text)), text
    for mark in marks:  # each mark alone, and inside a URL
        assert _ANY_MARK.search(mark) and _ANY_MARK.search(f"https://x.org/a{mark}b")
    assert redact("https://x.org/p?signature=abcdef123")[1] == {"url_token": 1}


def test_check_text_names_the_value_and_the_position() -> None:
    with pytest.raises(BadInput, match=r"bad name 'at\\udcffl'.*character 2"):
        check_text("at\udcffl", "name")


def test_every_python_write_redacts(atlas: graphmem.Memory) -> None:
    m = atlas
    m.add_entity("Tool", "Vault", aliases=["AKIAIOSFODNN7EXAMPLE"], description=f"admin panel {URL}")
    fid = m.assert_("atlas", "summary", f"deployed at {URL}", sources=[URL]).refs[0]
    m.assert_("atlas", "homepage", URL)
    m.retract(fid, reason="leaked password: hunter2222 in " + URL)
    m.ingest([json.dumps({"id": "AKIAIOSFODNN7EXAMPLE", "scope": "sk-proj-abcdefghijklmnopqrstuvwx",
                          "source": URL, "text": "note with ?token=tok3n-value-99 inside https://q.org/?token=tok3n-value-99"}
                         ).encode()])
    out = m.export()
    assert not _leaks(out), _leaks(out)
    assert "[REDACTED:url_password]" in out and "[REDACTED:aws_access_key]" in out
    assert not _leaks(json.dumps(m.pack("atlas deployed vault", budget_tokens=2000).to_dict()))


def test_a_secret_record_id_still_keys_one_record(mem: graphmem.Memory) -> None:
    lines = [json.dumps({"id": i, "text": f"record {n}"}).encode()
             for n, i in enumerate(["AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLF"])]
    assert len(mem.ingest(lines).stored) == 2
    assert len(mem.ingest(lines).stored) == 0  # idempotent: the same ids are the same records


def test_import_lines_are_redacted(mem: graphmem.Memory) -> None:
    lines = [
        {"op": "entity", "type": "Project", "name": "Atlas", "aliases": ["AKIAIOSFODNN7EXAMPLE"],
         "description": URL},
        {"op": "assert", "subject": "project:atlas", "predicate": "summary", "object": URL, "sources": [URL]},
        {"op": "retract", "fact": "fact:1", "reason": URL},
        {"op": "record", "ref": "rec:1", "text": f"a record line with {URL}", "key": "id:AKIAIOSFODNN7EXAMPLE"},
    ]
    report = mem.import_jsonl([json.dumps(x) for x in lines], strict=True)
    assert not report.errors, report.errors
    assert not _leaks(mem.export())


def test_import_of_text_that_is_not_unicode_writes_nothing(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Atlas")
    before = mem.export()
    bad = json.dumps({"op": "assert", "subject": "project:atlas", "predicate": "summary", "object": "x\ud800y"})
    report = mem.import_jsonl([bad], strict=True)
    assert report.errors and "not valid Unicode" in report.errors[0][1]
    assert mem.export() == before
    with pytest.raises(BadInput, match="not valid Unicode"):
        mem.add_entity("Tool", "K\ud800uzu")
    with pytest.raises(BadInput, match="not valid Unicode"):
        mem.current("atl\udcffas")
    with pytest.raises(BadInput, match="not valid Unicode"):
        mem.search("ku\udcffzu")
    assert mem.export() == before


@pytest.mark.skipif(sys.platform == "win32", reason="bytes in argv")
def test_an_undecodable_argument_is_exit_2(store_path: Path) -> None:
    store = str(store_path)
    subprocess.run([*EXE, "--store", store, "init"], check=True, capture_output=True)
    subprocess.run([*EXE, "--store", store, "entity", "add", "Project", "Atlas"], check=True, capture_output=True)
    for args in ([b"current", b"atl\xffas"], [b"assert", b"atlas", b"summary", b"x\xffy"],
                 [b"entity", b"add", b"Tool", b"K\xffuzu"], [b"pack", b"-q", b"at\xffl"]):
        r = subprocess.run([os.fsencode(a) for a in EXE] + [b"--store", os.fsencode(store), *args],
                           capture_output=True)
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        assert r.returncode == 2 and len(err) == 1 and "not valid Unicode" in err[0], (args, r.stderr)
    export = subprocess.run([*EXE, "--store", store, "export"], capture_output=True, text=True, check=True).stdout
    assert export.count('"op"') == 1


def test_cli_assert_redacts(store_path: Path) -> None:
    store = str(store_path)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*EXE, "--store", store, *args], capture_output=True, text=True, timeout=120)

    assert cli("init").returncode == 0
    assert cli("entity", "add", "Project", "Atlas", "--description", URL).returncode == 0
    assert cli("assert", "atlas", "summary", URL, "--source", URL).returncode == 0
    assert cli("retract", "fact:1", "--reason", URL).returncode == 0
    assert not _leaks(cli("export").stdout)
