"""Loom's reference extractor: an HTTP service of extractor contract v1 (see README.md).

Nothing is imported here, so `python -m extractor_sandbox.child` starts without loading the
service, and the service without loading a parser.
"""
