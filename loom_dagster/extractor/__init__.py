"""The extractor client, in plain Python: settings (settings.py), what services declare
(routing.py), one bounded HTTP call (http.py), the client (client.py) and the local default
service (local.py). Dagster sees it only through resources/extractor.py."""
