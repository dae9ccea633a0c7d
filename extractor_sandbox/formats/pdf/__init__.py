"""The PDF layout reader's parts; `extractor_sandbox.formats.pdflayout` is its entry point."""
