"""A user's mistake, or the machine's, is one line on stderr naming the problem and a non-zero
exit: never a traceback, never Dagster's log. Each case runs the `loom` command as a process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loom_dagster.cli import EXIT_BROKEN_PIPE
from loom_dagster.extractor.settings import (
    ENV_ROUTES,
    ENV_TOKEN,
    ENV_TOKENS,
    ENV_URL,
    MAX_JSON_SETTING_DEPTH,
)
from tests.integration.loom_command import (
    OTHER_USER,
    folder_for_everyone,  # noqa: F401  (a fixture)
    loom,
    needs_root_to_act_as_another_user,
)
from tests.integration.test_extractor_down import a_port_nobody_listens_on


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a failed command printed on stderr."""
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def env_with_home(home: Path) -> dict[str, str]:
    env = {**os.environ, "LOOM_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)  # it lives under LOOM_HOME
    return env


# -- LOOM_HOME ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("search", "anything"), ("ingest", ".")])
def test_a_home_that_is_a_file(tmp_path: Path, command: tuple[str, ...]) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("")
    result = loom(*command, env=env_with_home(home))
    assert one_line(result) == f"loom: invalid_setting: LOOM_HOME {home.resolve()} is not a folder"


def test_a_home_whose_parent_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    home = (tmp_path / "file" / "home").resolve()
    result = loom("search", "anything", env=env_with_home(home))
    assert one_line(result) == (
        f"loom: unusable_home: LOOM_HOME {home}: cannot create or open {home}: Not a directory"
    )


def test_a_home_whose_parent_this_user_cannot_write(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if os.geteuid() == 0:
        # Root writes anywhere: the user who cannot is another one.
        needs_root_to_act_as_another_user()
        parent = request.getfixturevalue("folder_for_everyone")
        user = OTHER_USER
    else:
        parent = tmp_path / "locked"
        parent.mkdir(mode=0o555)
        user = None
    home = (parent / "home").resolve()
    result = loom("search", "anything", env=env_with_home(home), as_user=user)
    assert one_line(result) == (
        f"loom: unusable_home: LOOM_HOME {home}: cannot create or open {home}: Permission denied"
    )


def test_a_home_root_made_used_by_another_user(request: pytest.FixtureRequest) -> None:
    needs_root_to_act_as_another_user()
    home = (request.getfixturevalue("folder_for_everyone") / "home").resolve()
    made = loom("search", "anything", env=env_with_home(home))
    assert made.returncode == 0, made.stderr

    result = loom("search", "anything", env=env_with_home(home), as_user=OTHER_USER)
    # Before, tantivy's "Permission denied" was reported as an index this version cannot read.
    assert one_line(result) == (
        f"loom: unusable_home: LOOM_HOME {home}: {home} belongs to root, and user {OTHER_USER}"
        " cannot read and write it: use a LOOM_HOME of your own"
    )


# -- stdout closed early --------------------------------------------------------------------------


def test_a_reader_that_goes_away_ends_the_command_quietly(loom_home: Path) -> None:
    # `loom search … | head -1`: the reader is gone before the command writes its answer.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = loom("search", "anything", stdout=writer)
    finally:
        os.close(writer)
    assert result.stderr == ""
    assert result.returncode == EXIT_BROKEN_PIPE


# -- the extractor cannot be read -----------------------------------------------------------------


def unreadable_message(url: str) -> str:
    return (
        f"loom: extractor_unavailable: the extractor at {url} cannot be read: it is unreachable,"
        " refused the token, or did not answer GET /v1/capabilities as contract v1"
    )


def test_formats_with_no_extractor_to_read_says_so_and_fails(loom_home: Path) -> None:
    url = f"http://127.0.0.1:{a_port_nobody_listens_on()}"
    result = loom("formats", env={**os.environ, ENV_URL: url})
    assert one_line(result) == unreadable_message(url)
    assert result.stdout == ""


def test_formats_with_one_extractor_down_lists_the_rest_and_names_it(loom_home: Path) -> None:
    down = f"http://127.0.0.1:{a_port_nobody_listens_on()}"
    result = loom("formats", env={**os.environ, ENV_ROUTES: f'{{"markdown": "{down}"}}'})
    assert one_line(result) == unreadable_message(down)
    states = dict(line.split() for line in result.stdout.splitlines())
    assert states["markdown"] == "unknown" and states["csv"] == "available"


@pytest.mark.slow
def test_ingest_with_the_extractor_down_prints_its_outcomes_and_no_dagster_log(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Title\n\nSome words.\n")
    url = f"http://127.0.0.1:{a_port_nobody_listens_on()}"

    quick = {"LOOM_RETRY_ATTEMPTS": "1", "LOOM_RETRY_DELAY_S": "0.05"}
    result = loom("ingest", str(folder), env={**os.environ, ENV_URL: url, **quick})

    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert len(out) == 2 and out[0].startswith("failed     a.md  ")
    assert "retries_exhausted: every try failed; the last: extractor_unavailable: " in out[0]
    assert (
        out[1]
        == "files 1 = published 0 + refused 0 + unchanged 0 + skipped 0  (does not hold: 1 failed)"
    )
    # Progress only; the run's log, its retries and tracebacks included, is in the instance.
    err = result.stderr.splitlines()
    assert "Traceback" not in result.stderr and " - dagster - " not in result.stderr
    assert err[0] == f"registered docs: {folder}", result.stderr
    assert err[1] == "docs: 1 to process, 0 unchanged, 0 deleted", result.stderr
    assert err[2] == "run 1/1: 1 revisions", result.stderr
    assert len(err) == 3, result.stderr


# -- JSON settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", [ENV_ROUTES, ENV_TOKENS])
def test_a_deeply_nested_json_setting_is_one_line(loom_home: Path, variable: str) -> None:
    nested = "[" * 20_000 + "]" * 20_000  # under the size bound; once a RecursionError
    result = loom("formats", env={**os.environ, variable: nested})
    assert one_line(result) == (
        f"loom: invalid_setting: {variable}: nests deeper than {MAX_JSON_SETTING_DEPTH} levels"
        " (it is one JSON object of strings)"
    )


def test_ingest_as_root_with_no_extractor_environment_says_so_before_any_run(
    loom_home: Path, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only a start as root runs the extractor from its own environment")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Title\n")
    env = {k: v for k, v in os.environ.items() if k not in (ENV_URL, ENV_TOKEN)}
    env["LOOM_EXTRACTOR_ENV"] = str(tmp_path / "no-such-env")

    result = loom("ingest", str(folder), env=env)

    # Before, the run failed inside Dagster and the reason was only in its log.
    assert one_line(result) == (
        f"loom: extractor_unavailable: started as root, the reference extractor runs from"
        f" {tmp_path / 'no-such-env'}, which is not there: run scripts/setup as root"
    )
    assert result.stdout == ""
