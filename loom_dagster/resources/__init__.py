"""Dagster resources: thin ConfigurableResources that hand the domain's objects (extractor
client, object store, catalog, search index, settings, the event batch) to assets and sensors."""
