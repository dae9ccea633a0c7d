"""The reference extractor over real HTTP on 127.0.0.1, and its child runner with real processes."""

from __future__ import annotations

import ast
import codecs
import importlib
import io
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from extractor_sandbox.child import CHILD_MODULE
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.registry import AVAILABLE, SPECS
from extractor_sandbox.runner import (
    CallerGone,
    Limits,
    child_command,
    child_environment,
    run_child,
)
from extractor_sandbox.settings import default_slots
from extractor_sandbox.source import DECLARED_FORMATS
from tests.extractor.conftest import (
    RunningService,
    Service,
    copy_package,
    serve_command,
    service_environment,
    world_readable_tree,
)

PACKAGE = Path(__file__).resolve().parents[2] / "extractor_sandbox"


def client(token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.Client(headers=headers, timeout=30)


@pytest.fixture
def http(extractor: Service) -> Iterator[httpx.Client]:
    with client(extractor.token) as session:
        yield session


def extract(http: httpx.Client, url: str, body: bytes, **params: str) -> httpx.Response:
    return http.post(f"{url}/v1/extract", params=params, content=body)


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    """(status, code, message) of an error answer, checking it is exactly the contract's body."""
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return response.status_code, body["error"]["code"], body["error"]["message"]


def zip_with(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, "<x/>")
    return buffer.getvalue()


# -- starting ------------------------------------------------------------------------------------


def test_the_listening_line_names_the_real_port(extractor: Service) -> None:
    port = int(extractor.url.rsplit(":", 1)[1])
    assert port > 0


@pytest.mark.parametrize("token", [None, "", "fifteen-chars-x"])
def test_a_missing_or_short_token_refuses_to_start(token: str | None) -> None:
    finished = subprocess.run(
        serve_command(), env=service_environment(token), capture_output=True, text=True, timeout=30
    )
    assert finished.returncode == 2
    assert finished.stdout == ""
    assert finished.stderr == (
        "loom-extractor: LOOM_EXTRACTOR_TOKEN must be at least 16 characters\n"
    )


def test_a_token_of_sixteen_characters_is_enough(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor(token="x" * 16)
    with client("x" * 16) as session:
        assert session.get(f"{service.url}/v1/capabilities").status_code == 200


def test_the_token_can_come_from_a_file(
    start_extractor: Callable[..., RunningService], tmp_path: Path
) -> None:
    token = secrets.token_urlsafe(24)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    service = start_extractor(token=token, extra_args=("--token-file", str(token_file)))
    with client(token) as session:
        assert session.get(f"{service.url}/v1/capabilities").status_code == 200


def test_a_token_in_both_the_environment_and_a_file_refuses_to_start(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("y" * 20)
    finished = subprocess.run(
        serve_command("--token-file", str(token_file)),
        env=service_environment("x" * 20),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert finished.returncode == 2
    assert finished.stderr == (
        "loom-extractor: set LOOM_EXTRACTOR_TOKEN or --token-file, not both\n"
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("LOOM_EXTRACTOR_MAX_BYTES", "lots", "must be a positive integer, not 'lots'"),
        ("LOOM_EXTRACTOR_TIMEOUT_S", "0", "must be a positive number of seconds, not '0'"),
        ("LOOM_EXTRACTOR_TIMEOUT_S", "nan", "must be a positive number of seconds, not 'nan'"),
        ("LOOM_EXTRACTOR_CPU_S", "-1", "must be a positive integer, not '-1'"),
        ("LOOM_EXTRACTOR_MEMORY_MB", "2GB", "must be a positive integer, not '2GB'"),
        ("LOOM_EXTRACTOR_CONCURRENCY", "0", "must be a positive integer, not '0'"),
        ("LOOM_EXTRACTOR_MAX_OUTPUT_BYTES", "1.5", "must be a positive integer, not '1.5'"),
        ("LOOM_EXTRACTOR_BODY_TIMEOUT_S", "-3", "must be a positive number of seconds, not '-3'"),
        ("LOOM_EXTRACTOR_WARM", "yes", "must be on or off, not 'yes'"),
        ("LOOM_EXTRACTOR_MAX_CONNECTIONS", "0", "must be a positive integer, not '0'"),
        ("LOOM_EXTRACTOR_HEAD_TIMEOUT_S", "inf", "must be a positive number of seconds, not 'inf'"),
        ("LOOM_EXTRACTOR_BACKLOG", "many", "must be a positive integer, not 'many'"),
        ("LOOM_EXTRACTOR_QUEUE_WAIT_S", "0", "must be a positive number of seconds, not '0'"),
        ("LOOM_EXTRACTOR_SMALL_BYTES", "-1", "must be an integer, 0 or more, not '-1'"),
    ],
)
def test_a_bad_setting_refuses_to_start_naming_it(variable: str, value: str, message: str) -> None:
    finished = subprocess.run(
        serve_command(),
        env=service_environment("x" * 20, {variable: value}),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert finished.returncode == 2
    assert finished.stderr == f"loom-extractor: {variable} {message}\n"


def test_sigterm_stops_the_service_cleanly(start_extractor: Callable[..., RunningService]) -> None:
    service = start_extractor()
    service.process.send_signal(signal.SIGTERM)
    assert service.process.wait(timeout=10) == 0


# -- the token -----------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "wrong-token-of-enough-length"])
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/capabilities"), ("POST", "/v1/extract?format=text"), ("GET", "/nowhere")],
)
def test_a_missing_or_wrong_token_is_401(
    extractor: Service, token: str | None, method: str, path: str
) -> None:
    with client(token) as session:
        response = session.request(method, f"{extractor.url}{path}", content=b"hello")
    assert error_of(response) == (401, "unauthorized", "a valid bearer token is required")
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_token_under_another_scheme_is_401(extractor: Service) -> None:
    with httpx.Client() as session:
        response = session.get(
            f"{extractor.url}/v1/capabilities",
            headers={"Authorization": f"Basic {extractor.token}"},
        )
    assert response.status_code == 401


# -- capabilities --------------------------------------------------------------------------------


def test_capabilities_declare_what_this_service_extracts(
    extractor: Service, http: httpx.Client
) -> None:
    response = http.get(f"{extractor.url}/v1/capabilities")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "contract_version": 1,
        "extractor": {"name": "loom-reference", "version": "1"},
        "max_bytes": 67108864,
        "slots": default_slots(),
        # What the qualification gate lets this service declare (test_extraction_gates.py).
        "formats": [
            {
                "format": fmt,
                "options": list(options),
                "parser": f"loom-{fmt}",
                # The service's own interpreter (the extractor's venv), not this one.
                "parser_version": ANY_PARSER_VERSION,
            }
            for fmt, options in sorted(DECLARED_FORMATS.items())
        ],
    }
    for entry in response.json()["formats"]:
        expected = SPECS[entry["format"]].parser_version().split("+python")[0]
        assert entry["parser_version"].split("+python")[0] == expected


class _ParserVersion(str):
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, str)
            and re.fullmatch(r"[0-9]+(\+[a-z]+[0-9][0-9.]*)*", other) is not None
        )

    __hash__ = str.__hash__


