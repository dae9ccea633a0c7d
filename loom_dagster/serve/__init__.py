"""`loom serve`: the published search, passages, documents and datasets, read-only, for agents
(the Model Context Protocol, over stdio or streamable HTTP) and for services (a JSON API under
/v1 on the same HTTP server).

One implementation under both: `reader.Reader` calls the domain functions the command line
calls (the search service over the home's kept-open index, the catalog's file history, the
datasets catalog, the query service, the extractor's formats) inside a caller's scope; `mcp`
wraps it as tools, `http` as routes; `tokens` reads the token file and says which sources a
bearer token may read; `bounds` holds every limit and the one error type.

Loom has no namespace yet: a token's scope is a set of source names (README, "loom serve").
"""
