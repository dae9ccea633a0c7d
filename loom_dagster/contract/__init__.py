"""Contract v1 on the pipeline's side: the artifact's types, every rule an artifact must pass
before anything uses it (validate.py), format names and routing, metadata bounded for Dagster."""