ANY_PARSER_VERSION = _ParserVersion("1+...")


def test_each_format_declares_the_parser_and_version_its_artifacts_carry() -> None:
    """The capabilities' per-format parser is the reader's own: a difference would mark every
    revision of the format stale on the server, or hide a real upgrade."""
    for spec in AVAILABLE.values():
        reader = importlib.import_module(spec.module)
        assert (reader.PARSER, reader.PARSER_VERSION) == (spec.parser, spec.parser_version())


def test_an_unknown_path_is_404(extractor: Service, http: httpx.Client) -> None:
    status, code, _ = error_of(http.get(f"{extractor.url}/v2/capabilities"))
    assert (status, code) == (404, "not_found")


def test_the_wrong_method_is_405(extractor: Service, http: httpx.Client) -> None:
    response = http.get(f"{extractor.url}/v1/extract?format=text")
    assert error_of(response)[:2] == (405, "method_not_allowed")
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("method", ["OPTIONS", "HEAD", "TRACE", "PROPFIND", "BREW"])
def test_any_other_method_is_401_without_the_token_then_405(
    extractor: Service, http: httpx.Client, method: str
) -> None:
    # Issue 34 row 9: the token is checked first, whatever the method (http.server answered an
    # unknown one 501 before looking at it); with the token, the path's own method is named.
    with client(None) as anonymous:
        refused = anonymous.request(method, f"{extractor.url}/v1/capabilities")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    answer = http.request(method, f"{extractor.url}/v1/capabilities")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET"
    if method != "HEAD":  # a HEAD answer has no body
        assert error_of(refused)[:2] == (401, "unauthorized")
        assert error_of(answer)[:2] == (405, "method_not_allowed")


