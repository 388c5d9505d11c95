"""The run format's version: a newer one is one clear error, an older one is migrated by name (store.migrations)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import StoreError
from ragdive.records import SCHEMA_VERSION
from ragdive.store import MANIFEST, RunRecorder, RunStore, migrations


def rewrite_manifest(store: RunStore, **changes: object) -> dict[str, object]:
    data = {**json.loads((store.path / MANIFEST).read_text()), **changes}
    (store.path / MANIFEST).write_text(json.dumps(data))
    return data


@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, "2.0-beta"])
def test_a_run_of_a_newer_or_unknown_format_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: object
) -> None:
    store = RunStore.create(tmp_path)
    rewrite_manifest(store, schema_version=version)
    assert main(["runs", "show", str(store.path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().count("\n") == 0 and "Traceback" not in captured.err
    assert f"schema_version {version!r}" in captured.err and "upgrade ragdive" in captured.err
    with pytest.raises(StoreError, match="upgrade ragdive"):
        RunRecorder(store).finish("finished")  # nor is it written over


def test_a_run_of_the_first_format_is_migrated_on_read_and_rewritten_only_by_its_next_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = RunStore.create(tmp_path)
    v1 = rewrite_manifest(store, schema_version=1)
    totals = dict(v1["totals"])  # type: ignore[call-overload]
    for added in ("rejections_by_category", "spend"):
        totals.pop(added)
    rewrite_manifest(store, totals=totals)
    on_disk = (store.path / MANIFEST).read_text()

    assert store.read_manifest().schema_version == SCHEMA_VERSION
    assert main(["runs", "show", str(store.path)]) == 0
    assert f"schema v{SCHEMA_VERSION}" in capsys.readouterr().out
    assert (store.path / MANIFEST).read_text() == on_disk  # a reader never rewrites the run

    RunRecorder(store).record()
    assert json.loads((store.path / MANIFEST).read_text())["schema_version"] == SCHEMA_VERSION


def test_migrations_apply_in_order_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def rename(data: dict[str, object]) -> dict[str, object]:
        data["name"] = data.pop("title")
        return data

    def tag(data: dict[str, object]) -> dict[str, object]:
        return {**data, "name": f"{data['name']} (v3)"}

    monkeypatch.setattr(migrations, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(migrations, "MIGRATIONS", [(1, "title is name", rename), (2, "tag", tag)])
    data, applied = migrations.migrate_manifest({"schema_version": 1, "title": "old"}, "test")
    assert data == {"schema_version": 3, "name": "old (v3)"} and applied == ["title is name", "tag"]
    assert migrations.migrate_manifest({"schema_version": 2, "name": "x"}, "test")[1] == ["tag"]
    with pytest.raises(StoreError, match="no migration"):
        migrations.migrate_manifest({"schema_version": 0}, "test")


def test_the_real_list_takes_every_older_version_to_the_current_one() -> None:
    from_versions = [m[0] for m in migrations.MIGRATIONS]
    assert from_versions == list(range(1, SCHEMA_VERSION))  # one named step per version, in order
