"""ExtractorSettings: the LOOM_DOCUMENT_EXTRACTOR* variables, validated at load with a message
that names the variable, and routing by format, then media type, then the default URL."""

from __future__ import annotations

import json

import pytest

from loom_dagster.errors import SettingsError
from loom_dagster.extractor.settings import (
    ENV_MAX_ARTIFACT_BYTES,
    ENV_ROUTES,
    ENV_TIMEOUT,
    ENV_TOKEN,
    ENV_TOKENS,
    ENV_URL,
    MAX_JSON_SETTING_CHARS,
    MAX_JSON_SETTING_DEPTH,
    ExtractorSettings,
    ServiceLimits,
    replicas,
)
from loom_dagster.resources.extractor import ExtractorResource

A = "http://extractor:8790"
B = "http://pdf-extractor:8080"
C = "https://markdown-extractor"


def load(**env: str) -> ExtractorSettings:
    return ExtractorSettings.from_env(env)


def refused(env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as raised:
        ExtractorSettings.from_env(env)
    assert raised.value.code == "invalid_setting"
    assert "\n" not in raised.value.message
    return raised.value.message


# -- loading ---------------------------------------------------------------------------------------


def test_nothing_set_means_no_extractor_and_the_default_limits():
    settings = ExtractorSettings.from_env({})

    assert settings.default_url is None and dict(settings.routes) == {}
    assert settings.token is None and dict(settings.tokens) == {}
    assert settings.timeout_s == 60.0
    assert settings.max_artifact_bytes == 268435456
    assert settings.url_for("markdown") is None


def test_an_empty_variable_counts_as_unset():
    settings = ExtractorSettings.from_env({ENV_URL: "", ENV_ROUTES: "  ", ENV_TIMEOUT: ""})

    assert settings.default_url is None and dict(settings.routes) == {}
    assert settings.timeout_s == 60.0


def test_the_contract_example_loads():
    settings = ExtractorSettings.from_env(
        {
            ENV_URL: A,
            ENV_ROUTES: '{"pdf": "http://pdf-extractor:8080"}',
            ENV_TOKEN: "shared-token-0123456789",
            ENV_TOKENS: '{"http://pdf-extractor:8080": "pdf-token-0123456789"}',
            ENV_TIMEOUT: "2.5",
            ENV_MAX_ARTIFACT_BYTES: "1048576",
        }
    )

    assert settings.default_url == A
    assert dict(settings.routes) == {"pdf": B}
    assert settings.timeout_s == 2.5
    assert settings.max_artifact_bytes == 1048576
    assert settings.token_for(B) == "pdf-token-0123456789"
    assert settings.token_for(A) == "shared-token-0123456789"


def test_route_keys_and_urls_are_normalised():
    settings = ExtractorSettings.from_env(
        {
            ENV_URL: "HTTP://Extractor:8790/",
            ENV_ROUTES: json.dumps(
                {"PDF": "http://PDF-Extractor:8080", "Text/Markdown; charset=utf-8": C}
            ),
            ENV_TOKENS: '{"http://pdf-extractor:8080/": "pdf-token-0123456789"}',
        }
    )

    assert settings.default_url == A
    assert dict(settings.routes) == {"pdf": B, "text/markdown": C}
    assert settings.token_for("http://PDF-extractor:8080") == "pdf-token-0123456789"


def test_an_ipv6_literal_is_a_host():
    assert load(**{ENV_URL: "http://[::1]:8790"}).default_url == "http://[::1]:8790"


def test_settings_built_directly_are_checked_too():
    with pytest.raises(SettingsError, match=ENV_ROUTES):
        ExtractorSettings(routes={"rtf": A})
    assert ExtractorSettings(routes={"Application/PDF": B}).routes == {"application/pdf": B}


# -- refused at load -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "variable", "shown"),
    [
        ({ENV_ROUTES: "{pdf: x}"}, ENV_ROUTES, "not JSON"),
        ({ENV_ROUTES: '["pdf"]'}, ENV_ROUTES, "not a JSON object"),
        ({ENV_ROUTES: '{"pdf": 8080}'}, ENV_ROUTES, "'pdf'"),
        ({ENV_ROUTES: '{"pdf": null}'}, ENV_ROUTES, "'pdf'"),
        ({ENV_ROUTES: '{"rtf": "http://x"}'}, ENV_ROUTES, "'rtf'"),
        ({ENV_ROUTES: '{"application/msword": "http://x"}'}, ENV_ROUTES, "'application/msword'"),
        ({ENV_ROUTES: '{"": "http://x"}'}, ENV_ROUTES, "''"),
        (
            {ENV_ROUTES: '{"text/markdown": "http://x", "Text/Markdown; charset=x": "http://y"}'},
            ENV_ROUTES,
            "'Text/Markdown; charset=x'",
        ),
        ({ENV_ROUTES: '{"pdf": "http://x", "PDF": "http://y"}'}, ENV_ROUTES, "'PDF'"),
        ({ENV_ROUTES: '{"pdf": "ftp://x"}'}, ENV_ROUTES, "'ftp://x'"),
        ({ENV_ROUTES: '{"pdf": "http://x/extract"}'}, ENV_ROUTES, "'http://x/extract'"),
        ({ENV_URL: "extractor:8790"}, ENV_URL, "'extractor:8790'"),
        ({ENV_URL: "http://"}, ENV_URL, "'http://'"),
        ({ENV_URL: "http://x:notaport"}, ENV_URL, "'http://x:notaport'"),
        ({ENV_URL: "http://x:99999"}, ENV_URL, "'http://x:99999'"),
        ({ENV_URL: "http://x?a=1"}, ENV_URL, "'http://x?a=1'"),
        ({ENV_URL: "http://x#top"}, ENV_URL, "'http://x#top'"),
        ({ENV_URL: "http://user:secret@x"}, ENV_URL, "credentials"),
        ({ENV_URL: A, ENV_TOKENS: "not json"}, ENV_TOKENS, "not JSON"),
        (
            {ENV_URL: A, ENV_TOKENS: '{"http://other:1": "t0123456789abcdef"}'},
            ENV_TOKENS,
            "'http://other:1'",
        ),
        (
            {ENV_URL: A, ENV_TOKENS: '{"extractor:8790": "t0123456789abcdef"}'},
            ENV_TOKENS,
            "'extractor:8790'",
        ),
        ({ENV_URL: A, ENV_TOKENS: json.dumps({A: ""})}, ENV_TOKENS, A),
        ({ENV_URL: A, ENV_TOKENS: json.dumps({A: "two words"})}, ENV_TOKENS, A),
        (
            {ENV_URL: A, ENV_TOKENS: json.dumps({A: "t1234567890abcdef", A + "/": "t2"})},
            ENV_TOKENS,
            "twice",
        ),
        ({ENV_TOKEN: "has\ta tab"}, ENV_TOKEN, "control"),
        ({ENV_TIMEOUT: "soon"}, ENV_TIMEOUT, "'soon'"),
        ({ENV_TIMEOUT: "0"}, ENV_TIMEOUT, "0"),
        ({ENV_TIMEOUT: "-5"}, ENV_TIMEOUT, "-5"),
        ({ENV_TIMEOUT: "nan"}, ENV_TIMEOUT, "nan"),
        ({ENV_TIMEOUT: "inf"}, ENV_TIMEOUT, "inf"),
        ({ENV_MAX_ARTIFACT_BYTES: "0"}, ENV_MAX_ARTIFACT_BYTES, "0"),
        ({ENV_MAX_ARTIFACT_BYTES: "-1"}, ENV_MAX_ARTIFACT_BYTES, "'-1'"),
        ({ENV_MAX_ARTIFACT_BYTES: "1e6"}, ENV_MAX_ARTIFACT_BYTES, "'1e6'"),
        ({ENV_MAX_ARTIFACT_BYTES: "1.5"}, ENV_MAX_ARTIFACT_BYTES, "'1.5'"),
        ({ENV_MAX_ARTIFACT_BYTES: "lots"}, ENV_MAX_ARTIFACT_BYTES, "'lots'"),
    ],
)
def test_an_invalid_setting_is_refused_naming_the_variable_and_the_value(env, variable, shown):
    message = refused(env)

    assert message.startswith(f"{variable}: ")
    assert shown in message


