#!/usr/bin/env bash
# Builds the peers of bench/peers.py, each in its own venv under .peers/ (or $1), from the package
# registry at the versions the bench's table names. None of them is a dependency of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
into="${1:-.peers}"
uv=.tools/bin/uv
mkdir -p "$into"
make_venv() {  # name, then the requirements
  local name="$1"; shift
  [ -x "$into/$name/bin/python" ] || "$uv" venv --quiet --python .venv/bin/python "$into/$name"
  "$uv" pip install --quiet --python "$into/$name/bin/python" "$@"
}
# markitdown's DOCX path needs lxml 6.1.0: 6.2 breaks it.
make_venv markitdown 'markitdown[docx,pptx,xlsx,pdf]==0.1.9' 'lxml==6.1.0'
make_venv pymupdf 'pymupdf==2.0.*'          # holds pymupdf4llm
make_venv pdfplumber 'pdfplumber==0.11.*'
make_venv docling 'docling==2.143.*'        # its PDF models come from a hub: not used here
