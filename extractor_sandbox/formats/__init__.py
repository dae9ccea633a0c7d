"""One reader per format, each `read(content, options, *, name) -> artifact` (registry.py names
them), and what readers share: typed table cells (tables.py), OOXML packages (package.py), what
DOCX and PPTX share (office.py), and OCR (ocr.py)."""