def test_a_token_url_named_by_a_route_is_accepted():
    settings = load(
        **{ENV_ROUTES: json.dumps({"pdf": B}), ENV_TOKENS: json.dumps({B: "pdf-token-01234567"})}
    )

    assert settings.token_for(B) == "pdf-token-01234567"


@pytest.mark.parametrize(
    "env",
    [
        {ENV_URL: A, ENV_TOKENS: json.dumps({A: "secret token"})},
        {ENV_URL: A, ENV_TOKENS: json.dumps({A: 12345678901234567})},
        {ENV_TOKEN: "secret\ttoken"},
    ],
)
def test_a_refused_token_is_never_shown(env):
    message = refused(env)

    assert "secret" not in message and "12345678901234567" not in message


def test_a_refused_url_with_credentials_is_not_shown():
    assert "hunter2" not in refused({ENV_URL: "http://admin:hunter2@extractor"})


# -- routing ---------------------------------------------------------------------------------------


def test_a_format_key_wins_over_a_media_type_key_which_wins_over_the_default_url():
    settings = ExtractorSettings(
        default_url=A, routes={"markdown": B, "text/markdown": C, "application/pdf": C}
    )

    assert settings.url_for("markdown", "text/markdown") == B
    assert settings.url_for("pdf", "application/pdf") == C
    assert settings.url_for("pdf") == A
    assert settings.url_for("sql", "text/markdown") == A


