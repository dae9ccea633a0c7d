"""The PDF reader: `reader.extract_pdf` is its entry point, the other modules its parts."""
