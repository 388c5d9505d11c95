"""`ragdive runs list|show`: what is in a runs folder."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ..errors import StoreError
from ..records import RunManifest, known_rejections
from ..store import RunStore, list_runs, process_alive, shown_status
from .display import console, out

app = typer.Typer(help="List and inspect run directories.", no_args_is_help=True)
# a pipe gets 160 columns, not rich's 80, so tables are not truncated in logs and tests


@app.command("list")
def list_cmd(
    directory: Path = typer.Argument(Path("runs"), help="Folder holding run directories."),
    as_json: bool = typer.Option(False, "--json", help="Print the runs as JSON (schema ragdive.runs)."),
) -> None:
    """List runs: id, created, status, counts."""
    if as_json:
        _list_json(directory)
        return
    demo = Path("ragdive-demo")  # `ragdive demo` writes there by default, not to runs/
    if directory == Path("runs") and not directory.exists() and demo.is_dir():
        out.print(f"no runs/ folder here; the demo's runs are in {demo}: ragdive runs list {demo}")
        return
    stores = list_runs(directory)
    if not stores:
        out.print(f"no runs in {directory}")
        return
    # box.SIMPLE and fixed widths: a run id must never be cut, even in an 80-column pipe
    table = Table(box=box.SIMPLE, pad_edge=False)
    table.add_column("run", no_wrap=True, min_width=22)
    table.add_column("created", no_wrap=True, min_width=16)
    for name in ("kind", "status", "convs", "turns", "rejected", "scores"):
        table.add_column(name, no_wrap=True)
    unreadable: list[str] = []
    for store in stores:
        try:
            m = store.read_manifest()
        except StoreError as exc:  # one broken run must not hide the others
            table.add_row(store.path.name, "-", "-", "unreadable", "-", "-", "-", "-")
            unreadable.append(str(exc))
            continue
        t = m.totals
        table.add_row(
            m.run_id,
            m.created.strftime("%Y-%m-%d %H:%M"),
            m.kind,
            shown_status(m),
            str(t.conversations),
            str(t.turns),
            _rejections(m),
            str(t.scores),
        )
    out.print(table)
    for problem in unreadable:
        console.print(f"warning: {problem}", markup=False, soft_wrap=True)  # one line per run, however long


@app.command("show")
def show_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the run and its metrics as JSON (schema ragdive.run)."),
) -> None:
    """Summarise one run's manifest."""
    store = RunStore.open(run)
    if as_json:
        from ..analysis.outputs import run_document
        from ..records.outputs import dump

        print(dump(run_document(store, status=shown_status(store.read_manifest()))))
        return
    m = store.read_manifest()
    t = m.totals
    cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
    lines = [
        f"run        {m.run_id}" + (f"  ({m.name})" if m.name else ""),
        f"kind       {m.kind}    status {shown_status(m)}    schema v{m.schema_version}    ragdive {m.package_version}",
        f"created    {m.created:%Y-%m-%d %H:%M:%S} UTC    updated {m.updated:%Y-%m-%d %H:%M:%S} UTC",
        f"target     {m.target or '-'}",
        "models     " + (", ".join(f"{role}={name}" for role, name in m.models.items()) or "-"),
        f"seed       {'-' if m.seed is None else m.seed}",
        f"totals     {t.conversations} conversations, {t.turns} turns, {_rejections(m)} rejections, {t.errors} errors",
        f"usage      {_tokens(t.prompt_tokens)} prompt + {_tokens(t.completion_tokens)} completion tokens, cost {cost}",
        f"scores     {t.scores} ({t.unscored} unscored)",
    ]
    if m.source_run:  # a replay: what it replayed, and what that means for reading it
        lines.insert(2, f"replay of  {m.source_run}" + (f" ({m.note})" if m.note else ""))
    faults: dict[str, int] = {}
    for spent in t.spend:
        for kind, count in spent.faults.items():
            faults[kind] = faults.get(kind, 0) + count
    if faults:
        retries = sum(spent.retries for spent in t.spend)
        shown = ", ".join(f"{kind} x{count}" for kind, count in sorted(faults.items()))
        lines.append(f"faults     {shown} ({retries} retried)")
    if m.process is not None:
        lines.append(f"process    {_describe_process(m)}")
    if m.provenance is not None:
        lines += _describe_provenance(m)
    if m.error:
        lines.append(f"error      {m.error}")
    if m.alarms is not None:  # computed when the run was last scored
        lines += [f"alarm      {a.code}: {a.message}" for a in m.alarms] or ["alarms     none"]
    for line in lines:
        out.print(line, markup=False)
    for name, result in (("conversations.jsonl", store.conversations()),):
        for problem in result.problems:
            out.print(f"warning    {name}: {problem}", markup=False)


def _rejections(m: RunManifest) -> str:
    """An imported run's source kept no validator rejections: none on disk is unknown, not 0."""
    count = known_rejections(m)
    return "unknown" if count is None else str(count)


def _tokens(count: int | None) -> str:
    return "unknown" if count is None else str(count)


def _describe_provenance(m: RunManifest) -> list[str]:
    """Where an imported run came from, and what the importer had to make up."""
    assert m.provenance is not None
    p = m.provenance
    lines = [f"imported   from {p.source_format} (importer v{p.importer_version}), {p.shape}"]
    lines += [f"source     {f.name}  sha256 {f.sha256[:16]}…  ({f.role})" for f in p.files]
    lines += [f"invented   {what}" for what in p.invented]
    lines += [f"note       {note}" for note in p.notes]
    return lines


def _describe_process(m: RunManifest) -> str:
    """Who runs (or last ran) the run, and for a run marked running, whether that process is still there."""
    assert m.process is not None
    where = f"pid {m.process.pid} on {m.process.host}"
    if m.status != "running":
        return f"{where} (last session)"
    alive = process_alive(m.process)
    if alive is None:
        return f"{where}: another host, so ragdive cannot tell whether it still runs"
    return f"{where}: running" if alive else f"{where}: gone without recording how it stopped (stale)"


def _list_json(directory: Path) -> None:
    """Every readable run of the folder (an unreadable one is a warning on stderr, as in the table)."""
    from ..analysis.outputs import run_entry
    from ..records.outputs import RunListJson, dump

    entries = []
    for store in list_runs(directory) if directory.is_dir() else []:
        try:
            manifest = store.read_manifest()
        except StoreError as exc:
            console.print(f"warning: {exc}", markup=False, soft_wrap=True)
            continue
        entries.append(run_entry(store, manifest, shown_status(manifest)))
    print(dump(RunListJson(runs=entries)))
