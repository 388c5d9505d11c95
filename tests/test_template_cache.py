"""Compiled templates kept from one process to the next (ragdive/template_cache.py): a second process renders every
prompt to the same bytes without compiling it, and a cache folder that cannot be made, or entries that do not
load, still render the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ragdive

ROOT = Path(__file__).resolve().parents[1]

# Renders every prompt file (with test_prompt_layout's realistic data, answerable and probe) and loads the report's
# template, counting what jinja compiled from source: one JSON object on stdout.
RENDER = """
import json
import jinja2
compiled = []
compile_source = jinja2.Environment.compile
def counted(self, source, name=None, filename=None, *args, **kwargs):
    compiled.append(name)
    return compile_source(self, source, name, filename, *args, **kwargs)
jinja2.Environment.compile = counted
from ragdive import prompt_files
from ragdive.report import html
from tests.test_prompt_layout import EXPECTED_LINES, VARIABLES
texts = {}
for package, name in sorted(EXPECTED_LINES):
    for probe in (False, True):
        variables = VARIABLES[package](name, probe)
        texts[f"{package}:{name}:{probe}"] = prompt_files.render_prompt(package, name, **variables)
html.environment().get_template("report.html.j2")
print(json.dumps({"texts": texts, "compiled": compiled}))
"""


def render_in_a_process(cache_home: Path) -> dict[str, object]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(Path(ragdive.__file__).parents[1]))
    env.pop("RAGDIVE_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", RENDER], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return dict(json.loads(done.stdout))


def test_a_second_process_renders_the_same_bytes_from_the_compiled_cache(tmp_path: Path) -> None:
    first = render_in_a_process(tmp_path)
    entries = list((tmp_path / "ragdive" / "jinja").iterdir())
    assert len(first["compiled"]) >= 30 and len(entries) == len(first["compiled"])  # type: ignore[arg-type]
    second = render_in_a_process(tmp_path)
    assert second["compiled"] == []  # every template came from the cache
    assert second["texts"] == first["texts"]


def test_a_folder_that_cannot_be_made_still_renders(tmp_path: Path) -> None:
    written = render_in_a_process(tmp_path / "cache")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # the cache folder cannot be made under it (even as root)
    unwritable = render_in_a_process(blocked)
    assert unwritable["texts"] == written["texts"]
    assert unwritable["compiled"] == written["compiled"]  # all compiled from source, no error


def test_damaged_entries_are_compiled_again_and_rewritten(tmp_path: Path) -> None:
    first = render_in_a_process(tmp_path)
    entries = list((tmp_path / "ragdive" / "jinja").iterdir())
    for entry in entries:  # the header (jinja's and Python's versions, the source's checksum) intact, the code cut
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2])
    damaged = render_in_a_process(tmp_path)
    assert damaged["texts"] == first["texts"]
    assert sorted(damaged["compiled"]) == sorted(first["compiled"])  # type: ignore[type-var]
    assert render_in_a_process(tmp_path)["compiled"] == []  # rewritten whole
