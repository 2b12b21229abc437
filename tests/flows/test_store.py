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