def test_a_media_type_route_applies_only_to_its_own_format():
    settings = ExtractorSettings(default_url=A, routes={"text/markdown": C})

    assert settings.url_for("markdown", "Text/Markdown; charset=utf-8") == C
    # A .sql file uploaded as text/markdown is sql: the markdown route does not take it.
    assert settings.url_for("sql", "text/markdown") == A
    assert settings.url_for("markdown") == A
    assert settings.url_for("markdown", "text/plain") == A


def test_no_default_url_leaves_an_unrouted_format_with_no_extractor():
    settings = ExtractorSettings(routes={"pdf": B})

    assert settings.url_for("pdf") == B
    assert settings.url_for("markdown") is None


def test_a_service_token_else_the_shared_token():
    settings = ExtractorSettings(
        default_url=A, routes={"pdf": B}, token="shared-token-0123456789", tokens={B: "b-token"}
    )

    assert settings.token_for(B) == "b-token"
    assert settings.token_for(A) == "shared-token-0123456789"
    assert ExtractorSettings(default_url=A).token_for(A) is None


# -- the Dagster resource ------------------------------------------------------------------------


def test_the_resource_reads_no_environment(monkeypatch):
    # Settings are read once, where Loom's settings are loaded, and handed to the resource.
    monkeypatch.setenv(ENV_URL, A)
    monkeypatch.setenv(ENV_TIMEOUT, "7")

    settings = ExtractorResource(timeout_s="3", routes_json=json.dumps({"pdf": B})).settings()

    assert settings.default_url is None
    assert settings.timeout_s == 3.0
    assert dict(settings.routes) == {"pdf": B}


def test_the_resource_of_settings_gives_them_back(monkeypatch):
    monkeypatch.setenv(ENV_TOKEN, "shared-token-0123456789")
    monkeypatch.setenv(ENV_TOKENS, json.dumps({B: "pdf-token-0123456789"}))
    settings = ExtractorSettings(
        default_url=A,
        routes={"pdf": B},
        token="shared-token-0123456789",
        tokens={B: "pdf-token-0123456789"},
        timeout_s=2.5,
        max_artifact_bytes=1000,
    )
    limits = ServiceLimits(time_limit_s=9.0, slots=3)

    resource = ExtractorResource.of(settings, limits, concurrency=4)

    assert resource.settings() == settings
    assert resource.limits() == limits
    assert resource.concurrency == 4


def test_the_resource_holds_its_tokens_as_environment_variables_never_as_values(monkeypatch):
    # The Resources tab and the webserver's GraphQL show a resource's configuration: a token
    # there is a secret shown to anyone who opens the UI (issue 28, part 1).
    monkeypatch.setenv(ENV_TOKEN, "shared-token-0123456789")
    monkeypatch.setenv(ENV_TOKENS, json.dumps({B: "pdf-token-0123456789"}))
    settings = ExtractorSettings.from_env(
        {
            ENV_URL: A,
            ENV_ROUTES: json.dumps({"pdf": B}),
            ENV_TOKEN: "shared-token-0123456789",
            ENV_TOKENS: json.dumps({B: "pdf-token-0123456789"}),
        }
    )

    resource = ExtractorResource.of(settings, ServiceLimits(), concurrency=1)

    config = resource.get_resource_definition().config_schema.default_value
    assert config["token"] == {"env": ENV_TOKEN}
    assert config["tokens_json"] == {"env": ENV_TOKENS}
    assert "token-0123456789" not in repr(config)
    assert resource.settings() == settings  # resolved where it is used


