from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.evaluation.static import load_static_dataset
from ragdive.store import RunStore, list_runs


def test_load_csv_and_jsonl(tmp_path: Path) -> None:
    csv_file = tmp_path / "q.csv"
    csv_file.write_text('title,question,answer\nParis,"Capital of France?",Paris\n,Q2?,A2\n', encoding="utf-8")
    items = load_static_dataset(csv_file)
    assert [(i.question, i.answer, i.document_id) for i in items] == [
        ("Capital of France?", "Paris", "Paris"),
        ("Q2?", "A2", "row-2"),
    ]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"question": "q", "answer": "a", "doc_id": "d"}) + "\n\n", encoding="utf-8")
    assert load_static_dataset(jsonl)[0].document_id == "d"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("q.csv", "title,question\nx,y\n", "lacks column(s) answer"),
        ("q.csv", "question,answer\n,\n", "row 1: empty question or answer"),
        ("q.jsonl", "{not json\n", "q.jsonl line 1: not valid JSON"),
        ("q.txt", "x", "expected a .csv or .jsonl"),
        ("q.csv", "", "has no rows"),
    ],
)
def test_bad_datasets_are_config_errors(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_static_dataset(path)


def write_experiment(tmp_path: Path, dataset: Path) -> Path:
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"name: squad-static\noutput_dir: {tmp_path / 'runs'}\n"
        "target:\n  type: python\n  callable: tests.evaluation.squad_target:make\n"
        f"  options:\n    dataset: {dataset}\n",
        encoding="utf-8",
    )
    return config


