"""The home every API call works in: its folders prepared, and its Dagster instance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_dagster.settings import LoomSettings

if TYPE_CHECKING:
    from dagster import DagsterInstance


def prepare_environment(settings: LoomSettings) -> None:
    """The home's folders and the Dagster instance's config, made before any work."""
    settings.prepare()


def dagster_instance(settings: LoomSettings) -> DagsterInstance:
    """The instance under settings.dagster_home, found without writing DAGSTER_HOME anywhere."""
    from dagster import DagsterInstance

    settings.check_instance_database()
    return DagsterInstance.from_config(str(settings.dagster_home))