# -- refusals before the body is read ------------------------------------------------------------


def test_an_original_over_max_bytes_is_too_large(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_MAX_BYTES": "16"})
    with client(service.token) as session:
        assert session.get(f"{service.url}/v1/capabilities").json()["max_bytes"] == 16
        assert extract(session, service.url, b"x" * 16, format="text").status_code == 200
        refused = extract(session, service.url, b"x" * 17, format="text")
        assert error_of(refused) == (
            422,
            "too_large",
            "the original is 17 bytes, over this service's 16",
        )
        # The unread body ended that connection; the service still takes the next one.
        assert extract(session, service.url, b"x" * 3, format="text").status_code == 200


def test_a_large_refused_body_still_gets_its_answer(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_MAX_BYTES": "1024"})
    with client(service.token) as session:
        refused = extract(session, service.url, b"x" * 2_000_000, format="text")
    assert error_of(refused)[:2] == (422, "too_large")


def test_a_body_without_content_length_is_411(extractor: Service, http: httpx.Client) -> None:
    chunked = http.post(
        f"{extractor.url}/v1/extract", params={"format": "text"}, content=iter([b"hel", b"lo"])
    )
    assert error_of(chunked)[:2] == (411, "length_required")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"format": "text", "colour": "red"}, "unknown parameter 'colour'"),
        ({"format": "markdown", "sql_dialect": "duckdb"}, "markdown takes no sql_dialect option"),
        (
            {"format": "text", "encoding": "no-such-codec"},
            "encoding 'no-such-codec' is not a known text codec",
        ),
        ({"name": "a.md"}, "the format parameter is required"),
    ],
)
def test_an_option_the_format_does_not_take_is_invalid(
    extractor: Service, http: httpx.Client, params: dict[str, str], message: str
) -> None:
    response = extract(http, extractor.url, b"hello", **params)
    assert error_of(response) == (422, "invalid_option", message)


def test_a_parameter_given_twice_is_invalid(extractor: Service, http: httpx.Client) -> None:
    response = http.post(
        f"{extractor.url}/v1/extract?format=text&format=markdown", content=b"hello"
    )
    assert error_of(response) == (422, "invalid_option", "parameter 'format' is given twice")


def test_a_format_not_declared_is_unavailable(
    start_extractor: Callable[..., RunningService],
) -> None:
    # Every format the contract names is declared here; a build without pyarrow (hidden from the
    # service by a sitecustomize beside its package) does not declare Parquet.
    root = copy_package(
        world_readable_tree("loom-no-pyarrow-"),
        extra={"sitecustomize.py": "import sys\nsys.modules['pyarrow'] = None\n"},
    )
    service = start_extractor(package=root)
    with client(service.token) as session:
        formats = session.get(f"{service.url}/v1/capabilities").json()["formats"]
        response = extract(session, service.url, b"PAR1 not read PAR1", format="parquet")
    assert "parquet" not in {entry["format"] for entry in formats}
    assert error_of(response) == (
        422,
        "format_unavailable",
        "this service does not extract parquet",
    )


def test_a_format_the_contract_does_not_name_is_unsupported(
    extractor: Service, http: httpx.Client
) -> None:
    response = extract(http, extractor.url, b"MZ", format="exe")
    assert error_of(response)[:2] == (422, "unsupported_format")


# -- refusals of the content (in the child) ------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fmt", "message"),
    [
        (b"%PDF-1.7\n1 0 obj\n", "markdown", "the file is pdf, not markdown"),
        (
            zip_with("[Content_Types].xml", "word/document.xml"),
            "text",
            "the file is docx, not text",
        ),
    ],
)
def test_content_of_another_format_is_a_mismatch(
    extractor: Service, http: httpx.Client, body: bytes, fmt: str, message: str
) -> None:
    response = extract(http, extractor.url, body, format=fmt, name="notes.md")
    assert error_of(response) == (422, "format_mismatch", message)


