"""One FormatSpec per format (extractor_sandbox/registry.py), and everything derived from it.

Detection, declaration, dispatch and the child's warm-up read the specs; no other table names a
format. So a format added as one spec and one module is detected, declared, dispatched and warmed.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from extractor_sandbox import child, registry, source
from extractor_sandbox.contract import CONTRACT_FORMATS
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.registry import AVAILABLE, FORMATS, SPECS, FormatSpec

ROOT = Path(__file__).resolve().parents[2]


def test_every_contract_format_has_one_spec_in_the_contracts_order() -> None:
    assert tuple(spec.name for spec in FORMATS) == CONTRACT_FORMATS
    assert set(SPECS) == set(CONTRACT_FORMATS)


def test_declaration_and_binary_formats_are_derived_from_the_specs() -> None:
    assert source.DECLARED_FORMATS == {name: spec.options for name, spec in AVAILABLE.items()}
    assert source.BINARY_FORMATS == {"pdf", "docx", "pptx", "xlsx", "parquet"}
    assert SPECS["sql"].options == ("encoding", "sql_dialect")


@pytest.mark.parametrize(
    "spec", [spec for spec in FORMATS if spec.available()], ids=lambda spec: spec.name
)
def test_every_reader_takes_the_one_call_signature(spec: FormatSpec) -> None:
    # (content, options, *, name): a text reader gets the decoded text, a binary one the bytes.
    inspect.signature(spec.reader()).bind("content", {}, name="file")


def test_a_binary_spec_names_how_its_content_is_recognised() -> None:
    for spec in FORMATS:
        assert spec.binary == bool(spec.magic or spec.zip_part), spec.name
        assert spec.binary == bool(spec.expected), spec.name


def test_a_binary_format_that_is_not_its_content_is_refused_with_the_specs_words() -> None:
    with pytest.raises(ExtractError) as caught:
        source.detect_format(b"plain text", "x", "parquet")
    assert (caught.value.code, caught.value.message) == (
        "format_mismatch",
        "the file is not parquet (no PAR1 magic at its start and end)",
    )


@pytest.fixture
def shout_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "shout_reader.py").write_text(
        textwrap.dedent(
            """
            from extractor_sandbox.artifact import BlockBuilder, build_artifact, line_coverage
            from extractor_sandbox.artifact import split_lines

            def read(text, options, *, name):
                lines = split_lines(text)
                blocks = BlockBuilder()
                blocks.add("paragraph", text.upper(), lines[0], lines[-1])
                return build_artifact(
                    "shout", "shout", "1", blocks.blocks, line_coverage(lines, blocks.blocks)
                )
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "shout_reader"
    sys.modules.pop("shout_reader", None)


def test_a_format_added_as_one_spec_and_one_module_is_dispatched_and_warmed(
    shout_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []
    spec = FormatSpec(
        "shout", shout_module, "read", options=("encoding",), prepare=lambda: prepared.append("x")
    )
    monkeypatch.setitem(registry.AVAILABLE, "shout", spec)  # type: ignore[index]

    child.warm("shout", {})
    assert shout_module in sys.modules and prepared == ["x"]
    artifact = source.extract(b"hello", "shout", "a.txt", {})
    assert [block["text"] for block in artifact["blocks"]] == ["HELLO"]


def test_the_registry_loads_no_readers_library() -> None:
    # (test_service.py holds that the service loads no reader.)
    code = (
        "import sys\n"
        "import extractor_sandbox.service\n"
        "print([m for m in sys.modules if m.split('.')[0] in ('pypdf', 'pyarrow', 'sqlglot')])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_child_entry_point_loads_none_of_the_runner_before_it_confines_itself() -> None:
    # What `python -m extractor_sandbox.child` imports before main() runs: the runner's machinery
    # (processes, threads, the service's settings) is the parent's and stays out of the child.
    code = (
        "import sys\n"
        "import extractor_sandbox.child\n"
        "print(sorted(m for m in ('extractor_sandbox.runner', 'extractor_sandbox.settings',"
        " 'extractor_sandbox.source', 'subprocess', 'threading') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-s", "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_mypy_refuses_a_reader_whose_artifact_has_the_wrong_shape(tmp_path: Path) -> None:
    # The reader boundary is typed (contract.Artifact), so a reader that forgets a field does not
    # pass the type check.
    module = tmp_path / "bad_reader.py"
    module.write_text(
        "from extractor_sandbox.contract import Artifact\n\n\n"
        "def extract_bad(content: str, options: dict[str, str], *, name: str) -> Artifact:\n"
        "    return {'schema_version': '1', 'format': 'bad', 'parser': 'p',"
        " 'parser_version': '1', 'options': {}, 'attrs': {}, 'warnings': [], 'blocks': []}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout
    assert 'Missing key "coverage" for TypedDict "Artifact"' in done.stdout
