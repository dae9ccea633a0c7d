"""Typed datasets from the tables an artifact holds: inference of schema and questions, rows
typed to Arrow, snapshots in the object store and their rows in the catalog."""