def test_a_legacy_office_file_is_unsupported(extractor: Service, http: httpx.Client) -> None:
    ole2 = bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 504
    response = extract(http, extractor.url, ole2, format="text", name="old.doc")
    assert error_of(response) == (
        422,
        "unsupported_format",
        "legacy binary Office files are not supported",
    )


def test_an_undecodable_byte_is_an_encoding_failure_at_its_offset(
    extractor: Service, http: httpx.Client
) -> None:
    response = extract(http, extractor.url, b"hello world\n\xff", format="markdown")
    assert error_of(response) == (422, "encoding", "cannot decode byte 0xff at offset 12 as utf-8")


def test_a_nul_byte_makes_the_file_binary(extractor: Service, http: httpx.Client) -> None:
    response = extract(http, extractor.url, b"# Title\n\x00\x01", format="markdown")
    assert error_of(response) == (
        422,
        "format_mismatch",
        "the file is binary (NUL byte at offset 8), not markdown",
    )


# -- artifacts -----------------------------------------------------------------------------------


def artifact_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    artifact: dict[str, Any] = response.json()
    assert artifact["schema_version"] == 1
    assert isinstance(artifact["blocks"], list)
    coverage = artifact["coverage"]
    assert 0 <= coverage["extracted"] <= coverage["total"]
    return artifact


def test_markdown_is_extracted(extractor: Service, http: httpx.Client) -> None:
    body = b"# Title\n\nSome text.\n\n- one\n- two\n"
    artifact = artifact_of(extract(http, extractor.url, body, format="markdown", name="a.md"))
    assert artifact["format"] == "markdown"
    assert artifact["options"] == {}
    assert [block["type"] for block in artifact["blocks"]][0] == "heading"
    assert artifact["blocks"][0]["text"] == "Title"
    assert artifact["coverage"]["complete"] is True


def test_text_is_extracted(extractor: Service, http: httpx.Client) -> None:
    artifact = artifact_of(extract(http, extractor.url, b"one\n\ntwo\n", format="text"))
    assert artifact["format"] == "text"
    assert [block["text"] for block in artifact["blocks"]] == ["one", "two"]


def test_a_utf8_mark_is_not_in_the_text(extractor: Service, http: httpx.Client) -> None:
    body = codecs.BOM_UTF8 + "héllo".encode()
    artifact = artifact_of(extract(http, extractor.url, body, format="text"))
    assert artifact["blocks"][0]["text"] == "héllo"
    assert artifact["options"] == {}


def test_a_utf16_mark_picks_utf16(extractor: Service, http: httpx.Client) -> None:
    body = "héllo\n".encode("utf-16")  # with its mark
    assert body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    artifact = artifact_of(extract(http, extractor.url, body, format="text"))
    assert artifact["blocks"][0]["text"] == "héllo"


def test_a_declared_encoding_is_recorded_by_its_codec_name(
    extractor: Service, http: httpx.Client
) -> None:
    body = codecs.BOM_UTF16_LE + "# Título\n".encode("utf-16-le")
    artifact = artifact_of(
        extract(http, extractor.url, body, format="markdown", encoding="UTF-16LE")
    )
    assert artifact["options"] == {"encoding": "utf-16-le"}
    assert artifact["blocks"][0]["text"] == "Título"


def test_answers_are_never_compressed(extractor: Service, http: httpx.Client) -> None:
    body = b"word " * 20_000
    ok = http.post(
        f"{extractor.url}/v1/extract",
        params={"format": "text"},
        content=body,
        headers={"Accept-Encoding": "gzip, deflate, br"},
    )
    refused = http.post(
        f"{extractor.url}/v1/extract",
        params={"format": "pdf"},
        content=body,
        headers={"Accept-Encoding": "gzip"},
    )
    capabilities = http.get(f"{extractor.url}/v1/capabilities", headers={"Accept-Encoding": "gzip"})
    for response in (ok, refused, capabilities):
        assert "content-encoding" not in response.headers
        assert int(response.headers["content-length"]) == len(response.content)
    assert ok.status_code == 200 and refused.status_code == 422