def test_static_mode_on_squad_questions(tmp_path: Path, squad_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = squad_dir / "static_questions.csv"
    config = write_experiment(tmp_path, dataset)
    code = main(["static", str(dataset), "--target", str(config), "--model", "judge=rulejudge/squad", "--limit", "20"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, out
    assert "20/20" in captured.err and "80/80" in captured.err  # asking, then scoring: done/total
    (store,) = list_runs(tmp_path / "runs")
    manifest = store.read_manifest()
    assert manifest.kind == "static" and manifest.status == "finished" and manifest.models["judge"] == "rulejudge/squad"
    convs = store.conversations().records
    assert len(convs) == 20 and all(len(c.turns) == 1 and c.turns[0].question_type == "initial" for c in convs)
    first = min(convs, key=lambda c: c.index)
    items = load_static_dataset(dataset, limit=20)
    assert first.document_ids == [items[0].document_id] and first.turns[0].ground_truth == items[0].answer
    assert manifest.totals.conversations == 20 and manifest.totals.errors == 1
    scores = store.scores().records
    assert len(scores) == 20 * 4 and manifest.totals.scores == 80
    by_metric = {m: [s for s in scores if s.metric == m] for m in ("correctness", "context_precision")}
    correct = [s.value for s in by_metric["correctness"] if s.scored]
    assert len(correct) == 19 and sum(correct) == 10  # even rows answered right; row 3 is a target error
    precision = [s.value for s in by_metric["context_precision"] if s.scored]
    assert set(precision) <= {0.5, 0.0} and 0.5 in precision  # the right passage sits at rank 2
    assert "per-metric summary" in out and "no_answer 1" in out  # the target's failure, counted by kind
    unscored = sum(not s.scored for s in scores)
    assert "20 questions asked, 1 target errors" in out and f"80 scores written ({unscored} unscored), 0 already" in out


def test_static_needs_a_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text("name: x\n", encoding="utf-8")
    data = tmp_path / "q.csv"
    data.write_text("question,answer\nq,a\n", encoding="utf-8")
    assert main(["static", str(data), "--target", str(config), "--model", "judge=rulejudge/x"]) == 2
    assert "no `target` section" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_static_runs_open_like_dynamic_ones(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, kind="static")
    assert RunStore.open(store.path).read_manifest().kind == "static"


def test_static_with_the_reference_rag_indexes_the_experiment_corpus(tmp_path: Path) -> None:
    """The reference target gets the experiment's corpus and the `target` model, exactly as in simulate."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bees.md").write_text("# Bees\n\nHoney bees make honey from nectar collected from flowers.\n")
    (docs / "ants.md").write_text("# Ants\n\nLeafcutter ants farm a fungus on chewed leaves.\n")
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"""
output_dir: {tmp_path / "runs"}
corpus: {{path: {docs}}}
models:
  target: {{model: scripted/extract, options: {{responder: "ragdive.targets.reference.doubles:first_passage"}}}}
target: {{type: reference, retriever: bm25, top_k: 1, index_dir: {tmp_path / "index"}}}
"""
    )
    dataset = tmp_path / "q.csv"
    dataset.write_text("title,question,answer\nbees,What do honey bees make?,honey\nants,What do ants farm?,fungus\n")
    assert main(["static", str(dataset), "--target", str(config), "--no-evaluate"]) == 0
    (run,) = list_runs(tmp_path / "runs")
    turns = {c.document_ids[0]: c.turns[0] for c in run.conversations().records}
    assert "honey" in (turns["bees"].answer or "") and turns["bees"].contexts[0].source == "bees"
    assert "fungus" in (turns["ants"].answer or "") and len(turns["ants"].contexts) == 1


def test_static_stops_with_one_error_when_the_target_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"output_dir: {tmp_path / 'runs'}\n"
        "target: {type: http, url: 'http://127.0.0.1:9/chat', max_retries: 0, timeout_s: 2}\n"
    )
    dataset = tmp_path / "q.csv"
    dataset.write_text("question,answer\n" + "".join(f"q{i}?,a{i}\n" for i in range(30)))
    assert main(["static", str(dataset), "--target", str(config), "--no-evaluate"]) == 2
    err = capsys.readouterr().err
    assert "never answered" in err and "Traceback" not in err
    (run,) = list_runs(tmp_path / "runs")
    manifest = run.read_manifest()
    assert manifest.status == "failed" and "never answered" in (manifest.error or "")
    assert 3 <= len(run.conversations().records) < 30  # stopped early; what was asked is on disk


def test_a_bug_while_asking_marks_the_static_run_failed_with_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.pipeline import static

    async def broken(*args: object, **kwargs: object) -> tuple[int, int]:
        raise RuntimeError("boom")

    monkeypatch.setattr(static, "ask_dataset", broken)
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"output_dir: {tmp_path / 'runs'}\ntarget: {{type: python, callable: 'tests.pipeline.helpers:answer'}}\n"
    )
    dataset = tmp_path / "q.csv"
    dataset.write_text("question,answer\nq?,a\n")
    assert main(["static", str(dataset), "--target", str(config), "--no-evaluate"]) == 1
    assert "this is a bug in ragdive" in capsys.readouterr().err
    (run,) = list_runs(tmp_path / "runs")
    manifest = run.read_manifest()
    assert manifest.status == "failed" and manifest.error == "RuntimeError: boom"
    assert manifest.process is not None  # the session that ran it is recorded


def test_per_document_sampling_keeps_n_questions_about_each_seed_document() -> None:
    """The paper's Table 5 static arm: questions about the documents the conversations were seeded with."""
    from ragdive.evaluation.static import StaticItem, sample_per_document

    items = [StaticItem(f"q{d}{i}", "a", d) for d in ("bees", "ants", "wasps") for i in range(4)]
    chosen = sample_per_document(items, [("ants", "Ants"), ("bees", "Bees")], 2, seed=7)
    assert [c.document_id for c in chosen] == ["ants", "ants", "bees", "bees"]  # seed order, never wasps
    assert len({c.question for c in chosen}) == 4
    assert chosen == sample_per_document(items, [("ants", "Ants"), ("bees", "Bees")], 2, seed=7)  # seeded
    by_title = sample_per_document(items, [("docs/x", "wasps")], 9, seed=7)  # matched by title, fewer than N
    assert [c.question for c in by_title] == ["qwasps0", "qwasps1", "qwasps2", "qwasps3"]
    with pytest.raises(ConfigError, match="no question of the dataset is about a seed document"):
        sample_per_document(items, [("moths", "Moths")], 2, seed=7)


def test_static_per_document_asks_about_the_configs_seed_documents(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("bees", "ants", "moths"):
        (docs / f"{name}.md").write_text(f"# {name}\n\nFacts about {name}.\n")
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"""
output_dir: {tmp_path / "runs"}
seed: 3
corpus: {{path: {docs}}}
simulation: {{conversations: 2}}
models:
  target: {{model: scripted/extract, options: {{responder: "ragdive.targets.reference.doubles:first_passage"}}}}
target: {{type: reference, retriever: bm25, top_k: 1, index_dir: {tmp_path / "index"}}}
"""
    )
    rows = "".join(f"{d},What about {d} {i}?,{d}\n" for d in ("bees", "ants", "moths") for i in range(3))
    dataset = tmp_path / "q.csv"
    dataset.write_text("title,question,answer\n" + rows)
    assert main(["static", str(dataset), "--target", str(config), "--no-evaluate", "--per-document", "2"]) == 0
    (run,) = list_runs(tmp_path / "runs")
    asked = [c.document_ids[0] for c in run.conversations().records]
    from ragdive.config import load_config
    from ragdive.simulation import seed_documents

    seeds = [d.id for d in seed_documents(load_config(config))]
    assert len(seeds) == 2 and sorted(asked) == sorted(seeds * 2)
