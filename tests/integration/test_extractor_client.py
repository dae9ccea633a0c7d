"""ExtractorClient against real HTTP servers on 127.0.0.1: every row of the fail-closed mapping
(document extraction, "Fail closed."; extractor contract, the paragraph on how the server
reads codes), tokens, the whole-call timeout, capabilities caching and available_formats."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from loom_dagster.contract.formats import FORMATS
from loom_dagster.errors import ExtractionFailed, ExtractorUnavailable
from loom_dagster.extractor.client import ExtractorClient
from loom_dagster.extractor.settings import ExtractorSettings, ServiceLimits
from tests.integration.misbehaving_extractor import (
    CAPABILITIES,
    DEFAULT_FORMATS,
    EXTRACT,
    MisbehavingExtractor,
    Reply,
    artifact,
    capabilities_reply,
    error_reply,
    gzip_reply,
    json_reply,
    redirect_reply,
)

ORIGINAL = b"# Hi\n"
TOKEN = "shared-token-0123456789"
STATUSES_THAT_MEAN_UNAVAILABLE = (
    [401, 403, 407, 408, 429]  # the token refused, a request timeout, too many requests
    + [500, 502, 503, 504, 599]  # any 5xx
    + [204, 299, 300, 301, 302, 303, 304, 307, 308, 600]  # neither 200 nor 4xx
)


@pytest.fixture
def service() -> Iterator[MisbehavingExtractor]:
    with MisbehavingExtractor() as running:
        yield running


@pytest.fixture
def other() -> Iterator[MisbehavingExtractor]:
    with MisbehavingExtractor() as running:
        yield running


def client_for(url: str | None, **settings: object) -> ExtractorClient:
    values: dict[str, object] = {"default_url": url, "token": TOKEN, "timeout_s": 5.0}
    values.update(settings)
    return ExtractorClient(ExtractorSettings(**values))  # type: ignore[arg-type]


def unavailable(client: ExtractorClient, name: str = "a.md", **kwargs: object) -> str:
    with pytest.raises(ExtractorUnavailable) as raised:
        client.extract(ORIGINAL, name=name, **kwargs)  # type: ignore[arg-type]
    assert raised.value.code == "extractor_unavailable"
    assert raised.value.retryable
    return raised.value.message


def refused(client: ExtractorClient, name: str = "a.md", **kwargs: object) -> ExtractionFailed:
    with pytest.raises(ExtractionFailed) as raised:
        client.extract(ORIGINAL, name=name, **kwargs)  # type: ignore[arg-type]
    assert not raised.value.retryable
    return raised.value


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- a good call ---------------------------------------------------------------------------------


def test_extract_returns_the_checked_artifact_and_sends_what_the_contract_says(service):
    client = client_for(service.url)

    result = client.extract(ORIGINAL, name="notes/a.md", options={"encoding": "utf-8"})

    assert result.format == "markdown" and result.blocks[0].text == "# Hi"
    [sent] = service.requests_to(EXTRACT)
    assert sent.method == "POST"
    assert sent.query == {"format": ["markdown"], "name": ["notes/a.md"], "encoding": ["utf-8"]}
    assert sent.headers["content-type"] == "application/octet-stream"
    assert sent.headers["accept-encoding"] == "identity"
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    assert sent.body == ORIGINAL
    [asked] = service.requests_to(CAPABILITIES)
    assert asked.headers["accept-encoding"] == "identity"
    assert asked.headers["authorization"] == f"Bearer {TOKEN}"


def test_each_service_gets_its_own_token_else_the_shared_one(service, other):
    client = client_for(
        service.url, routes={"pdf": other.url}, tokens={other.url: "pdf-service-token-0123"}
    )
    other.replies[EXTRACT] = json_reply(artifact("pdf"))

    client.extract(ORIGINAL, name="a.md")
    client.extract(ORIGINAL, name="a.pdf")

    assert {r.headers["authorization"] for r in service.requests} == {f"Bearer {TOKEN}"}
    assert {r.headers["authorization"] for r in other.requests} == {"Bearer pdf-service-token-0123"}
    assert len(other.requests_to(EXTRACT)) == 1


def test_a_content_encoding_of_identity_is_read(service):
    reply = json_reply(artifact())
    service.replies[EXTRACT] = replace(
        reply, headers={**reply.headers, "Content-Encoding": "identity"}
    )

    assert client_for(service.url).extract(ORIGINAL, name="a.md").format == "markdown"


# -- unavailable: retry later ------------------------------------------------------------------


def test_an_unreachable_service_is_unavailable():
    url = f"http://127.0.0.1:{free_port()}"

    message = unavailable(client_for(url))

    assert url in message and "cannot be reached" in message


@pytest.mark.parametrize("status", STATUSES_THAT_MEAN_UNAVAILABLE)
def test_statuses_that_mean_the_service_cannot_be_used_are_unavailable(service, status):
    service.replies[EXTRACT] = error_reply(status, "corrupt", "even with a contract code")

    message = unavailable(client_for(service.url))

    assert service.url in message and str(status) in message


@pytest.mark.parametrize("status", [101, 103])
def test_informational_answers_are_unavailable(service, status):
    service.replies[EXTRACT] = Reply(status)

    assert service.url in unavailable(client_for(service.url))


def test_a_redirect_is_not_followed(service, other):
    service.replies[EXTRACT] = redirect_reply(other.url + EXTRACT, 307)

    message = unavailable(client_for(service.url))

    assert "redirect" in message
    assert other.requests == []


@pytest.mark.parametrize("status", [200, 400, 422, 503])
@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate", "identity, gzip", ""])
def test_a_compressed_answer_is_unavailable_whatever_its_status(service, status, encoding):
    document = artifact() if status == 200 else {"error": {"code": "corrupt", "message": "m"}}
    service.replies[EXTRACT] = gzip_reply(document, status, encoding)

    message = unavailable(client_for(service.url))

    assert "compressed" in message


def test_compressed_capabilities_are_unavailable(service):
    service.replies[CAPABILITIES] = gzip_reply(
        {"contract_version": 1, "max_bytes": 9, "formats": []}
    )

    assert "compressed" in unavailable(client_for(service.url))
    assert service.requests_to(EXTRACT) == []


@pytest.mark.parametrize("status", [422, 400])
def test_format_unavailable_from_extract_is_unavailable(service, status):
    service.replies[EXTRACT] = error_reply(status, "format_unavailable", "not any more")

    assert "format_unavailable" in unavailable(client_for(service.url))


@pytest.mark.parametrize("path", [CAPABILITIES, EXTRACT])
def test_a_service_that_closes_without_answering_is_unavailable(service, path):
    service.replies[path] = Reply(close_without_answer=True)

    assert service.url in unavailable(client_for(service.url))


def test_an_artifact_cut_short_is_unavailable(service):
    body = json.dumps(artifact()).encode()
    service.replies[EXTRACT] = Reply(200, {"Content-Length": str(len(body) + 100)}, body)

    assert service.url in unavailable(client_for(service.url))


@pytest.mark.parametrize("path", [CAPABILITIES, EXTRACT])
def test_a_service_slower_than_the_timeout_is_unavailable(service, path):
    service.replies[path] = replace(service.replies[path], delay_s=5.0)
    client = client_for(service.url, timeout_s=0.5)

    started = time.monotonic()
    message = unavailable(client)

    assert "within the timeout" in message
    assert time.monotonic() - started < 1.5


def test_the_timeout_bounds_the_whole_call_not_each_read(service):
    # A byte every 0.2 s never trips a per-read timeout of 1 s; the whole call must stop at 1 s.
    body = json.dumps(artifact()).encode()
    service.replies[EXTRACT] = Reply(200, {}, body, trickle_s=0.2)
    client = client_for(service.url, timeout_s=1.0)
    client.available_formats()  # capabilities read beforehand, so only the extract is timed

    started = time.monotonic()
    assert "within the timeout" in unavailable(client)
    assert time.monotonic() - started < 1.6


def test_a_stall_after_the_headers_is_cut_at_the_deadline(service):
    # Headers at 0.7 s, then nothing: a per-read timeout of 1 s would end the call at 1.7 s.
    service.replies[EXTRACT] = replace(
        json_reply(artifact()), delay_s=0.7, stall_after_headers_s=5.0
    )
    client = client_for(service.url, timeout_s=1.0)
    client.available_formats()

    started = time.monotonic()
    assert "within the timeout" in unavailable(client)
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (capabilities_reply({"markdown": []}, version=2), "contract version 2"),
        (json_reply({"contract_version": "1", "max_bytes": 9, "formats": []}), "contract_version"),
        (json_reply({"contract_version": 1, "formats": []}), "max_bytes"),
        (json_reply({"contract_version": 1, "max_bytes": 9, "formats": {}}), "formats"),
        (json_reply({"contract_version": 1, "max_bytes": 9, "formats": [{}]}), "formats[0]"),
        (Reply(200, {}, b"not json"), "not JSON"),
        (error_reply(404, "not_found"), "404"),
        (error_reply(422, "corrupt"), "422"),
    ],
)
def test_capabilities_that_cannot_be_used_are_unavailable(service, reply, why):
    service.replies[CAPABILITIES] = reply

    assert why in unavailable(client_for(service.url))
    assert service.requests_to(EXTRACT) == []


# -- refused: the source's outcome -------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (422, "unsupported_format"),
        (422, "format_mismatch"),
        (422, "encoding"),
        (422, "corrupt"),
        (400, "invalid_option"),
        (413, "too_large"),
        (422, "timeout"),
        (422, "resource_limit"),
        (404, "a_code_of_the_service_s_own"),
        (409, "x" * 40),
    ],
)
def test_a_refusal_keeps_the_contract_code(service, status, code):
    service.replies[EXTRACT] = error_reply(status, code, "the file is pdf,\nnot markdown")

    failure = refused(client_for(service.url))

    assert failure.code == code
    assert "\n" not in failure.message and "the file is pdf, not markdown" in failure.message


@pytest.mark.parametrize(
    "code", ["x" * 41, "Corrupt", "bad-code", "corrupt\n", "", "café", "code1", 7, None]
)
def test_a_code_outside_the_contract_is_refused(service, code):
    service.replies[EXTRACT] = error_reply(422, code)

    assert refused(client_for(service.url)).code == "refused"


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"code": "corrupt"}',
        b'{"error": "corrupt"}',
        b'{"error": {"message": "no code"}}',
        b'{"error": {"code": "corrupt", "message": 7}}',
        b"",
    ],
)
def test_a_body_that_is_not_the_error_shape_is_refused(service, body):
    service.replies[EXTRACT] = Reply(422, {"Content-Type": "application/json"}, body)

    assert refused(client_for(service.url)).code == "refused"


@pytest.mark.parametrize("content_length", [True, False])
def test_an_error_body_over_64_kib_is_refused(service, content_length):
    reply = error_reply(422, "corrupt", "x" * 64 * 1024)
    service.replies[EXTRACT] = replace(reply, content_length=content_length)

    assert refused(client_for(service.url)).code == "refused"


def test_an_error_body_of_exactly_64_kib_is_read(service):
    padding = 64 * 1024 - len(json.dumps({"error": {"code": "corrupt", "message": ""}}))
    reply = error_reply(422, "corrupt", "x" * padding)
    assert len(reply.body) == 64 * 1024
    service.replies[EXTRACT] = reply

    assert refused(client_for(service.url)).code == "corrupt"


@pytest.mark.parametrize("content_length", [True, False])
def test_an_artifact_over_the_max_bytes_is_resource_limit(service, content_length):
    reply = json_reply(artifact())
    service.replies[EXTRACT] = replace(reply, content_length=content_length)
    client = client_for(service.url, max_artifact_bytes=len(reply.body) - 1)

    assert refused(client).code == "resource_limit"


def test_an_artifact_of_exactly_the_max_bytes_is_read(service):
    body = json_reply(artifact()).body
    client = client_for(service.url, max_artifact_bytes=len(body))

    assert client.extract(ORIGINAL, name="a.md").format == "markdown"


@pytest.mark.parametrize(
    "body",
    [
        json.dumps(artifact("sql")).encode(),  # another format than the one asked for
        json.dumps({**artifact(), "schema_version": 2}).encode(),
        b"not json",
    ],
)
def test_an_artifact_that_breaks_the_contract_is_invalid_artifact(service, body):
    service.replies[EXTRACT] = Reply(200, {}, body)

    assert refused(client_for(service.url)).code == "invalid_artifact"


# -- refused before any extract call -------------------------------------------------------------


def test_a_format_with_no_configured_service_is_format_unavailable_without_a_call(service):
    client = client_for(None, routes={"markdown": service.url})

    failure = refused(client, name="a.pdf")

    assert failure.code == "format_unavailable" and "pdf" in failure.message
    assert service.requests == []


@pytest.mark.parametrize("name", ["old.doc", "old.XLS", "deck.ppt"])
def test_a_legacy_office_name_is_refused_before_any_call(service, name):
    assert refused(client_for(service.url), name=name).code == "unsupported_format"
    assert service.requests == []


def test_a_format_the_service_does_not_declare_is_format_unavailable(service):
    failure = refused(client_for(service.url), name="a.html")

    assert failure.code == "format_unavailable"
    assert len(service.requests_to(CAPABILITIES)) == 1 and service.requests_to(EXTRACT) == []


def test_an_original_over_the_service_max_bytes_is_too_large_without_sending(service):
    service.replies[CAPABILITIES] = capabilities_reply(
        {"markdown": []}, max_bytes=len(ORIGINAL) - 1
    )

    assert refused(client_for(service.url)).code == "too_large"
    assert service.requests_to(EXTRACT) == []


def test_an_original_of_exactly_the_service_max_bytes_is_sent(service):
    service.replies[CAPABILITIES] = capabilities_reply({"markdown": []}, max_bytes=len(ORIGINAL))

    client_for(service.url).extract(ORIGINAL, name="a.md")

    assert len(service.requests_to(EXTRACT)) == 1


@pytest.mark.parametrize(
    "options", [{"sql_dialect": "duckdb"}, {"format": "sql"}, {"name": "b.md"}, {"unknown": "1"}]
)
def test_an_option_the_service_does_not_list_is_invalid_option_without_sending(service, options):
    # sql_dialect is listed for sql, not for markdown.
    assert refused(client_for(service.url), options=options).code == "invalid_option"
    assert service.requests_to(EXTRACT) == []


def test_an_option_listed_for_the_format_is_sent(service):
    service.replies[EXTRACT] = json_reply(artifact("sql"))

    client_for(service.url).extract(ORIGINAL, name="a.sql", options={"sql_dialect": "duckdb"})

    [sent] = service.requests_to(EXTRACT)
    assert sent.query["sql_dialect"] == ["duckdb"] and sent.query["format"] == ["sql"]


# -- routing ---------------------------------------------------------------------------------------


def test_extract_goes_to_the_service_the_format_is_routed_to(service, other):
    other.replies[EXTRACT] = json_reply(artifact("pdf"))
    client = client_for(service.url, routes={"pdf": other.url})

    client.extract(ORIGINAL, name="a.pdf")
    client.extract(ORIGINAL, name="a.md")

    assert [r.query["format"] for r in other.requests_to(EXTRACT)] == [["pdf"]]
    assert [r.query["format"] for r in service.requests_to(EXTRACT)] == [["markdown"]]


def test_a_media_type_route_takes_only_files_of_its_own_format(service, other):
    client = client_for(service.url, routes={"text/markdown": other.url})
    service.replies[EXTRACT] = json_reply(artifact("sql"))

    client.extract(ORIGINAL, name="notes", media_type="Text/Markdown; charset=utf-8")
    client.extract(ORIGINAL, name="a.sql", media_type="text/markdown")

    assert [r.query["format"] for r in other.requests_to(EXTRACT)] == [["markdown"]]
    assert [r.query["format"] for r in service.requests_to(EXTRACT)] == [["sql"]]


# -- capabilities cache ------------------------------------------------------------------------


def test_capabilities_are_read_once_per_minute(service):
    client = client_for(service.url)

    for _ in range(3):
        client.extract(ORIGINAL, name="a.md")

    assert len(service.requests_to(CAPABILITIES)) == 1
    assert len(service.requests_to(EXTRACT)) == 3


def test_capabilities_are_read_again_once_the_cache_expires(service):
    client = ExtractorClient(
        ExtractorSettings(default_url=service.url, token=TOKEN), capabilities_ttl_s=0.2
    )
    client.extract(ORIGINAL, name="a.md")
    service.replies[CAPABILITIES] = capabilities_reply({"sql": []})

    client.extract(ORIGINAL, name="a.md")  # still cached: markdown declared
    time.sleep(0.3)
    failure = refused(client, name="a.md")

    assert failure.code == "format_unavailable"
    assert len(service.requests_to(CAPABILITIES)) == 2


def test_a_failed_capabilities_read_is_not_cached(service):
    good = service.replies[CAPABILITIES]
    service.replies[CAPABILITIES] = Reply(503)
    client = client_for(service.url)
    unavailable(client)

    service.replies[CAPABILITIES] = good
    client.extract(ORIGINAL, name="a.md")

    assert len(service.requests_to(CAPABILITIES)) == 2


# -- available_formats -------------------------------------------------------------------------


def test_available_formats_reports_a_hanging_service_as_unknown_within_the_deadline(service, other):
    other.replies[CAPABILITIES] = replace(other.replies[CAPABILITIES], delay_s=10.0)
    client = ExtractorClient(
        ExtractorSettings(default_url=service.url, routes={"pdf": other.url}, token=TOKEN),
        capabilities_deadline_s=0.5,
    )

    started = time.monotonic()
    formats = client.available_formats()

    assert time.monotonic() - started < 1.2
    assert formats == {
        **{fmt: "unavailable" for fmt in FORMATS},
        "markdown": "available",
        "text": "available",
        "sql": "available",
        "pdf": "unknown",
    }


def test_an_unreadable_service_stays_unknown_without_being_asked_again(service, other):
    other.replies[CAPABILITIES] = replace(other.replies[CAPABILITIES], delay_s=10.0)
    client = ExtractorClient(
        ExtractorSettings(default_url=service.url, routes={"pdf": other.url}, token=TOKEN),
        capabilities_deadline_s=0.5,
    )
    client.available_formats()

    started = time.monotonic()
    assert client.available_formats()["pdf"] == "unknown"

    assert time.monotonic() - started < 0.2
    assert len(other.requests_to(CAPABILITIES)) == 1
    assert len(service.requests_to(CAPABILITIES)) == 1  # the good one is cached too


def test_a_successful_read_ends_unknown_before_the_minute_is_up(service, other):
    slow = other.replies[CAPABILITIES]
    other.replies[CAPABILITIES] = replace(slow, delay_s=10.0)
    other.replies[EXTRACT] = json_reply(artifact("pdf"))
    client = ExtractorClient(
        ExtractorSettings(default_url=service.url, routes={"pdf": other.url}, token=TOKEN),
        capabilities_deadline_s=0.5,
    )
    assert client.available_formats()["pdf"] == "unknown"

    other.replies[CAPABILITIES] = slow  # answers at once again
    client.extract(ORIGINAL, name="a.pdf")  # an extraction reads the capabilities anew

    assert client.available_formats()["pdf"] == "available"


def test_services_are_read_together(service, other):
    for running in (service, other):
        running.replies[CAPABILITIES] = replace(running.replies[CAPABILITIES], delay_s=10.0)
    client = ExtractorClient(
        ExtractorSettings(default_url=service.url, routes={"pdf": other.url}, token=TOKEN),
        capabilities_deadline_s=0.5,
    )

    started = time.monotonic()
    formats = client.available_formats()

    assert time.monotonic() - started < 1.2  # one after the other would take 1 s or more
    assert formats["pdf"] == "unknown" and formats["markdown"] == "unknown"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(503), "unknown"),
        (Reply(close_without_answer=True), "unknown"),
        (capabilities_reply({"markdown": []}, version=2), "unavailable"),
    ],
)
def test_available_formats_for_a_service_that_cannot_serve(service, reply, expected):
    service.replies[CAPABILITIES] = reply

    assert client_for(service.url).available_formats()["markdown"] == expected


def test_formats_with_no_route_are_unavailable_without_a_call(service):
    client = client_for(None, routes={"markdown": service.url})

    formats = client.available_formats()

    assert formats == {**{fmt: "unavailable" for fmt in FORMATS}, "markdown": "available"}
    assert len(service.requests_to(CAPABILITIES)) == 1


def test_a_media_type_route_counts_only_for_the_media_types_given(service):
    client = client_for(None, routes={"application/pdf": service.url})

    assert client.available_formats()["pdf"] == "unavailable"
    assert client.available_formats(["Application/PDF; x=y"])["pdf"] == "available"
    assert client.available_formats(["text/markdown"])["markdown"] == "unavailable"


# -- replicas ---------------------------------------------------------------------------------


def test_replicas_of_one_service_share_its_calls(service, other):
    client = client_for(f"{service.url} {other.url}")

    for number in range(6):
        client.extract(ORIGINAL, name=f"{number}.md")

    assert len(service.requests_to(EXTRACT)) == 3
    assert len(other.requests_to(EXTRACT)) == 3


def test_a_file_goes_to_another_replica_when_one_is_unavailable(service, other):
    client = client_for(f"{service.url} {other.url}")
    service.replies[EXTRACT] = Reply(503)

    results = [client.extract(ORIGINAL, name=f"{number}.md") for number in range(4)]

    assert [r.blocks[0].text for r in results] == ["# Hi"] * 4
    assert len(other.requests_to(EXTRACT)) == 4
    # Asked once, then last: the replica that failed is tried after the others until it
    # answers its capabilities again.
    assert len(service.requests_to(EXTRACT)) == 1


def test_a_replica_that_cannot_be_reached_is_passed_over(service):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{closed.getsockname()[1]}"
    client = client_for(f"{gone},{service.url}")

    for number in range(3):
        client.extract(ORIGINAL, name=f"{number}.md")

    assert len(service.requests_to(EXTRACT)) == 3


def test_every_replica_unavailable_is_unavailable_naming_the_last(service, other):
    client = client_for(f"{service.url} {other.url}")
    service.replies[EXTRACT] = Reply(503)
    other.replies[EXTRACT] = Reply(502)

    message = unavailable(client)

    assert len(service.requests_to(EXTRACT)) == len(other.requests_to(EXTRACT)) == 1
    assert other.url in message or service.url in message


def test_a_refusal_is_not_sent_to_another_replica(service, other):
    client = client_for(f"{service.url} {other.url}")
    service.replies[EXTRACT] = error_reply(422, "corrupt", "bad bytes")
    other.replies[EXTRACT] = error_reply(422, "corrupt", "bad bytes")

    with pytest.raises(ExtractionFailed) as raised:
        client.extract(ORIGINAL, name="a.md")

    assert raised.value.code == "corrupt"
    assert len(service.requests_to(EXTRACT)) + len(other.requests_to(EXTRACT)) == 1


# -- the service's slots -------------------------------------------------------------------------


def extract_at_once(client: ExtractorClient, count: int) -> None:
    with ThreadPoolExecutor(count) as pool:
        list(pool.map(lambda _: client.extract(ORIGINAL, name="a.md"), range(count)))


@pytest.mark.parametrize(("declared", "limits"), [(2, None), (1, ServiceLimits(slots=3))])
def test_no_more_extractions_are_in_flight_than_the_service_declares_slots(
    service: MisbehavingExtractor, declared: int, limits: ServiceLimits | None
) -> None:
    # Each extraction takes a while, so six sent together would all be in flight at once.
    service.replies[CAPABILITIES] = capabilities_reply(DEFAULT_FORMATS, slots=declared)
    service.replies[EXTRACT] = replace(json_reply(artifact()), delay_s=0.3)
    settings = ExtractorSettings(default_url=service.url, token=TOKEN, timeout_s=30.0)
    with ExtractorClient(settings, limits=limits) as client:
        extract_at_once(client, 6)
    assert len(service.requests_to(EXTRACT)) == 6
    assert service.most_in_flight[EXTRACT] == declared


def test_a_service_that_declares_no_slots_gets_as_many_as_the_limits_say(
    service: MisbehavingExtractor,
) -> None:
    service.replies[EXTRACT] = replace(json_reply(artifact()), delay_s=0.3)
    settings = ExtractorSettings(default_url=service.url, token=TOKEN, timeout_s=30.0)
    with ExtractorClient(settings, limits=ServiceLimits(slots=2)) as client:
        extract_at_once(client, 5)
    assert service.most_in_flight[EXTRACT] == 2


@pytest.mark.parametrize("slots", [0, -1, 1.5, True, "2"])
def test_slots_that_are_not_a_positive_whole_number_are_unavailable(
    service: MisbehavingExtractor, slots: object
) -> None:
    service.replies[CAPABILITIES] = capabilities_reply(DEFAULT_FORMATS, slots=slots)
    message = unavailable(client_for(service.url))
    assert message.endswith("slots is not a positive whole number"), message