def test_one_connection_carries_many_extractions(extractor: Service, http: httpx.Client) -> None:
    for number in range(3):
        artifact = artifact_of(extract(http, extractor.url, f"n{number}".encode(), format="text"))
        assert artifact["blocks"][0]["text"] == f"n{number}"


# -- the service's limits, end to end ------------------------------------------------------------


def test_an_extraction_past_the_wall_clock_is_a_timeout(
    start_extractor: Callable[..., RunningService],
) -> None:
    # No parser runs in a millisecond: a child process alone takes longer to start.
    service = start_extractor({"LOOM_EXTRACTOR_TIMEOUT_S": "0.001"})
    with client(service.token) as session:
        response = extract(session, service.url, b"hello", format="text")
    assert error_of(response) == (422, "timeout", "extraction took longer than 0.001 s")


def test_an_artifact_past_the_output_bound_is_a_resource_limit(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_MAX_OUTPUT_BYTES": "100"})
    with client(service.token) as session:
        response = extract(session, service.url, b"hello", format="text")
    assert error_of(response) == (
        422,
        "resource_limit",
        "the extraction's output passed LOOM_EXTRACTOR_MAX_OUTPUT_BYTES (100 bytes)",
    )


# -- the child runner ----------------------------------------------------------------------------

PYTHON = sys.executable


def python(code: str) -> list[str]:
    return [PYTHON, "-c", code]


def is_running(pid: int) -> bool:
    """Whether `pid` is a live process, given a moment to finish dying once it has been killed.

    A zombie counts as dead: no init may be reaping in a test container.
    """
    deadline = time.monotonic() + 5
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("Z", "X"):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.02)


def test_the_child_is_started_with_only_its_limits_on_the_command_line() -> None:
    limits = Limits(timeout_s=5, max_output_bytes=10, cpu_s=7, memory_mb=99)
    assert child_command(limits) == [
        sys.executable,
        "-P",
        "-s",
        "-m",
        CHILD_MODULE,
        "--cpu-s=7",
        "--memory-mb=99",
    ]


def test_the_child_gets_no_environment_of_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOM_EXTRACTOR_TOKEN", "a-secret-the-child-must-not-see")
    report = run_child(
        python(
            "import json, os, sys;"
            "json.dump({'env': dict(os.environ), 'cwd': os.getcwd(),"
            " 'own_group': os.getpgid(0) == os.getpid(), 'path': sys.path}, sys.stdout)"
        ),
        b"",
        timeout_s=20,
        max_output_bytes=1_000_000,
    )
    seen = json.loads(report)
    assert seen["env"] == child_environment()
    assert set(seen["env"]) == {"PYTHONPATH", "PATH", "LC_ALL", "ARROW_DEFAULT_MEMORY_POOL"}
    assert seen["env"]["PYTHONPATH"] == str(PACKAGE.parent)
    assert seen["cwd"] == "/"
    assert seen["own_group"] is True


