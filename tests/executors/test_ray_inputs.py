"""Inputs shipped to Ray workers (executors/ray_inputs): packed once on the driver, written where a node lacks the
driver's paths, kept as they are where it has them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ragdive.config import ExperimentConfig, validate_config
from ragdive.executors.ray_inputs import absolute_inputs, input_paths, localize, pack, relocated_files


def config(root: Path) -> ExperimentConfig:
    corpus = root / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.md").write_text("Alpha.\n")
    (corpus / "sub" / "b.md").write_text("Beta.\n")
    (root / "index").mkdir()
    (root / "index" / "chunks.json").write_text("[]")
    (root / "personas.yaml").write_text("name: hurried\ndescription: short questions\n")
    data = {
        "corpus": {"path": str(corpus)},
        "simulation": {"persona_files": [str(root / "personas.yaml")]},
        "target": {"type": "reference", "index_dir": str(root / "index")},
    }
    return validate_config(data, ExperimentConfig, source="test")


def test_a_node_without_the_driver_s_paths_gets_copies_and_one_with_them_keeps_them(tmp_path: Path) -> None:
    driver = tmp_path / "driver"
    settings = config(driver)
    shipped = pack([settings])
    assert sorted(Path(f).name for f in shipped.files) == ["a.md", "b.md", "chunks.json", "personas.yaml"]

    same, moved = localize(settings, shipped, tmp_path / "scratch-here")  # the driver's own node
    assert same == settings and moved == {}

    shutil.rmtree(driver)  # another node: nothing at the driver's paths
    there, moved = localize(settings, shipped, tmp_path / "scratch")
    assert set(moved) == set(input_paths(settings))
    assert Path(there.corpus.path, "sub", "b.md").read_text() == "Beta.\n"
    assert Path(there.simulation.persona_files[0]).read_text().startswith("name: hurried")
    assert Path(there.target.index_dir, "chunks.json").is_file()  # type: ignore[union-attr]
    assert all(str(tmp_path / "scratch") in p for p in input_paths(there))


def test_relative_paths_are_made_absolute_on_the_driver_and_the_manifest_follows_the_move() -> None:
    relative = validate_config({"corpus": {"path": "docs"}}, ExperimentConfig, source="test")
    assert absolute_inputs(relative).corpus.path == str(Path.cwd() / "docs")  # type: ignore[union-attr]
    manifest = {"config": {"corpus": {"path": "/d/corpus"}, "target": {"index_dir": "/d/index"}}, "status": "x"}
    files = {"manifest.json": json.dumps(manifest).encode(), "conversations.jsonl": b"{}\n"}
    moved = relocated_files(files, {"/d/corpus": "/s/corpus"})
    config_now = json.loads(moved["manifest.json"])["config"]
    assert config_now == {"corpus": {"path": "/s/corpus"}, "target": {"index_dir": "/d/index"}}
    assert moved["conversations.jsonl"] == b"{}\n" and relocated_files(files, {}) is files
