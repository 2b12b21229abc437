"""Where a run keeps its store: a relative ``store`` is relative to the spec file, like
``data.path``, whatever the working directory."""

from libre_flows.flows.train import train
from libre_lib.ops.registry import ModelRegistry


def test_runs_started_from_different_folders_share_the_spec_s_store(
    tmp_path, write_spec, monkeypatch
):
    """A cron job started outside the project used to resolve the store against its own working
    directory: it trained into a second, empty registry and found "no champion yet"."""
    specs, first_cwd, cron_cwd = tmp_path / "specs", tmp_path / "project", tmp_path / "cron"
    for folder in (specs, first_cwd, cron_cwd):
        folder.mkdir()
    spec = write_spec(specs, store="store")

    monkeypatch.chdir(first_cwd)
    first = train(spec)
    monkeypatch.chdir(cron_cwd)
    again = train(spec.resolve())

    assert again["cache_hits"] == again["n_stages"]
    assert again["model_version"] == first["model_version"] and not again["new_version"]
    registry = ModelRegistry(specs / "store")
    assert [v.version for v in registry.versions("haberman")] == [first["model_version"]]
    assert registry.champion("haberman").version == first["model_version"]
    assert list(first_cwd.iterdir()) == [] and list(cron_cwd.iterdir()) == []


def test_the_same_rows_in_other_bytes_reuse_the_version(tmp_path, write_spec, data_copy):
    """An export job that rewrites the file with CRLF line endings and quoted fields changes
    its sha256, not its rows: the retraining reproduces the model and reuses its version
    instead of registering a copy beside it (which could replace a champion rolled back to)."""
    data = data_copy()
    spec = write_spec(tmp_path, data__path=str(data))
    first = train(spec)

    header, *rows = data.read_text().splitlines()
    quoted = ",".join(f'"{name}"' for name in header.split(","))
    data.write_bytes("\r\n".join([quoted, *rows, ""]).encode())
    again = train(spec)

    assert again["cache_hits"] < again["n_stages"]  # another file: every stage read it anew
    assert again["model_version"] == first["model_version"] and not again["new_version"]
    assert [v.version for v in ModelRegistry(tmp_path / "store").versions("haberman")] == [
        first["model_version"]
    ]


def test_the_same_rows_at_another_path_reuse_the_version(tmp_path, write_spec, data_copy):
    """A copy of the data under another name (an export with a date in its name) registered
    the same model as a new version, and the champion moved between identical copies."""
    import shutil

    data = data_copy()
    first = train(write_spec(tmp_path, data__path=str(data)))
    copy = tmp_path / "exports" / "haberman-2026-11-30.csv"
    copy.parent.mkdir()
    shutil.copy(data, copy)
    again = train(write_spec(tmp_path, data__path=str(copy)))
    assert again["model_version"] == first["model_version"] and not again["new_version"]
    assert [v.version for v in ModelRegistry(tmp_path / "store").versions("haberman")] == [
        first["model_version"]
    ]


def test_prune_keeps_the_newest_runs_the_champions_run_and_what_they_use(spec_copy, data_copy):
    """The store grew by a copy of the data and a run folder per data change, with no way to
    trim it."""
    from pathlib import Path

    import pandas as pd
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    data = data_copy("haberman.csv")
    spec = spec_copy(data={"path": str(data)})
    frame = pd.read_csv(data)
    runs = []
    for rows in (250, 280, 306):  # a growing table: three data versions
        frame.iloc[:rows].to_csv(data, index=False)
        runs.append(train(spec))
    store = Path(runs[0]["run_dir"]).parents[2]
    registry = ModelRegistry(store)
    registry.set_champion("haberman", runs[0]["model_version"], reason="rollback")
    files_before = {p for p in store.rglob("*.parquet")}
    versions_before = [v.version for v in registry.versions("haberman")]

    cli = CliRunner()
    args = ["prune", "haberman", "--store", str(store), "--keep-runs", "1"]
    dry = cli.invoke(app, [*args, "--min-age-hours", "0", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would remove 1 run folder" in dry.output and Path(runs[1]["run_dir"]).name in dry.output
    assert {p for p in store.rglob("*.parquet")} == files_before  # a dry run removes nothing
    young = cli.invoke(app, args)  # every stage file is younger than a day: runs only
    assert young.exit_code == 0 and "removed 1 run folder, 0 stage files" in young.output

    from libre_flows.flows.validate import validate
    from libre_lib.ops.artifacts import _decode_metadata

    validate(spec_copy("credit-approval"))  # another pipeline's files, no run of it listing them
    other = {p for p in store.rglob("*.parquet") if p not in files_before}
    assert other and all(
        _decode_metadata(pq.read_schema(p).metadata)["pipeline"] == "credit-approval" for p in other
    )

    done = cli.invoke(app, [*args, "--min-age-hours", "0"])
    assert done.exit_code == 0, done.output
    assert all(p.is_file() for p in other)  # credit-approval's to prune, not haberman's
    assert not Path(runs[1]["run_dir"]).exists()  # neither the newest nor the champion's
    assert Path(runs[0]["run_dir"]).exists() and Path(runs[2]["run_dir"]).exists()
    kept = {p for p in store.rglob("*.parquet")} - other
    assert kept < files_before
    for run in (runs[0], runs[2]):  # what the kept runs list is all there
        assert all(Path(s["path"]).is_file() for s in run["stages"])
    reports = {
        Path(s["path"]) for r in (runs[0], runs[2]) for s in r["stages"] if s["stage"] == "report"
    }
    assert len(reports) == 2  # the report stage is listed, so pruned as the others are
    assert set((store / "report").glob("*.parquet")) == reports
    assert [v.version for v in registry.versions("haberman")] == versions_before
    again = train(spec)  # the latest data again: every stage read from the store
    assert again["cache_hits"] == again["n_stages"]
    bad = cli.invoke(app, ["prune", "haberman", "--store", str(store), "--keep-runs", "0"])
    assert (
        bad.exit_code == 1
        and "keep_runs (--keep-runs) must be an integer of at least 1" in bad.output
    )
    for hours in ("-5", "nan"):  # a user's mistake, in one line (NaN pruned nothing, silently)
        bad = cli.invoke(app, [*args, "--min-age-hours", hours])
        assert bad.exit_code == 1, bad.output
        assert bad.output.startswith("error: --min-age-hours must be at least")
        assert "BadParameter" not in bad.output and "--debug" not in bad.output