def test_the_whole_process_group_is_killed_at_the_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    code = (
        "import os, sys, time\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child}}')\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    with pytest.raises(ExtractError) as caught:
        run_child(python(code), b"", timeout_s=1, max_output_bytes=1000)
    assert time.monotonic() - started < 10
    assert (caught.value.code, caught.value.message) == (
        "timeout",
        "extraction took longer than 1 s",
    )
    leader, grandchild = (int(pid) for pid in pids.read_text().split())
    assert not is_running(leader)
    assert not is_running(grandchild)


def test_a_descendant_holding_stdout_open_does_not_hold_the_answer(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    code = (
        "import os, sys, time\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    time.sleep(60)\n"  # keeps the inherited stdout open
        "    os._exit(0)\n"
        f"open({str(pids)!r}, 'w').write(str(child))\n"
        "sys.stdout.write('{}')\n"
    )
    started = time.monotonic()
    assert run_child(python(code), b"", timeout_s=30, max_output_bytes=1000) == b"{}"
    assert time.monotonic() - started < 10
    assert not is_running(int(pids.read_text()))


def test_output_past_its_bound_is_a_resource_limit() -> None:
    with pytest.raises(ExtractError) as caught:
        run_child(
            python("import sys; sys.stdout.write('x' * 1_000_000)"),
            b"",
            timeout_s=20,
            max_output_bytes=1000,
        )
    assert caught.value.code == "resource_limit"


def test_stdin_and_stdout_flow_together_without_a_deadlock() -> None:
    # Both far past a pipe's buffer: written all first and read after, they would block each other.
    request = os.urandom(3_000_000)
    echoed = run_child(
        python(
            "import sys\n"
            "while chunk := sys.stdin.buffer.read(65536):\n"
            "    sys.stdout.buffer.write(chunk)\n"
        ),
        request,
        timeout_s=30,
        max_output_bytes=10_000_000,
    )
    assert echoed == request


def test_a_child_that_reads_nothing_still_answers() -> None:
    answer = run_child(
        python("import sys; sys.stdout.write('{}')"),
        b"x" * 5_000_000,
        timeout_s=20,
        max_output_bytes=1000,
    )
    assert answer == b"{}"


def test_a_childs_error_body_is_its_refusal() -> None:
    body = json.dumps({"error": {"code": "encoding", "message": "bad byte"}})
    with pytest.raises(ExtractError) as caught:
        run_child(
            python(f"import sys; sys.stdout.write({body!r}); sys.exit(3)"),
            b"",
            timeout_s=20,
            max_output_bytes=1000,
        )
    assert (caught.value.code, caught.value.message) == ("encoding", "bad byte")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import sys; sys.exit(7)", "the extraction process exited with status 7"),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
            "the extraction process was killed by SIGSEGV",
        ),
        (
            'import sys; sys.stdout.write(\'{"error": {"code": "made_up", "message": "x"}}\');'
            " sys.exit(3)",
            "the extraction process exited with status 3",
        ),
        ("pass", "the extraction process wrote no artifact"),
    ],
)
def test_a_child_that_dies_without_an_error_body_is_corrupt(code: str, message: str) -> None:
    with pytest.raises(ExtractError) as caught:
        run_child(python(code), b"", timeout_s=20, max_output_bytes=1000)
    assert (caught.value.code, caught.value.message) == ("corrupt", message)


def test_a_caller_that_disconnects_kills_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    service_side, caller_side = socket.socketpair()
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"

    def hang_up() -> None:
        # Until the child has written its pid, not only opened the file: hung up between the
        # two, the child was killed with the file empty, and the test could not name it.
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        caller_side.close()

    closer = threading.Thread(target=hang_up)
    closer.start()
    started = time.monotonic()
    try:
        with pytest.raises(CallerGone):
            run_child(python(code), b"", timeout_s=30, max_output_bytes=1000, caller=service_side)
    finally:
        closer.join()
        service_side.close()
    assert time.monotonic() - started < 10
    assert not is_running(int(pid_file.read_text()))


# -- package boundaries --------------------------------------------------------------------------


def test_the_extractor_imports_neither_loom_dagster_nor_dagster() -> None:
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                assert root not in ("loom_dagster", "dagster"), f"{path} imports {name}"


def test_the_service_process_loads_no_parser() -> None:
    finished = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, extractor_sandbox.__main__, extractor_sandbox.service;"
            "print([m for m in sys.modules if m.startswith('extractor_sandbox.formats.')])",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert finished.stdout.strip() == "[]"


# -- requests over a raw socket: lengths and bodies that http clients would not send -------------


def raw_exchange(
    url: str, request: bytes, *, timeout_s: float = 30
) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as it is, read the one answer: (status, headers, body)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout_s) as connection:
        connection.sendall(request)
        return read_answer(connection)


def read_answer(connection: socket.socket) -> tuple[int, dict[str, str], bytes]:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        assert chunk, f"closed before an answer: {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)
    }
    while len(body) < int(headers["content-length"]):
        chunk = connection.recv(65536)
        assert chunk
        body += chunk
    return int(status_line.split()[1]), headers, body


