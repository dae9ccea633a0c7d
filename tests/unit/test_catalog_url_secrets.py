"""No message about the PostgreSQL catalog shows its password, however LOOM_CATALOG_URL is
malformed (issue 34 row 6: the driver's error quoted the whole URL)."""

from __future__ import annotations

import pytest

from loom_dagster.catalog.postgres import PostgresCatalog, scrubbed
from loom_dagster.errors import LoomError

URLS = [
    "postgresql://u:secretpw@[::1",
    "postgresql://u:secretpw@[::1]:notaport/db",
    "postgresql://u:secretpw@127.0.0.1:notaport/db",
    "postgresql://u:secret/pw@127.0.0.1:1/db",
    "postgresql://u:secret@pw@127.0.0.1:1/db",
    "postgresql://u:secret%70w@[::1",
    "postgresql://u@127.0.0.1:1/db?password=secretpw&sslmode=bogus",
    "postgresql://u:secretpw@127.0.0.1:1/db?sslmode=bogus",
    "postgresql+psycopg2://u:secretpw@127.0.0.1:1/db?connect_timeout=x",
    "host=127.0.0.1 port=1 password=secretpw sslmode=bogus",
    "host=127.0.0.1 port=1 password='secret pw' sslmode=bogus",
    "postgresql://u:secretpw@%zz/db",
]


@pytest.mark.parametrize("url", URLS)
def test_no_message_shows_the_password(url: str) -> None:
    with pytest.raises(LoomError) as raised:
        PostgresCatalog(url, index_id="x")
    message = str(raised.value)
    assert "secret" not in message, message
    assert "\n" not in message


def test_the_driver_quoting_the_url_in_part_is_scrubbed() -> None:
    url = "postgresql://u:s3cr3t@[::1"
    driver = 'invalid dsn: end of string reached in URI: "postgresql://u:s3cr3t@[::1"'
    assert "s3cr3t" not in scrubbed(driver, url)
    assert scrubbed("password=s3cr3t", "host=h password=s3cr3t") == "password=***"
