"""Dagster's staleness per partition (issue 28 part 6): a partition re-made with other content
makes exactly its downstream partitions stale; one re-made with the same content, none.

Asked of Dagster itself, the way the UI asks it for a partition's "Unsynced" tag: the instance's
`CachingStaleStatusResolver` over the code location's asset graph, after real runs on a real
instance (`loom ingest`, then runs of single assets and partitions, as the UI launches them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.temporal_context import TemporalContext
from dagster._time import get_current_datetime

from loom_dagster import api
from tests.integration.misbehaving_extractor import (
    CAPABILITIES,
    EXTRACT,
    MisbehavingExtractor,
    artifact,
    json_reply,
)

ORIGINAL, ARTIFACT, CHUNKS, PUBLISHED, DATASETS = (
    AssetKey(["loom", name]) for name in ("original", "artifact", "chunks", "published", "datasets")
)
ASSETS = (ORIGINAL, ARTIFACT, CHUNKS, PUBLISHED, DATASETS)


def serve_markdown(service: MisbehavingExtractor, text: str) -> None:
    """The fake reads every markdown file as one block holding `text`."""
    service.replies[CAPABILITIES] = json_reply(
        {
            "contract_version": 1,
            "extractor": {"name": "misbehaving", "version": "1"},
            "max_bytes": 1 << 20,
            "formats": [
                {
                    "format": "markdown",
                    "options": ["encoding"],
                    "parser": "misbehaving",
                    "parser_version": "1",
                },
            ],
        }
    )
    made = artifact("markdown")
    made["blocks"][0]["text"] = text  # type: ignore[index]
    service.replies[EXTRACT] = json_reply(made)


class Location:
    """The code location as loaded from this environment, and Dagster's view of its partitions."""

    def __init__(self) -> None:
        from loom_dagster.definitions import build_definitions
        from loom_dagster.settings import LoomSettings

        self.defs = build_definitions(LoomSettings.from_env())
        self.graph = AssetGraph.from_assets(list(self.defs.assets or []))
        self.job = self.defs.resolve_implicit_global_asset_job_def()

    def statuses(self, keys: list[str]) -> dict[tuple[AssetKey, str], StaleStatus]:
        """Every asset's status for every partition, as Dagster resolves it now."""
        instance = DagsterInstance.get()
        view = AssetGraphView(
            temporal_context=TemporalContext(
                effective_dt=get_current_datetime(), last_event_id=None
            ),
            instance=instance,
            asset_graph=self.graph,
        )
        resolver = CachingStaleStatusResolver(instance, self.graph, view)
        return {(a, k): resolver.get_status(a, k) for a in ASSETS for k in keys}

    def stale(self, keys: list[str]) -> set[tuple[AssetKey, str]]:
        return {pair for pair, status in self.statuses(keys).items() if status == StaleStatus.STALE}

    def materialize(self, assets: list[AssetKey], key: str) -> None:
        """One run of `assets` for partition `key`, as the UI's "Materialize selected" makes."""
        result = self.job.execute_in_process(
            instance=DagsterInstance.get(), partition_key=key, asset_selection=assets
        )
        assert result.success


def test_a_changed_partition_makes_exactly_its_downstream_partitions_stale(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """About 30 s: an ingest of three files, then three runs of parts of the graph for one file,
    each followed by the question Dagster's UI asks of every partition."""
    from loom_dagster.extractor.settings import ENV_ROUTES

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Hi\n")
    (folder / "b.md").write_text("# Hi\n\n")
    (folder / "c.txt").write_text("Buy lamp oil and rope.\n")  # the reference extractor's
    with MisbehavingExtractor() as markdown:
        serve_markdown(markdown, "# Hi")
        monkeypatch.setenv(ENV_ROUTES, json.dumps({"markdown": markdown.url}))
        outcomes = {o.path: o for o in api.ingest_folder(folder).outcomes}
        assert {o.status for o in outcomes.values()} == {"published"}
        keys = sorted(o.revision for o in outcomes.values())
        a = outcomes["a.md"].revision
        location = Location()
        now = location.statuses(keys)
        assert set(now.values()) == {StaleStatus.FRESH}, now

        # The same bytes stored again, the same artifact made again: nothing is stale.
        location.materialize([ORIGINAL, ARTIFACT], a)
        assert location.stale(keys) == set()

        # a.md's artifact made anew with other content: its chunks and datasets are stale (they
        # read the artifact), and nothing else: not its published (it reads the chunks, which
        # did not change yet), nor any partition of b.md or c.txt.
        serve_markdown(markdown, "# Hello")
        location.materialize([ARTIFACT], a)
        assert location.stale(keys) == {(CHUNKS, a), (DATASETS, a)}

        # Those made anew: the published step's chunks changed, so published follows in the
        # same run, and everything is in sync again.
        location.materialize([CHUNKS, PUBLISHED, DATASETS], a)
        assert location.stale(keys) == set()