def post_head(token: str, *length_lines: bytes) -> bytes:
    return (
        b"POST /v1/extract?format=text HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {token}\r\n".encode()
        + b"".join(line + b"\r\n" for line in length_lines)
        + b"\r\n"
    )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # "²" passes str.isdigit() and fails int(): it was a 500 with a traceback in the log.
        ([b"Content-Length: \xb2"], "Content-Length '\u00b2' is not a size"),
        ([b"Content-Length: 5", b"Content-Length: 7"], "Content-Length is given more than once"),
        ([b"Content-Length: 5", b"Content-Length: 5"], "Content-Length is given more than once"),
        ([b"Content-Length: 5, 5"], "Content-Length '5, 5' is not a size"),
        ([b"Content-Length: -5"], "Content-Length '-5' is not a size"),
    ],
)
def test_a_length_that_is_not_one_size_is_400(
    extractor: Service, lines: list[bytes], message: str
) -> None:
    status, headers, body = raw_exchange(
        extractor.url, post_head(extractor.token, *lines) + b"hello"
    )
    assert (status, json.loads(body)) == (
        400,
        {"error": {"code": "bad_request", "message": message}},
    )
    assert headers["connection"] == "close"


def test_a_length_of_more_digits_than_any_size_is_too_large(extractor: Service) -> None:
    request = post_head(extractor.token, b"Content-Length: " + b"9" * 5000)
    status, _headers, body = raw_exchange(extractor.url, request)
    assert (status, json.loads(body)["error"]["code"]) == (422, "too_large")


def test_a_body_that_trickles_holds_no_slot_and_ends_at_its_deadline(
    start_extractor: Callable[..., RunningService],
) -> None:
    # One slot (the default); a body may take 3 s in all, however it trickles.
    service = start_extractor({"LOOM_EXTRACTOR_BODY_TIMEOUT_S": "3"})
    host, port = service.url.removeprefix("http://").rsplit(":", 1)
    slow = socket.create_connection((host, int(port)), timeout=30)
    stop = threading.Event()

    def trickle() -> None:  # a byte every 0.2 s: each wait is short, the whole is not
        try:
            while not stop.wait(0.2):
                slow.sendall(b"x")
        except OSError:
            pass  # the service closed it

    with slow:
        slow.sendall(post_head(service.token, b"Content-Length: 1000") + b"x" * 10)
        trickling = threading.Thread(target=trickle)
        trickling.start()
        try:
            # Meanwhile another request gets the only slot and its answer.
            with client(service.token) as session:
                assert extract(session, service.url, b"hello", format="text").status_code == 200
            status, headers, body = read_answer(slow)
        finally:
            stop.set()
            trickling.join()
    assert status == 408 and headers["connection"] == "close"
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout"
    assert error["message"].startswith("the body was not received within 3 s (")
    assert error["message"].endswith(" of 1000 bytes; LOOM_EXTRACTOR_BODY_TIMEOUT_S)")


def test_bodies_held_at_once_stay_within_their_budget() -> None:
    from extractor_sandbox.service import ByteBudget

    budget = ByteBudget(10)
    order: list[str] = []

    def second() -> None:
        with budget.held() as held:
            assert held.take(6, timeout_s=30)
            order.append("the second 6 taken")

    with budget.held() as first:
        assert first.take(4, timeout_s=0) and first.take(2, timeout_s=0)  # as bytes arrive
        with budget.held() as other:
            assert other.take(4, timeout_s=0)
            order.append("6 and 4 taken together")
            assert not budget.take(1, timeout_s=0.05)  # no room: the wait ends at its bound
        waiter = threading.Thread(target=second)
        waiter.start()
        order.append("the first 6 let go")  # before it is, the second cannot have its room
    waiter.join(timeout=30)
    assert order == [
        "6 and 4 taken together",
        "the first 6 let go",
        "the second 6 taken",
    ]
    assert budget.used == 0


def test_a_small_original_has_a_slot_of_its_own_and_a_wait_for_one_is_bounded() -> None:
    from extractor_sandbox.service import HttpError, Slots

    slots = Slots(general=1, small=1, small_bytes=100)
    with slots.taken(1000, timeout_s=0):  # a large original has the one slot
        with slots.taken(100, timeout_s=0):  # a small one still runs, in its own
            with pytest.raises(HttpError) as raised, slots.taken(10, timeout_s=0.05):
                pass  # both taken: the wait ends at its bound, as a 503
            assert raised.value.status == 503 and raised.value.code == "busy"
            assert raised.value.headers["Retry-After"].isdigit()
        with pytest.raises(HttpError), slots.taken(101, timeout_s=0.05):
            pass  # the small ones' slot is free, but not for a large one
    with slots.taken(10, timeout_s=0), slots.taken(10, timeout_s=0):
        pass  # a small one takes a general slot too when its own is taken