def test_settings_know_whether_the_environment_holds_their_tokens() -> None:
    settings = ExtractorSettings(default_url=A, token="shared-token-0123456789")

    assert settings.held_by({ENV_TOKEN: "shared-token-0123456789"})
    assert not settings.held_by({})
    assert not settings.held_by({ENV_TOKEN: "another-token-0123456789"})
    assert ExtractorSettings(default_url=A).held_by({})


def test_the_resource_refuses_what_the_environment_would(monkeypatch):
    monkeypatch.delenv(ENV_URL, raising=False)

    with pytest.raises(SettingsError, match=ENV_MAX_ARTIFACT_BYTES):
        ExtractorResource(max_artifact_bytes="many").settings()


def test_the_resource_gives_a_client_with_its_settings(monkeypatch):
    monkeypatch.delenv(ENV_ROUTES, raising=False)

    client = ExtractorResource(url=A, token="shared-token-0123456789").get_client()
    try:
        assert client.settings.default_url == A
    finally:
        client.close()


def test_the_resource_client_is_closed_on_leaving_the_block(monkeypatch):
    monkeypatch.delenv(ENV_ROUTES, raising=False)
    resource = ExtractorResource(url=A, concurrency=3)

    with resource.client() as client:
        assert client.settings.default_url == A
    assert resource.concurrency == 3
    with pytest.raises(RuntimeError):  # httpx refuses a request on a closed client
        client.extract(b"x", name="a.md")


# -- JSON settings bounded before decoding ---------------------------------------------------------


@pytest.mark.parametrize("variable", [ENV_ROUTES, ENV_TOKENS])
@pytest.mark.parametrize(
    "nested",
    [
        "[" * 30_000 + "]" * 30_000,  # once a RecursionError out of json.loads
        '{"a": ' * 5 + '"x"' + "}" * 5,
        "[" * 5000,  # not even JSON: refused for its depth all the same
    ],
)
def test_a_json_setting_nested_too_deep_is_refused_before_decoding(variable, nested):
    assert refused({variable: nested}) == (
        f"{variable}: nests deeper than {MAX_JSON_SETTING_DEPTH} levels"
        " (it is one JSON object of strings)"
    )


@pytest.mark.parametrize("variable", [ENV_ROUTES, ENV_TOKENS])
def test_a_json_setting_over_the_size_bound_is_refused_before_decoding(variable):
    huge = '{"markdown": "' + "x" * MAX_JSON_SETTING_CHARS + '"}'
    assert refused({variable: huge}) == (
        f"{variable}: is {len(huge)} characters, over the {MAX_JSON_SETTING_CHARS} it may hold"
    )


@pytest.mark.parametrize("variable", [ENV_ROUTES, ENV_TOKENS])
def test_brackets_inside_strings_do_not_count_as_nesting(variable):
    assert "is not a string" in refused({variable: '{"[[[[[[\\"{{{{{{": ["a"]}'})


# -- replicas ----------------------------------------------------------------------------------


def test_replicas_of_a_service_are_one_value_normalised_and_split():
    settings = load(
        **{ENV_URL: f" {A}/, HTTP://Extractor-2:8790 ", ENV_ROUTES: json.dumps({"pdf": f"{B} {C}"})}
    )

    assert settings.default_url == f"{A} http://extractor-2:8790"
    assert settings.url_for("pdf") == f"{B} {C}"
    assert replicas(settings.url_for("markdown") or "") == (A, "http://extractor-2:8790")
    assert settings.urls() == {A, "http://extractor-2:8790", B, C}


def test_each_replica_may_have_its_own_token():
    settings = load(**{ENV_URL: f"{A} {B}", ENV_TOKENS: json.dumps({B: "token-of-b-0123"})})

    assert settings.token_for(B) == "token-of-b-0123"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (f"{A} {A}/", "names one replica twice"),
        (" , ", "names no URL"),
        (f"{A} ftp://elsewhere", "'ftp://elsewhere' is not an http(s)://host[:port] URL"),
        (" ".join(f"http://r{n}:80" for n in range(33)), "names 33 replicas, over the 32 allowed"),
    ],
)
def test_bad_replicas_are_refused_naming_the_variable(value, problem):
    assert refused({ENV_URL: value}) == f"{ENV_URL}: {problem}"
    assert refused({ENV_ROUTES: json.dumps({"pdf": value})}) == (
        f"{ENV_ROUTES}: key 'pdf': {problem}"
    )
