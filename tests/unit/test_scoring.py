"""Batch scoring: equal to the model's own outputs, drift semantics, streaming, atomic output."""

import json
import math
import re
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from libre_lib import LibreClassifier, LibreError
from libre_lib.errors import DataError, LibreWarning, ParameterError
from libre_lib.ops import scoring
from libre_lib.ops.contract import ContractViolation, DataContract
from libre_lib.ops.scoring import (
    SCORE_COLUMNS,
    check_inputs,
    find_contract,
    list_inputs,
    render_scoring_report,
    score_files,
    score_frame,
)
from libre_lib.ops.sources import read_types


def _fired_lists(model, frame):
    return [tuple(np.flatnonzero(row).tolist()) for row in model.fired_rules(frame)]


def _rules_testing(model, column):
    return [j for j, rule in enumerate(model.rules_) if column in rule.features]


# --- score_frame ------------------------------------------------------------------------------


def test_scored_frame_equals_the_model_outputs(credit):
    X, model, contract = credit
    scored, report = score_frame(model, X, contract)
    assert report.ok and not report.warnings
    assert list(scored.columns) == [*X.columns, *SCORE_COLUMNS]
    pd.testing.assert_frame_equal(scored[list(X.columns)], X)
    np.testing.assert_array_equal(scored["prediction"].to_numpy(), model.predict(X))
    positive = list(model.classes_).index(model.positive_class_)
    np.testing.assert_array_equal(scored["score"].to_numpy(), model.predict_proba(X)[:, positive])
    assert scored["fired_rules"].tolist() == _fired_lists(model, X)
    explained = model.explain(X)
    assert scored["explanation"].tolist() == explained["explanation"].tolist()
    assert [list(r) for r in scored["fired_rules"]] == explained["rules"].tolist()
    none_fired = scored["fired_rules"].map(len) == 0
    assert none_fired.any() and (scored.loc[none_fired, "explanation"] == "").all()
    assert (scored.loc[none_fired, "score"] == 0).all()


def test_score_frame_keeps_the_index_and_takes_a_model_path(credit, tmp_path):
    X, model, contract = credit
    path = tmp_path / "model.json"
    path.write_text(model.to_json())
    frame = X.iloc[::5].set_axis(X.index[::5] * 10)
    scored, _ = score_frame(path, frame, contract)
    assert scored.index.equals(frame.index)
    np.testing.assert_array_equal(scored["prediction"].to_numpy(), model.predict(frame))


def test_score_frame_refuses_broken_data(credit):
    X, model, contract = credit
    with pytest.raises(ContractViolation, match="column 'a9': missing"):
        score_frame(model, X.drop(columns=["a9"]), contract)
    with pytest.raises(DataError, match="prediction"):
        score_frame(model, X.assign(prediction=1), contract)


def test_drifted_rows_are_scored_with_the_documented_semantics(credit):
    X, model, contract = credit
    base = X.iloc[:200].reset_index(drop=True)
    before = model.fired_rules(base)
    categorical = next(
        c.name
        for c in contract.columns
        if c.kind == "categorical" and _rules_testing(model, c.name)
    )
    no_missing_bin = next(
        c.name for c in contract.columns if not c.has_missing_bin and _rules_testing(model, c.name)
    )
    for column, value in ((categorical, "never-seen"), (no_missing_bin, None)):
        drifted = base.copy()
        drifted[column] = drifted[column].astype(object)
        drifted.loc[1:, column] = value  # all but the first row (a column empty in every row
        # the rules test is an error: test_a_tested_column_empty_in_every_row_is_an_error)
        scored, report = score_frame(model, drifted, contract)
        fired = np.array(
            [[j in row for j in range(len(model.rules_))] for row in scored["fired_rules"]]
        )[1:]
        tested = _rules_testing(model, column)
        untested = [j for j in range(len(model.rules_)) if j not in tested]
        assert not fired[:, tested].any()  # rules testing the column never fire on these rows
        np.testing.assert_array_equal(fired[:, untested], before[1:, untested])  # others alike
        np.testing.assert_array_equal(scored["prediction"].to_numpy(), model.predict(drifted))
        assert {w.column for w in report.warnings} == {column}
    numeric = next(
        c for c in contract.columns if c.kind == "numeric" and _rules_testing(model, c.name)
    )
    for beyond, edge in ((numeric.max * 10 + 1e6, numeric.max), (numeric.min - 1e6, numeric.min)):
        scored, report = score_frame(model, base.assign(**{numeric.name: beyond}), contract)
        at_edge = model.fired_rules(base.assign(**{numeric.name: edge}))
        assert scored["fired_rules"].tolist() == [tuple(np.flatnonzero(r)) for r in at_edge]
        assert report.warnings[0].problem == "out_of_range" and report.warnings[0].count == 200


def test_an_empty_frame_scores_to_an_empty_frame(credit):
    X, model, contract = credit
    scored, report = score_frame(model, X.iloc[:0], contract)
    assert len(scored) == 0 and list(scored.columns)[-4:] == list(SCORE_COLUMNS)
    assert report.n_rows == 0


# --- inputs ------------------------------------------------------------------------------------


def _write_inputs(X: pd.DataFrame, folder):
    """Three files (CSV, gzipped CSV, Parquet with small row groups) plus files to skip."""
    frame = X.assign(customer_id=np.arange(len(X)))
    (folder / "sub").mkdir(parents=True)
    frame.iloc[:200].to_csv(folder / "a.csv", index=False)
    frame.iloc[450:].to_csv(folder / "c.csv.gz", index=False)
    frame.iloc[200:450].to_parquet(folder / "sub" / "b.parquet", row_group_size=60)
    (folder / "_SUCCESS").write_text("")
    (folder / "notes.txt").write_text("not data")
    frame.iloc[:5].to_csv(folder / ".hidden.csv", index=False)
    return frame


def test_list_inputs_finds_csv_and_parquet_and_skips_the_rest(credit, tmp_path):
    _write_inputs(credit[0], tmp_path / "in")
    (tmp_path / "in" / "000000_0").write_text("a,b\n1,2\n")  # a Hive part: no suffix
    (tmp_path / "in" / "_SUCCESS").write_text("")  # a marker: skipped without a word
    with pytest.warns(LibreWarning, match=r"2 file\(s\) in .* are not read .*: 000000_0, notes"):
        found = list_inputs(tmp_path / "in")
    found = [f.path.relative_to(tmp_path / "in").as_posix() for f in found]
    assert found == ["a.csv", "c.csv.gz", "sub/b.parquet"]
    with pytest.raises(DataError, match="does not exist"):
        list_inputs(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no CSV or Parquet"):
        list_inputs(tmp_path / "empty")
    with pytest.raises(DataError, match="neither CSV nor Parquet"):
        list_inputs(tmp_path / "in" / "notes.txt")


def test_check_inputs_checks_columns_and_a_sample_of_every_file(credit, tmp_path):
    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    result = check_inputs(model, tmp_path / "in", contract, sample_rows=50)
    assert len(result.files) == 3 and result.total_rows is None  # CSV row counts are unknown
    assert result.sample.n_rows == 150 and result.sample.ok
    pq_only = check_inputs(model, tmp_path / "in" / "sub", contract)
    assert pq_only.total_rows == 250
    X.iloc[:10].drop(columns=["a4"]).to_csv(tmp_path / "in" / "d.csv", index=False)
    with pytest.raises(ContractViolation, match=r"column 'a4': missing from .*d\.csv") as caught:
        check_inputs(model, tmp_path / "in", contract)
    tested = {c.name: c.in_rules for c in contract.columns}
    unused = next(name for name, in_rules in tested.items() if not in_rules)
    X.iloc[:10].drop(columns=[unused]).to_csv(tmp_path / "in" / "d.csv", index=False)
    with pytest.raises(ContractViolation, match="add it as an empty column") as caught:
        check_inputs(model, tmp_path / "in", contract)
    assert re.search(
        rf"column {unused!r}: missing from \S*d\.csv \(no rule tests it", str(caught.value)
    )
    used = next(name for name, in_rules in tested.items() if in_rules)  # no such advice
    X.iloc[:10].drop(columns=[used]).to_csv(tmp_path / "in" / "d.csv", index=False)
    with pytest.raises(ContractViolation, match=rf"column {used!r}: missing") as caught:
        check_inputs(model, tmp_path / "in", contract)
    assert "no rule tests it" not in str(caught.value)


# --- score_files -------------------------------------------------------------------------------


def test_streaming_a_directory_in_small_batches_equals_one_batch_and_the_model(credit, tmp_path):
    X, model, contract = credit
    frame = _write_inputs(X, tmp_path / "in")
    seen = []
    small = score_files(
        model,
        tmp_path / "in",
        tmp_path / "small.parquet",
        batch_rows=37,
        contract=contract,
        progress=lambda rows, total: seen.append((rows, total)),
    )
    one = score_files(
        model, tmp_path / "in", tmp_path / "one.parquet", batch_rows=10_000, contract=contract
    )
    assert small.rows == one.rows == len(X)
    assert small.batches == 6 + 7 + 7  # per file: ceil(200/37), ceil(240/37), ceil(250/37)
    assert one.batches == 3
    assert seen[-1] == (len(X), None) and len(seen) == small.batches
    a = pq.read_table(tmp_path / "small.parquet")
    b = pq.read_table(tmp_path / "one.parquet")
    assert a.equals(b)
    assert a.schema.field("fired_rules").type.value_type.bit_width == 32
    out = a.to_pandas().set_index("customer_id").sort_index()
    expected = frame.set_index("customer_id")
    np.testing.assert_array_equal(out["prediction"].to_numpy(), model.predict(X))
    positive = model.classes_.tolist().index(model.positive_class_)
    np.testing.assert_array_equal(out["score"].to_numpy(), model.predict_proba(X)[:, positive])
    assert [tuple(r) for r in out["fired_rules"]] == _fired_lists(model, X)
    assert out["explanation"].tolist() == model.explain(X)["explanation"].tolist()
    pd.testing.assert_series_equal(out["a6"], expected["a6"].astype(out["a6"].dtype))
    np.testing.assert_allclose(out["a2"].to_numpy(), expected["a2"].to_numpy())
    assert small.n_positive == int((model.predict(X) == model.positive_class_).sum())
    assert list(small.rule_counts) == model.fired_rules(X).sum(axis=0).tolist()
    assert json.loads(json.dumps(small.to_dict()))["rows"] == len(X)


def test_drift_is_aggregated_over_batches_and_files(credit, tmp_path):
    X, model, contract = credit
    drifted = X.copy()
    drifted.loc[::9, "a7"] = "unheard-of"
    drifted.loc[::13, "a8"] = 1e6
    (tmp_path / "in").mkdir()
    drifted.iloc[:300].to_parquet(tmp_path / "in" / "part-0.parquet")
    drifted.iloc[300:].to_parquet(tmp_path / "in" / "part-1.parquet")
    summary = score_files(
        model, tmp_path / "in", tmp_path / "out.parquet", batch_rows=64, contract=contract
    )
    expected = contract.check(drifted)
    assert summary.report.to_dict() == expected.to_dict()
    counts = {w.column: w.count for w in summary.warnings}
    assert counts == {"a7": len(range(0, len(X), 9)), "a8": len(range(0, len(X), 13))}
    out = pd.read_parquet(tmp_path / "out.parquet")
    np.testing.assert_array_equal(out["prediction"].to_numpy(), model.predict(drifted))
    markdown = render_scoring_report(summary.to_dict(), title="Scoring report: credit")
    assert "unheard-of" in markdown and "| a8 | out_of_range |" in markdown


def _no_temp_files(folder) -> bool:
    return not [p for p in folder.rglob("*") if ".tmp-" in p.name]


def test_a_failure_midway_leaves_no_partial_output(credit, tmp_path):
    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    output = tmp_path / "out" / "scored.parquet"
    output.parent.mkdir()
    output.write_bytes(b"previous complete file")

    class Crash(Exception):
        pass

    def crash(rows, total):
        if rows > 100:
            raise Crash("disk on fire")

    with pytest.raises(Crash):
        score_files(
            model, tmp_path / "in", output, batch_rows=50, contract=contract, progress=crash
        )
    assert output.read_bytes() == b"previous complete file"
    assert _no_temp_files(tmp_path)
    output.unlink()
    with pytest.raises(Crash):
        score_files(
            model, tmp_path / "in", output, batch_rows=50, contract=contract, progress=crash
        )
    assert not output.exists() and _no_temp_files(tmp_path)


def test_broken_data_in_a_later_file_fails_without_output(credit, tmp_path):
    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    bad = X.iloc[:30].assign(customer_id=0, a14=X["a14"].iloc[:30].astype(object))
    bad.loc[25, "a14"] = "lots"
    bad.to_csv(tmp_path / "in" / "z.csv", index=False)
    output = tmp_path / "scored.parquet"
    with pytest.raises(ContractViolation) as caught:
        score_files(model, tmp_path / "in", output, batch_rows=50, contract=contract)
    message = str(caught.value)
    assert "z.csv" in message and "column 'a14': expected numbers, found 'lots'" in message
    assert "line 27" in message
    assert not output.exists() and _no_temp_files(tmp_path)
    bad["a14"] = bad["a14"].map(lambda v: None if pd.isna(v) else str(v))  # text column
    bad.to_parquet(tmp_path / "in" / "z.parquet")
    (tmp_path / "in" / "z.csv").unlink()
    with pytest.raises(
        ContractViolation, match=r"(?s)z\.parquet \(its rows 1 to 30\).*column 'a14'"
    ):
        score_files(model, tmp_path / "in", output, batch_rows=50, contract=contract)
    assert not output.exists() and _no_temp_files(tmp_path)


def test_the_output_is_never_read_as_an_input(credit, tmp_path):
    X, model, contract = credit
    (tmp_path / "in").mkdir()
    X.to_parquet(tmp_path / "in" / "data.parquet")
    output = tmp_path / "in" / "scored.parquet"
    for _ in range(2):
        summary = score_files(model, tmp_path / "in", output, contract=contract)
        assert summary.rows == len(X) and summary.files == (str(tmp_path / "in" / "data.parquet"),)


def test_an_output_through_a_symbolic_link_replaces_the_file_it_names(credit, tmp_path):
    """The link was replaced by a file, and the file it named, which others read, kept the
    old scores."""
    X, model, contract = credit
    X.to_parquet(tmp_path / "data.parquet")
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "scored.parquet"
    target.write_bytes(b"old scores")
    link = tmp_path / "latest.parquet"
    link.symlink_to(target)
    score_files(model, tmp_path / "data.parquet", link, contract=contract)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert len(pd.read_parquet(target)) == len(X)
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


def test_the_output_names_the_model_that_scored_it(credit, tmp_path):
    """Its schema held no metadata: nothing tied a scores file to a model version."""
    from libre_lib import __version__
    from libre_lib.ops.registry import ModelRegistry

    X, model, _ = credit
    X.to_parquet(tmp_path / "data.parquet")
    registry = ModelRegistry(tmp_path / "store")
    earlier = json.loads(model.to_json())
    earlier["library_version"] = "0.0.9"  # registered by an earlier release
    version = registry.register(
        "credit",
        json.dumps(earlier, indent=1),
        spec={"name": "credit"},
        metrics={"f1": 0.8},
        validation={"success": True},
        data_fingerprint="d" * 64,
        spec_hash="s" * 64,
        run_id="run-1",
    )
    # the file's bytes, not this release's JSON of the model (it named no version then)
    score_files(version.model_path, tmp_path / "data.parquet", tmp_path / "out.parquet")
    written = pq.read_schema(tmp_path / "out.parquet").metadata
    meta = {k.decode(): v.decode() for k, v in written.items()}
    assert meta["libre.model_sha256"] == version.model_sha256
    assert version.version.endswith(meta["libre.model_sha256"][:8])
    assert meta["libre.version"] == __version__ and meta["libre.scored_at"].endswith("+00:00")


def test_the_contract_saved_with_a_model_is_found(credit, tmp_path):
    _, model, contract = credit
    path = tmp_path / "model.json"
    path.write_text(model.to_json())
    assert find_contract(path) is None
    contract.save(tmp_path / "contract.json")
    assert find_contract(path) == contract


@pytest.mark.parametrize("batch_rows", [0, -5, 2.5, True])
def test_batch_rows_must_be_a_positive_whole_number(credit, tmp_path, batch_rows):
    X, model, _ = credit
    X.to_parquet(tmp_path / "x.parquet")
    with pytest.raises(LibreError, match="batch_rows"):
        score_files(model, tmp_path / "x.parquet", tmp_path / "o.parquet", batch_rows=batch_rows)


@pytest.mark.parametrize("dtype", [object, "str", "category"])
def test_rules_on_distinct_values_equal_the_model_on_every_row(credit, dtype):
    """Scoring evaluates categorical conditions once per distinct value: same as the model."""
    from libre_lib.ops.scoring import _fired

    X, model, _ = credit
    rng = np.random.default_rng(3)
    frame = X.sample(3000, replace=True, random_state=1).reset_index(drop=True)
    for column in ("a4", "a6", "a7", "a9", "a10"):
        values = frame[column].astype(object)
        values[rng.random(len(frame)) < 0.1] = None
        values[rng.random(len(frame)) < 0.05] = "unseen"
        frame[column] = values if dtype is object else values.astype(dtype)
    frame.loc[rng.random(len(frame)) < 0.1, "a2"] = np.nan
    np.testing.assert_array_equal(_fired(model, frame), model.fired_rules(frame))


def _with_noise(X: pd.DataFrame, n_rows: int, seed: int = 0) -> pd.DataFrame:
    """``n_rows`` rows of X (sampled with replacement, some drift) plus 8 columns of random
    numbers the model does not read (incompressible, so the files are not tiny)."""
    rng = np.random.default_rng(seed)
    frame = X.sample(n_rows, replace=True, random_state=seed).reset_index(drop=True)
    frame.loc[rng.random(n_rows) < 0.05, "a2"] = np.nan
    frame.loc[rng.random(n_rows) < 0.01, "a4"] = "unseen"
    for k in range(8):
        frame[f"noise{k}"] = rng.random(n_rows)
    return frame


def _write(frame: pd.DataFrame, path, monkeypatch) -> None:
    """Parquet with row groups of 1,000 rows, or CSV read in blocks of 64 KiB."""
    if path.suffix == ".parquet":
        frame.to_parquet(path, row_group_size=1_000)
    else:
        frame.to_csv(path, index=False)
        monkeypatch.setattr(scoring, "_CSV_STREAM_BLOCK_BYTES", 1 << 16)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_one_file_streamed_in_batches_equals_the_whole_frame_scored_at_once(
    credit, tmp_path, monkeypatch, suffix
):
    X, model, contract = credit
    frame = _with_noise(X, 5_000)
    path = tmp_path / f"data{suffix}"
    _write(frame, path, monkeypatch)
    done = []
    summary = score_files(
        model,
        path,
        tmp_path / "out.parquet",
        batch_rows=64,
        contract=contract,
        progress=lambda rows, total: done.append(rows),
    )
    # the batch size is honoured: full batches of 64 rows, then the rest, whatever the row
    # groups (1,000 rows) or CSV blocks (64 KiB) the file is read in
    assert summary.batches == len(done) == -(-len(frame) // 64)
    assert np.diff([0, *done]).tolist() == [64] * (len(frame) // 64) + [len(frame) % 64]
    streamed = pq.read_table(tmp_path / "out.parquet")
    whole, report = score_frame(model, frame, contract)
    expected = pa.Table.from_pandas(whole, preserve_index=False).cast(streamed.schema)
    assert streamed.equals(expected)
    assert summary.report.to_dict() == report.to_dict()


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_memory_held_while_scoring_does_not_grow_with_the_file(
    credit, tmp_path, monkeypatch, suffix
):
    """Regression: scoring a 10x larger file took twice the peak memory. Files were read with
    a ``pyarrow.dataset`` scan, which reads ahead of its consumer (for CSV, up to the whole
    file), and its Parquet reader pre-buffered row groups and kept every one it had read until
    the file ended. Arrow's memory while scoring must not depend on the file's size."""
    X, model, contract = credit
    peaks = {}
    for n_rows in (10_000, 40_000):
        path = tmp_path / f"data-{n_rows}{suffix}"
        _write(_with_noise(X, n_rows), path, monkeypatch)
        allocated = []
        score_files(
            model,
            path,
            tmp_path / "out.parquet",
            batch_rows=500,
            contract=contract,
            progress=lambda rows, total, seen=allocated: seen.append(pa.total_allocated_bytes()),
        )
        peaks[n_rows] = max(allocated)
    assert peaks[40_000] < 1.5 * peaks[10_000], peaks


def test_csv_types_are_guessed_once_from_the_sample_then_kept(credit, tmp_path, monkeypatch):
    """The CSV stream reads smaller blocks than the sample the schema is guessed from, so it
    must use the guessed types, not guess again from its own first block."""
    X, model, contract = credit
    monkeypatch.setattr(scoring, "_CSV_BLOCK_BYTES", 1 << 14)  # the sample: about 300 rows
    monkeypatch.setattr(scoring, "_CSV_STREAM_BLOCK_BYTES", 1 << 10)  # about 20 rows
    frame = X.sample(3_000, replace=True, random_state=0).reset_index(drop=True)
    frame["ref"] = np.arange(len(frame)).astype(object)
    frame.loc[100, "ref"] = 2.5  # in the sample, past the stream's first block
    frame.to_csv(tmp_path / "data.csv", index=False)
    score_files(model, tmp_path / "data.csv", tmp_path / "out.parquet", contract=contract)
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.field("ref").type == pa.float64() and out["ref"][100].as_py() == 2.5
    frame.loc[2_500, "ref"] = "x12"  # past the sample
    frame.to_csv(tmp_path / "data.csv", index=False)
    with pytest.raises(DataError, match=r"column 'ref' changes type at line 2502 .*'x12'"):
        score_files(model, tmp_path / "data.csv", tmp_path / "out.parquet", contract=contract)
    frame.to_csv(tmp_path / "data.csv", index=False, sep=";")  # the column named in its dialect
    with pytest.raises(DataError, match=r"column 'ref' changes type at line 2502 .*'x12'"):
        score_files(model, tmp_path / "data.csv", tmp_path / "out.parquet", contract=contract)


def test_an_id_with_leading_zeros_and_dates_not_read_by_the_model_are_copied_as_written(
    credit, tmp_path
):
    """Columns the model does not read: an id written with leading zeros and a date stay text
    as the CSV writes them (a guessed integer or date would change them); whole numbers
    without leading zeros stay numbers; where a Parquet file among the inputs types such a
    column differently, every file's values become text."""
    X, model, contract = credit
    frame = X.iloc[:400].reset_index(drop=True)
    frame["account"] = [f"{i:05d}" for i in range(len(frame))]
    frame["signup"] = pd.Timestamp("2024-01-05") + pd.to_timedelta(frame.index % 90, "D")
    frame["visits"] = np.arange(len(frame)) * 3
    frame.to_csv(tmp_path / "data.csv", index=False)
    written = pd.read_csv(tmp_path / "data.csv", dtype=str)
    score_files(model, tmp_path / "data.csv", tmp_path / "out.parquet", contract=contract)
    out = pq.read_table(tmp_path / "out.parquet")
    for column in ("account", "signup"):
        assert out.schema.field(column).type == pa.string()
        assert out[column].to_pylist() == written[column].tolist()
    assert out["account"][7].as_py() == "00007"
    assert pa.types.is_integer(out.schema.field("visits").type)
    assert out["visits"].to_pylist() == frame["visits"].tolist()
    assert out["prediction"].to_pylist() == model.predict(X.iloc[:400]).tolist()
    # a CSV and a Parquet file that stores the date as a date: text for both
    (tmp_path / "in").mkdir()
    frame.iloc[:200].to_csv(tmp_path / "in" / "a.csv", index=False)
    rest = frame.iloc[200:].assign(signup=lambda f: f["signup"].dt.date)
    rest.to_parquet(tmp_path / "in" / "b.parquet")
    score_files(model, tmp_path / "in", tmp_path / "both.parquet", contract=contract)
    both = pq.read_table(tmp_path / "both.parquet")
    assert both.schema.field("signup").type == pa.string()
    assert sorted(both["signup"].to_pylist()) == sorted(written["signup"].tolist())
    assert sorted(both["account"].to_pylist()) == sorted(written["account"].tolist())


def test_an_output_named_like_another_format_is_refused_before_anything_is_written(
    credit, tmp_path
):
    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    output = tmp_path / "scored.csv"
    with pytest.raises(DataError, match=r"scoring writes Parquet, so name it scored\.parquet"):
        score_files(model, tmp_path / "in", output, contract=contract)
    assert not output.exists()
    # a path under a file (it said "[Errno 17] File exists")
    (tmp_path / "notes.csv").write_text("kept")
    with pytest.raises(DataError, match=r"'.*notes\.csv' is a file, not a folder"):
        score_files(model, tmp_path / "in", tmp_path / "notes.csv" / "out.parquet")
    assert (tmp_path / "notes.csv").read_text() == "kept"


def test_an_earlier_output_among_the_inputs_is_named(credit, tmp_path):
    """Scoring into the input folder worked; the next run failed with "The input already has
    column(s) ['prediction', ...]", naming no file."""
    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    with warnings.catch_warnings(record=True) as said:  # a name with a leading '_' is not read
        warnings.simplefilter("always")
        score_files(model, tmp_path / "in", tmp_path / "in" / "_out.parquet", contract=contract)
    assert not any("inside the input folder" in str(w.message) for w in said)
    with pytest.warns(LibreWarning, match=r"out\.parquet' is inside the input folder"):
        score_files(model, tmp_path / "in", tmp_path / "in" / "out.parquet", contract=contract)
    with pytest.raises(DataError, match=r"in/out\.parquet already has column\(s\) \['predic"):
        score_files(model, tmp_path / "in", tmp_path / "again.parquet", contract=contract)
    assert not (tmp_path / "again.parquet").exists()


def test_integer_columns_of_parquet_inputs_stay_integers(credit, tmp_path):
    """a11 and a15 are integer columns the model reads: Parquet inputs keep them integers (int32
    and int64 files give int64), exactly; a CSV among the inputs makes them float64."""
    X, model, contract = credit
    (tmp_path / "in").mkdir()
    big = X.iloc[:300].assign(a15=X["a15"].iloc[:300] + 2**60)  # no float64 holds these
    big.to_parquet(tmp_path / "in" / "a.parquet")
    X.iloc[300:].astype({"a11": "int32", "a15": "int32"}).to_parquet(tmp_path / "in" / "b.parquet")
    score_files(model, tmp_path / "in", tmp_path / "out.parquet", contract=contract)
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.field("a11").type == pa.int64()
    assert out.schema.field("a15").type == pa.int64()
    assert out.schema.field("a2").type == pa.float64()
    assert sorted(out["a15"].to_pylist()[:300]) == sorted((big["a15"]).tolist())
    (tmp_path / "in" / "a.parquet").unlink()
    X.iloc[:10].to_csv(tmp_path / "in" / "c.csv", index=False)
    score_files(model, tmp_path / "in", tmp_path / "out.parquet", contract=contract)
    assert pq.read_table(tmp_path / "out.parquet").schema.field("a15").type == pa.float64()


def test_fail_on_drift_refuses_drift_in_a_tested_column_and_writes_nothing(credit, tmp_path):
    """An upstream case change ('t' -> 'T') in some rows of a tested column: those rows are
    scored with a drift warning; fail_on_drift stops there. In every row it is an error, as an
    empty column is (it was scored negative throughout, with exit 0 and a warning)."""
    X, model, contract = credit
    tested = sorted({c.feature for rule in model.rules_ for c in rule if c.kind == "categorical"})
    column = tested[0]
    recoded = X.assign(**{column: X[column].str.upper()})
    recoded.to_parquet(tmp_path / "all.parquet")
    output = tmp_path / "out.parquet"
    with pytest.raises(ContractViolation, match=rf"column '{column}': none of its .* is a categ"):
        score_files(model, tmp_path / "all.parquet", output, contract=contract)
    assert not output.exists()
    drifted = X.assign(**{column: X[column].where(X.index % 2 == 0, X[column].str.upper())})
    drifted.to_parquet(tmp_path / "in.parquet")
    summary = score_files(model, tmp_path / "in.parquet", output, contract=contract)
    assert any(column in w.message for w in summary.warnings) and output.exists()
    output.unlink()
    with pytest.raises(
        ContractViolation, match=rf"(?s)Drift in columns the rules test.*'{column}'"
    ):
        score_files(model, tmp_path / "in.parquet", output, contract=contract, fail_on_drift=True)
    assert not output.exists() and not list(tmp_path.glob(".*out*"))
    X.to_parquet(tmp_path / "same.parquet")  # no drift: scored as usual
    score_files(model, tmp_path / "same.parquet", output, contract=contract, fail_on_drift=True)
    assert output.exists()


def test_fail_on_drift_refuses_values_beyond_the_range_only_beyond_chance(tmp_path):
    """The champion's own training file failed --fail-on-drift: one holdout value in 768 lay
    beyond the training rows' range, as rows of the same data do by chance."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    y = (X["a"] > 0.5).astype(int)
    model = LibreClassifier(random_state=0, max_rules=1).fit(X[:200], y[:200])
    assert "a" in {c.feature for rule in model.rules_ for c in rule}
    contract = DataContract.from_model(model, X[:200])
    assert contract.n_training_rows == 200
    same = X[1000:]  # the same distribution: values beyond the 200 rows' extremes, by chance
    report = contract.check(same)
    assert 5 < report.observations["a"].n_below + report.observations["a"].n_above < 100
    same.to_parquet(tmp_path / "same.parquet")
    output = tmp_path / "out.parquet"
    score_files(model, tmp_path / "same.parquet", output, contract=contract, fail_on_drift=True)
    assert output.exists()
    output.unlink()
    shifted = same.assign(a=np.where(np.arange(2000) % 10 == 0, same["a"] + 5, same["a"]))
    shifted.to_parquet(tmp_path / "shifted.parquet")  # 10 % of the rows far above the range
    shifted_in = tmp_path / "shifted.parquet"
    with pytest.raises(ContractViolation, match=r"column 'a': \d+ values .* outside the train"):
        score_files(model, shifted_in, output, contract=contract, fail_on_drift=True)
    assert not output.exists()
    unknown = replace(contract, n_training_rows=None)  # derived from the model alone: any value
    with pytest.raises(ContractViolation, match="outside the training range"):
        score_files(model, tmp_path / "same.parquet", output, contract=unknown, fail_on_drift=True)


@pytest.mark.parametrize("marked", [False, True], ids=["plain", "with-markers"])
def test_a_float32_parquet_input_scores_as_predict_does(tmp_path, marked):
    """A float32 Parquet file of pima scored 2 rows otherwise than predict: its bmi 27.9 was
    cast to 27.899999618530273, below the rule's cut point 27.9 (and written so)."""
    from libre_lib.datasets import load_dataset

    X, y, _ = load_dataset("pima")
    model = LibreClassifier(random_state=0).fit(X, y)
    contract = DataContract.from_model(model, X)
    if marked:  # a column's own missing-value markers: read as text, then cast
        contract = replace(contract, column_markers={"bmi": ("0",)})
    narrow = X.astype({c: "float32" for c in X.select_dtypes("float").columns})
    narrow.to_parquet(tmp_path / "in.parquet")
    output = tmp_path / "out.parquet"
    score_files(model, tmp_path / "in.parquet", output, contract=contract)
    scored = pd.read_parquet(output)
    expected = model.predict(X.assign(bmi=X["bmi"].where(X["bmi"] != 0)) if marked else X)
    np.testing.assert_array_equal(scored["prediction"].to_numpy(), expected.astype(str))
    assert scored["bmi"].dropna().astype(str).str.len().max() <= 5  # 27.9, not 27.8999996


def test_a_narrow_column_cast_for_the_output_keeps_nan_and_null_apart():
    """Written through pandas, a float32 NaN became a null (a float64 NaN stays NaN)."""
    from libre_lib.ops.scoring import cast_column

    column = pa.chunked_array(
        [pa.array([1.5, None, float("nan"), 27.9], pa.float32()), pa.array([2.2], pa.float32())]
    )
    cast = cast_column(column, pa.float64())
    assert cast.type == pa.float64() and cast.null_count == 1
    assert cast.to_pylist()[0::3] == [1.5, 27.9] and math.isnan(cast.to_pylist()[2])
    assert cast.to_pylist()[4] == 2.2  # the decimal, not 2.200000047683716


@pytest.mark.parametrize("marked", [False, True], ids=["plain", "with-markers"])
def test_float32_inputs_score_as_predict_on_them_with_long_cut_points(tmp_path, marked):
    """A model fitted on float64 data (cut points such as 0.17749212221229224) scored a
    float32 file through its decimals (0.17749213 >= the cut) while predict compared in
    float32: rows near a cut point differed."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    model = LibreClassifier(random_state=0, max_rules=2).fit(X, (X["a"] > 0.2).astype(int))
    contract = DataContract.from_model(model, X)
    if marked:
        contract = replace(contract, column_markers={"a": ("-99",)})
    cuts = [i.low for rule in model.rules_ for c in rule for i in c.intervals if c.feature == "a"]
    finite = [np.float32(c) for c in cuts if np.isfinite(c)]
    assert finite  # values on and beside each cut point, in float32
    near = np.array([np.nextafter(c, c + s) for c in finite for s in (-1, 1)] + finite)
    narrow = pd.concat([X, pd.DataFrame({"a": near, "b": 0.0})]).astype("float32")
    narrow.to_parquet(tmp_path / "in.parquet")
    score_files(model, tmp_path / "in.parquet", tmp_path / "out.parquet", contract=contract)
    scored = pd.read_parquet(tmp_path / "out.parquet")["prediction"].to_numpy()
    np.testing.assert_array_equal(scored.astype(str), model.predict(narrow).astype(str))


def test_long_explanations_are_written_in_slices_with_the_same_table(credit, tmp_path, monkeypatch):
    # Rows that fire many long rules make explanations of kilobytes: a batch's explanation
    # column is built and written a slice at a time (bounded memory; one Arrow string array
    # beyond 2 GiB is refused), and the table read back is the same.
    X, model, contract = credit
    frame = _with_noise(X, 3_000)
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    whole = score_files(model, path, tmp_path / "whole.parquet", contract=contract)
    explanations = pq.read_table(tmp_path / "whole.parquet", columns=["explanation"])
    n_bytes = sum(len(t.encode()) for t in explanations.column(0).to_pylist())
    assert n_bytes > 2_000
    monkeypatch.setattr(scoring, "EXPLANATION_BYTES", n_bytes // 7)
    sliced = score_files(model, path, tmp_path / "sliced.parquet", contract=contract)
    a = pq.ParquetFile(tmp_path / "whole.parquet")
    b = pq.ParquetFile(tmp_path / "sliced.parquet")
    assert a.metadata.num_row_groups == 1
    assert 7 <= b.metadata.num_row_groups <= 9
    assert b.read().equals(a.read())
    same = {"seconds": 0, "rows_per_second": 0, "output": ""}
    assert sliced.to_dict() | same == whole.to_dict() | same


def test_texts_the_training_read_as_missing_are_missing_when_scoring(credit, tmp_path):
    """A pipeline trained with data.read_options.na_values [" "] (blanks written as a space)
    could not score the same file: the space broke the contract of a numeric column."""
    from dataclasses import replace

    X, model, contract = credit
    frame = X.iloc[:40].copy()
    frame["a14"] = frame["a14"].map(lambda v: " " if pd.isna(v) else f"{v:g}").astype(object)
    frame.loc[frame.index[::7], "a14"] = " "
    (tmp_path / "in").mkdir()
    frame.to_csv(tmp_path / "in" / "new.csv", index=False)
    output = tmp_path / "scored.parquet"
    with pytest.raises(ContractViolation, match="column 'a14': expected numbers"):
        score_files(model, tmp_path / "in", output, contract=contract)
    marked = replace(contract, missing_markers=(" ",))
    score_files(model, tmp_path / "in", output, contract=marked)
    scored = pq.read_table(output).to_pandas()
    assert scored["a14"].isna().sum() == (frame["a14"] == " ").sum()
    expected = X.iloc[:40].assign(a14=frame["a14"].replace(" ", np.nan).astype(float))
    assert scored["prediction"].tolist() == list(model.predict(expected))


def test_a_csv_written_with_semicolons_and_decimal_commas_scores_as_the_plain_one(credit, tmp_path):
    """Spreadsheets in many locales write CSV with ";" and decimal commas; the reader took the
    whole header as one column and failed."""
    X, model, contract = credit
    frame = X.iloc[:120]
    (tmp_path / "plain").mkdir()
    (tmp_path / "euro").mkdir()
    frame.to_csv(tmp_path / "plain" / "new.csv", index=False)
    frame.to_csv(tmp_path / "euro" / "new.csv", index=False, sep=";", decimal=",")
    frame.iloc[:0].to_csv(tmp_path / "euro" / "empty.csv", index=False, sep=";")  # a header only
    assert "," in (tmp_path / "euro" / "new.csv").read_text().splitlines()[1]
    score_files(model, tmp_path / "plain", tmp_path / "plain.parquet", contract=contract)
    score_files(model, tmp_path / "euro", tmp_path / "euro.parquet", contract=contract)
    plain = pq.read_table(tmp_path / "plain.parquet")
    euro = pq.read_table(tmp_path / "euro.parquet")
    assert euro.equals(plain)
    assert euro.column("prediction").to_pylist() == list(model.predict(frame))
    (tmp_path / "tabs").mkdir()  # a .tsv file is a CSV with tabs
    frame.to_csv(tmp_path / "tabs" / "new.tsv", index=False, sep="\t")
    score_files(model, tmp_path / "tabs", tmp_path / "tabs.parquet", contract=contract)
    assert pq.read_table(tmp_path / "tabs.parquet").equals(plain)


def test_points_between_thousands_read_as_training_read_them(tmp_path):
    """Training read 12.475 as 12475 (thousands: "."); a scoring file of amounts all above
    1,000 does not show the mark in its own rows, and was read as 12.475, predicting "no"."""
    amounts = np.arange(500, 20_000, 250, dtype=float)
    X = pd.DataFrame({"amount": amounts})
    model = LibreClassifier(random_state=0).fit(X, np.where(amounts > 5000, "yes", "no"))
    contract = DataContract.from_model(model, X, thousands=".")
    assert DataContract.from_json(contract.to_json()).thousands == "."
    written = pd.DataFrame({"amount": ["7.000", "12.475", "19.000", "1.200"], "note": list("abcd")})
    written.to_csv(tmp_path / "new.csv", index=False, sep=";")
    score_files(model, tmp_path / "new.csv", tmp_path / "out.parquet", contract=contract)
    scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    assert scored["amount"].tolist() == [7000.0, 12475.0, 19000.0, 1200.0]
    assert scored["prediction"].tolist() == ["yes", "yes", "yes", "no"]
    plain = DataContract.from_model(model, X)  # without the mark: a contract as before
    assert "thousands" not in plain.to_dict() and plain.thousands is None


def test_a_csv_written_in_a_windows_encoding_scores_as_the_utf8_one(credit, tmp_path):
    """A file saved from a Western Windows spreadsheet (cp1252: "Orléans" as byte 0xe9) failed
    with "invalid UTF8"; its text now reads as written."""
    X, model, contract = credit
    frame = X.iloc[:60].assign(town=["Orléans", "Besançon", "Paris"] * 20)
    (tmp_path / "utf8").mkdir()
    (tmp_path / "windows").mkdir()
    frame.to_csv(tmp_path / "utf8" / "new.csv", index=False)
    frame.to_csv(tmp_path / "windows" / "new.csv", index=False, encoding="cp1252")
    with pytest.raises(UnicodeDecodeError):
        (tmp_path / "windows" / "new.csv").read_text(encoding="utf-8")
    score_files(model, tmp_path / "utf8", tmp_path / "utf8.parquet", contract=contract)
    score_files(model, tmp_path / "windows", tmp_path / "windows.parquet", contract=contract)
    windows = pq.read_table(tmp_path / "windows.parquet")
    assert windows.equals(pq.read_table(tmp_path / "utf8.parquet"))
    assert set(windows.column("town").to_pylist()) == {"Orléans", "Besançon", "Paris"}


def test_a_csv_with_points_between_thousands_scores_as_the_plain_one(tmp_path):
    """4.299,90 beside a decimal comma: Arrow's reader has no thousands mark, and the column
    failed as "changes type at line 16"."""
    income = [500 + 37.5 * i for i in range(200)]
    frame = pd.DataFrame({"income": income, "age": [20 + i % 50 for i in range(200)]})
    target = np.array([int(v > 2500) for v in income])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LibreClassifier(random_state=0, max_rules=2).fit(frame, target)
    assert "income" in str(model.rules_)
    written = frame.assign(
        income=[f"{v:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".") for v in income]
    )
    assert "4.212,50" in set(written["income"])
    for name, table in [("plain", frame), ("euro", written)]:
        (tmp_path / name).mkdir()
        table.to_csv(tmp_path / name / "new.csv", index=False, sep=";" if name == "euro" else ",")
        score_files(model, tmp_path / name, tmp_path / f"{name}.parquet")
    euro = pq.read_table(tmp_path / "euro.parquet")
    assert euro.equals(pq.read_table(tmp_path / "plain.parquet"))
    assert euro.column("income").to_pylist() == income
    assert euro.column("prediction").to_pylist() == list(model.predict(frame))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", r"new\.csv is empty: a CSV file to score needs a header row"),
        ("a1,a1,a2\nb,c,30\n", r"new\.csv's header names column 'a1' twice: rename one"),
    ],
    ids=["empty", "repeated-name"],
)
def test_a_csv_the_reader_refuses_is_named_with_what_to_do(credit, tmp_path, text, message):
    _X, model, contract = credit
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "new.csv").write_text(text)
    with pytest.raises(DataError, match=message):
        score_files(model, tmp_path / "in", tmp_path / "out.parquet", contract=contract)
    assert not (tmp_path / "out.parquet").exists()


def test_a_parquet_file_naming_a_column_twice_is_named_as_a_csv_is(credit, tmp_path):
    """It said "Can't unify schema with duplicate field names", without the name."""
    X, model, contract = credit
    columns = [pa.array(X[c]) for c in X.columns]
    table = pa.Table.from_arrays([*columns, columns[1]], names=[*X.columns, X.columns[1]])
    pq.write_table(table, tmp_path / "new.parquet")
    with pytest.raises(DataError, match=rf"new\.parquet names column '{X.columns[1]}' twice"):
        score_files(model, tmp_path / "new.parquet", tmp_path / "out.parquet", contract=contract)
    assert not (tmp_path / "out.parquet").exists()


def test_one_class_against_the_rest_says_which_class_its_true_predictions_are(tmp_path):
    """With three classes the predictions are True / False: the summary names the class the
    rules describe beside them ("predicted True (hi)")."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = np.where(X["a"] > 0.5, "hi", np.where(X["a"] < -0.5, "lo", "mid"))
    model = LibreClassifier(positive_class="hi", random_state=0, n_estimators=5).fit(X, y)
    X.to_csv(tmp_path / "in.csv", index=False)
    summary = score_files(model, tmp_path / "in.csv", tmp_path / "out.parquet").to_dict()
    assert summary["positive_class"] is True and summary["described_class"] == "hi"
    assert scoring.predicted_text(summary) == "predicted True (hi)"
    escaped = {**summary, "described_class": "hi\x1b[7m"}  # a terminal escape
    assert scoring.predicted_text(escaped) == 'predicted True ("hi\\u001b[7m")'
    assert "**predicted True (hi):**" in render_scoring_report(summary)
    binary = {**summary, "positive_class": "yes", "described_class": None}
    assert scoring.predicted_text(binary) == "predicted yes"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_columns_own_missing_markers_apply_to_that_column_only(credit, tmp_path, suffix):
    """A dict ``na_values`` ({"a2": [0, "?"]}: a 0 age means unknown) was flattened into
    markers for every column, so scoring read a14's real zeros as missing too."""
    X, model, contract = credit
    marked = replace(contract, column_markers={"a2": ("0", "?")})
    frame = X.iloc[:80].copy()
    frame.loc[frame.index[::5], "a2"] = 0.0
    assert (frame["a14"] == 0).sum() > 5  # real zeros, in another column
    path = tmp_path / f"new{suffix}"
    if suffix == ".csv":
        written = frame.astype({"a2": object})
        written.loc[written.index[1::5], "a2"] = "?"
        written.to_csv(path, index=False)
        unknown = (written["a2"] == 0) | (written["a2"] == "?")
    else:
        frame.to_parquet(path)
        unknown = frame["a2"] == 0
    score_files(model, path, tmp_path / "out.parquet", contract=marked)
    scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    assert scored["a2"].isna().tolist() == (unknown | frame["a2"].isna()).tolist()
    assert (scored["a14"] == 0).sum() == (frame["a14"] == 0).sum()
    expected = frame.assign(a2=frame["a2"].mask(unknown.to_numpy()))
    assert scored["prediction"].tolist() == list(model.predict(expected))


def test_a_point_in_a_file_of_decimal_commas_is_named_as_such(credit, tmp_path):
    """A ';' file with 33,6 in one column and 0.627 in another: the error quoted 0.627 as "not
    a number" without saying why."""
    X, model, contract = credit
    written = X.iloc[:40].astype({"a3": str})  # points in a3, commas in the other columns
    written.to_csv(tmp_path / "mixed.csv", index=False, sep=";", decimal=",")
    assert "," in (tmp_path / "mixed.csv").read_text().splitlines()[1]
    with pytest.raises(ContractViolation, match=r"column 'a3': expected numbers, found '\d+\.\d+'"
                       r" \(line \d+\): this file writes decimals with a comma"):  # fmt: skip
        score_files(model, tmp_path / "mixed.csv", tmp_path / "out.parquet", contract=contract)


def test_padded_numbers_in_a_column_with_its_own_markers_score(credit, tmp_path):
    """pandas reads " 30.83 " as a number (and " 0 " is no "0" marker); the marked column's
    Arrow cast refused the padded text, so a file written like the training data failed."""
    X, model, contract = credit
    marked = replace(contract, column_markers={"a2": ("0", "?")})
    frame = X.iloc[:60].copy()
    written = frame.astype({"a2": object})
    written["a2"] = [f" {v} " if v == v else "?" for v in frame["a2"]]
    written.loc[written.index[::7], "a2"] = "0"
    written.to_csv(tmp_path / "new.csv", index=False)
    score_files(model, tmp_path / "new.csv", tmp_path / "out.parquet", contract=marked)
    scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    expected = pd.read_csv(tmp_path / "new.csv", na_values={"a2": ["0", "?"]})["a2"]
    np.testing.assert_array_equal(scored["a2"].to_numpy(), expected.to_numpy())


def test_a_parquet_file_of_the_training_datas_own_types_scores(tmp_path):
    """The pipeline reads categorical columns as text (True → "True", 3 → "3"): a Parquet
    file that stores them as booleans, integers or pandas categories, as the training file
    did, was refused ("expected text, found booleans")."""
    rng = np.random.default_rng(0)
    n = 300
    stored = pd.DataFrame(
        {
            "flag": pd.array(rng.random(n) < 0.5, dtype="boolean"),
            "grade": rng.integers(1, 4, n),
            "city": pd.Series(rng.choice(["a", "b", "c"], n), dtype="category"),
            "age": rng.integers(18, 80, n).astype(float),
        }
    )
    stored.loc[::9, "flag"] = pd.NA
    target = ((stored["flag"].fillna(False)) & (stored["grade"] > 1)).astype(int).to_numpy()
    read = read_types(stored.copy(), ["flag", "grade", "city"])  # as the pipeline's load
    assert set(read["flag"].dropna()) == {"True", "False"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LibreClassifier(random_state=0, max_rules=2).fit(read, target)
    assert {"flag", "grade"} <= {f for rule in model.rules_ for f in rule.features}
    contract = DataContract.from_model(model, read)
    (tmp_path / "in").mkdir()
    stored.to_parquet(tmp_path / "in" / "new.parquet")
    check_inputs(model, tmp_path / "in", contract)
    summary = score_files(model, tmp_path / "in", tmp_path / "out.parquet", contract=contract)
    assert summary.report.ok and not summary.report.warnings
    scored = pq.read_table(tmp_path / "out.parquet")
    assert scored.column("prediction").to_pylist() == list(model.predict(read))
    assert scored.column("flag").to_pylist() == read["flag"].tolist()
    assert scored.column("grade").to_pylist() == read["grade"].tolist()


def test_the_report_of_inputs_without_rows_says_so_instead_of_no_drift(credit, tmp_path):
    X, model, contract = credit
    X.iloc[:0].to_csv(tmp_path / "header.csv", index=False)
    summary = score_files(
        model, tmp_path / "header.csv", tmp_path / "out.parquet", contract=contract
    )
    markdown = render_scoring_report(summary.to_dict())
    assert summary.rows == 0 and "The inputs hold no rows" in markdown
    assert "No drift" not in markdown


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_numeric_marker_matches_every_spelling_of_its_number(credit, tmp_path, suffix):
    """Only the literal "0" was missing: "-0.0", "0.00", "00" and "0e0" (and a Parquet -0.0)
    were scored as the number 0, where the training's pandas read them as missing."""
    X, model, contract = credit
    marked = replace(contract, column_markers={"a2": ("0",)})
    frame = X.iloc[:60].copy()
    spellings = ["-0.0", "0.00", "00", "0e0", "0", "-0"]
    rows = frame.index[: len(spellings)]
    path = tmp_path / f"new{suffix}"
    if suffix == ".csv":
        written = frame.astype({"a2": object})
        written.loc[rows, "a2"] = spellings
        written.to_csv(path, index=False)
        expected = pd.read_csv(path, na_values={"a2": ["0"]})["a2"]
    else:
        frame.loc[rows, "a2"] = [-0.0, 0.0, 0.0, 0.0, 0.0, -0.0]
        frame.to_parquet(path)
        expected = frame["a2"].mask(frame["a2"] == 0)
    assert expected.iloc[: len(spellings)].isna().all()
    score_files(model, path, tmp_path / "out.parquet", contract=marked)
    scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    np.testing.assert_array_equal(scored["a2"].to_numpy(), expected.to_numpy())
    assert scored["prediction"].tolist() == list(model.predict(frame.assign(a2=expected)))


def test_score_frame_reads_the_contract_s_markers_as_missing(credit, tmp_path):
    """score_frame never applied the contract's markers (pima's 0 = not measured), and a model
    path did not find the contract saved beside it: 93 of pima's 768 predictions differed from
    libre score's."""
    X, model, contract = credit
    marked = replace(contract, column_markers={"a2": ("0",)}, missing_markers=("?",))
    frame = X.iloc[280:360].copy()  # rows where a missing a2 (rule 2's "∪ missing") matters
    frame.loc[frame.index[::4], "a2"] = [0.0, -0.0, 0.0, 0.0, 0.0] * 4
    unknown = frame["a2"] == 0
    expected = list(model.predict(frame.assign(a2=frame["a2"].mask(unknown))))
    assert expected != list(model.predict(frame))  # the markers matter here

    scored, _ = score_frame(model, frame, contract=marked)
    assert scored["prediction"].tolist() == expected
    assert scored["a2"].equals(frame["a2"])  # the copy keeps the values as given
    texts = frame.astype({"a2": object})
    texts.loc[texts.index[1::4], "a2"] = "?"  # a text marker in a column of numbers
    scored, report = score_frame(model, texts, contract=marked)
    assert not report.errors
    either = unknown | frame.index.isin(texts.index[1::4])
    assert scored["prediction"].tolist() == list(
        model.predict(frame.assign(a2=frame["a2"].mask(either)))
    )

    (tmp_path / "model.json").write_text(model.to_json())
    (tmp_path / "contract.json").write_text(marked.to_json())
    scored, _ = score_frame(tmp_path / "model.json", frame)  # finds the contract beside it
    assert scored["prediction"].tolist() == expected
    frame.to_parquet(tmp_path / "in.parquet")
    score_files(tmp_path / "model.json", tmp_path / "in.parquet", tmp_path / "out.parquet")
    assert pq.read_table(tmp_path / "out.parquet").column("prediction").to_pylist() == expected


def test_a_number_written_for_people_in_a_marked_column_is_named_with_the_fix(credit, tmp_path):
    """A column with missing-value markers of its own gave pyarrow's text ("Failed to parse
    string: '30,4' as a scalar of type double"), naming the markers and not the fix."""
    X, model, contract = credit
    marked = replace(contract, column_markers={"a2": ("0",)})
    for value, fix in (("30,4", "decimal comma"), ("1,120", "thousands separator")):
        written = X.iloc[:30].astype({"a2": object})
        written.loc[written.index[3], "a2"] = value
        written.to_csv(tmp_path / "in.csv", index=False)
        with pytest.raises(ContractViolation, match=rf"column 'a2': expected numbers, found "
                           rf"'{value}': a number with a {fix}"):  # fmt: skip
            score_files(model, tmp_path / "in.csv", tmp_path / "out.parquet", contract=marked)
        assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize(
    ("suffix", "dtype"),
    [(".csv", object), (".parquet", object), (".parquet", "str"), (".parquet", "category")],
)
def test_an_empty_text_in_a_category_column_is_missing_in_csv_and_parquet_alike(
    credit, tmp_path, suffix, dtype
):
    """A Parquet file's "" counted as an unseen category where the same rows in CSV were
    missing (pandas 3 writes its text columns as large_string, its categories as
    dictionaries)."""
    X, model, contract = credit
    assert _rules_testing(model, "a6")
    frame = X.iloc[400:470].copy()  # rows where a rule reads a6's missing bin
    frame.loc[frame.index[::2], "a6"] = ""
    frame["a6"] = frame["a6"].astype(dtype)
    path = tmp_path / f"in{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    summary = score_files(model, path, tmp_path / "out.parquet", contract=contract)
    problems = {w["problem"] for w in summary.to_dict()["warnings"] if w["column"] == "a6"}
    assert "unseen_category" not in problems
    scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    blank = (frame["a6"].astype(object) == "").to_numpy()
    expected = frame.assign(a6=frame["a6"].astype(object).mask(blank))
    assert list(model.predict(expected)) != list(model.predict(frame.astype({"a6": object})))
    assert scored["prediction"].tolist() == list(model.predict(expected))
    framed, report = score_frame(model, frame, contract)
    assert not [w for w in report.warnings if w.problem == "unseen_category"]
    assert framed["prediction"].tolist() == list(model.predict(expected))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", "frame"])
def test_the_training_files_own_markers_match_every_spelling_in_every_input(
    credit, tmp_path, suffix
):
    """A spec-wide marker (read_options.na_values: [-1]) matched only the text "-1" in CSV
    and nothing in Parquet, while score_frame matched -1.0 too: the same rows, other
    predictions."""
    X, model, contract = credit
    marked = replace(contract, missing_markers=("-1",))
    frame = X.iloc[280:360].copy()
    frame.loc[frame.index[::4], "a2"] = -1.0
    unknown = (frame["a2"] == -1).to_numpy()
    expected = list(model.predict(frame.assign(a2=frame["a2"].mask(unknown))))
    assert expected != list(model.predict(frame))
    if suffix == "frame":
        scored, _ = score_frame(model, frame, contract=marked)
    else:
        path = tmp_path / f"in{suffix}"
        frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
        assert suffix == ".parquet" or "-1.0" in path.read_text()
        score_files(model, path, tmp_path / "out.parquet", contract=marked)
        scored = pq.read_table(tmp_path / "out.parquet").to_pandas()
    assert scored["prediction"].tolist() == expected


def test_score_frame_warns_of_drift_as_predict_does(credit):
    """Rows held a value unseen in training in the one column the rules test: predict
    warned, score_frame said nothing (the drift sat in its returned report only)."""
    X, model, contract = credit
    frame = X.iloc[:20].copy()
    frame.loc[frame.index[:5], "a9"] = "never-seen"  # in every row it is an error
    said = r"score_frame: 1 drift warning in columns the rules test, e.g. column 'a9'"
    with pytest.warns(LibreWarning, match=said):
        _, report = score_frame(model, frame, contract)
    assert len(report.warnings) == 1
    untested = next(c.name for c in contract.columns if not c.in_rules and c.kind != "numeric")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)  # drift where no rule reads: the report's
        _, report = score_frame(model, X.iloc[:20].assign(**{untested: "never-seen"}), contract)
    assert report.warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        score_frame(model, X.iloc[:20], contract)  # no drift, no warning


def test_an_empty_tested_column_is_judged_on_the_whole_file_whatever_the_batches(credit, tmp_path):
    """The same file scored with batches of 200 rows and failed with 180; a blank file passed
    with batches of 10 (each under the 20 rows the check needs)."""
    X, model, contract = credit
    tested = next(c.name for c in contract.columns if c.in_rules and c.missing_rate < 0.5)
    blank = X.iloc[:60].copy()
    blank[tested] = np.nan if contract[tested].kind == "numeric" else None
    blank.to_parquet(tmp_path / "blank.parquet")
    for batch_rows in (10, 25, 100):
        with pytest.raises(ContractViolation, match=rf"column {tested!r}: missing in every one"):
            score_files(model, tmp_path / "blank.parquet", tmp_path / "o.parquet",
                        contract=contract, batch_rows=batch_rows)  # fmt: skip
        assert not (tmp_path / "o.parquet").exists()
    partly = X.iloc[:60].copy()
    partly.loc[partly.index[:40], tested] = blank[tested].iloc[:40]  # 20 rows keep a value
    partly.to_parquet(tmp_path / "partly.parquet")
    for batch_rows in (10, 25, 100):
        score_files(model, tmp_path / "partly.parquet", tmp_path / "o.parquet",
                    contract=contract, batch_rows=batch_rows)  # fmt: skip


def test_score_frame_reads_a_frame_as_predict_and_libre_score_do():
    """score_frame failed with a raw KeyError on columns named by numbers or tuples, which fit
    and predict take; and refused booleans and integers in columns the pipeline's model reads
    as text categories ("expected text ..., found booleans"), which `libre score` converts."""
    rng = np.random.default_rng(0)
    n = 600
    flag, code = rng.random(n) > 0.5, rng.choice([101, 202, 303], n)
    text = pd.DataFrame(
        {"a": rng.uniform(size=n), "flag": flag.astype(str), "code": code.astype(str)}
    )
    y = ((text.a > 0.5) & flag | (code == 202)).astype(int)
    model = LibreClassifier(random_state=0, n_estimators=5).fit(text, y)
    assert {"flag", "code"} <= {c.feature for r in model.rules_ for c in r}
    typed = pd.DataFrame(
        {"a": text.a, "flag": pd.array(flag, dtype="boolean"), "code": pd.array(code, "Int64")}
    )
    typed.loc[3, "flag"] = pd.NA
    scored, report = score_frame(model, typed)
    assert not report.errors
    expected = model.predict(text.assign(flag=text.flag.mask(text.index == 3)))
    assert (scored["prediction"].to_numpy() == expected).all()
    assert scored[["a", "flag", "code"]].dtypes.equals(typed.dtypes)  # values kept as given
    for names in ([0, 1, 2], pd.MultiIndex.from_tuples([("g", "a"), ("g", "f"), ("h", "c")])):
        numbered = text.set_axis(names, axis=1)
        model = LibreClassifier(random_state=0, n_estimators=5).fit(numbered, y)
        scored, _ = score_frame(model, numbered)
        assert (scored["prediction"].to_numpy() == model.predict(numbered)).all()
        assert list(scored.columns[:3]) == list(numbered.columns)


def test_scoring_a_file_onto_itself_says_so(tmp_path):
    """`libre score m h.parquet h.parquet` said "No input file left to score (the output file
    is not an input)"."""
    data = tmp_path / "h.parquet"
    pd.DataFrame({"a": [1.0]}).to_parquet(data)
    with pytest.raises(DataError, match=r"The output is the input file .*h.parquet'"):
        list_inputs(data, exclude=[data])
    (tmp_path / "link.parquet").symlink_to(data)
    with pytest.raises(DataError, match="The output is the input file"):
        list_inputs(tmp_path / "link.parquet", exclude=[data])
    assert [f.path for f in list_inputs(data)] == [data]


def test_a_failed_write_names_the_output_and_keeps_the_old_one(credit, tmp_path, monkeypatch):
    """A full disk printed "[Errno 28] Error writing bytes to file", and a read-only folder
    named the hidden temp file, not the output."""
    import errno

    X, model, contract = credit
    _write_inputs(X, tmp_path / "in")
    output = tmp_path / "scored.parquet"
    output.write_bytes(b"the previous scores")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    with pytest.raises(LibreError, match=rf"Could not write {output}: .*No space left on device"):
        score_files(model, tmp_path / "in", output, contract=contract)
    assert output.read_bytes() == b"the previous scores"
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["scored.parquet"]


def test_scoring_with_a_model_without_rules_says_it_flags_no_row(tmp_path, capsys):
    """A champion without rules scored every row negative with "no drift" and nothing else."""
    from libre_flows.flows.cli.score import _print_summary
    from libre_lib import LibreWarning
    from libre_lib.ops.scoring import render_scoring_report

    X = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0]})
    with pytest.warns(LibreWarning, match="No rule was learned"):
        empty = LibreClassifier(random_state=0, chi2_threshold=0.0).fit(X, [0, 0, 1, 1])
    X.to_csv(tmp_path / "in.csv", index=False)
    summary = score_files(empty, tmp_path / "in.csv", tmp_path / "out.parquet").to_dict()
    assert "The model has no rules: it flags no row" in render_scoring_report(summary)
    _print_summary({**summary, "artifact": "a"}, 1.0)
    assert "the model has no rules" in " ".join(capsys.readouterr().out.split()).lower()
    ruled = {**summary, "rules": [{"index": 0, "rule": "x ≥ 2", "rows": 2}]}
    assert "no rules" not in render_scoring_report(ruled)


def test_an_explanation_of_several_rules_groups_each_rule(credit):
    """Two rules joined as "A OR B AND C" read as one conjunction of B AND C with A."""
    X, model, contract = credit
    scored, _ = score_frame(model, X, contract)
    several = scored[scored["fired_rules"].map(len) > 1]
    assert len(several)
    for rules, text in zip(several["fired_rules"], several["explanation"], strict=True):
        parts = [str(model.rules_[i]) for i in rules]
        expected = " OR ".join(f"({p})" if " AND " in p else p for p in parts)
        assert text == expected
    grouped = [t for t in several["explanation"] if "(" in t and " AND " in t]
    assert grouped  # some row fires a rule of several conditions beside another
    explained = model.explain(X)
    assert explained["explanation"].tolist() == scored["explanation"].tolist()


def test_the_scoring_report_shows_data_as_text_never_as_markup(credit, tmp_path):
    """A column named ``[l](javascript:alert(1))`` was a link in the Prefect UI, and an
    unseen category ``<img src=x onerror=...>`` an element; so were file names."""
    X, model, contract = credit
    evil = "<img src=x onerror=alert(1)> [l](javascript:alert(1))"
    drifted = X.assign(a7=X["a7"].where(X.index % 5 != 0, evil))
    drifted.to_parquet(tmp_path / "in <b>.parquet")
    summary = score_files(
        model, tmp_path / "in <b>.parquet", tmp_path / "o.parquet", contract=contract
    )
    data = summary.to_dict()
    data["warnings"][0]["column"] = evil
    data["rules"][0]["rule"] = evil
    markdown = render_scoring_report(data)
    assert "<img" not in markdown.replace("\\<img", "")
    assert "](javascript" not in markdown.replace("\\](javascript", "")
    assert "\\[l\\]" in markdown and "`" in markdown  # escaped text, file names as code


def test_a_labelled_batch_of_a_target_named_prediction_is_told_apart_from_an_old_output(
    tmp_path,
):
    """A target named `prediction` trained; scoring a labelled batch said "is it an earlier
    scoring output?"."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200)})
    y = pd.Series(np.where(X["x"] > 0.3, "yes", "no"), name="prediction")
    model = LibreClassifier(random_state=0, positive_class="yes").fit(X, y)
    assert model.rules_.target == "prediction"
    labelled = X.assign(prediction=y)
    with pytest.raises(DataError, match=r"'prediction', the model's target \(the labels\)"):
        score_frame(model, labelled)
    labelled.to_parquet(tmp_path / "batch.parquet")
    with pytest.raises(DataError, match=r"batch\.parquet has column 'prediction', the model's"):
        score_files(model, tmp_path / "batch.parquet", tmp_path / "out.parquet")
    scored, _ = score_frame(model, X)
    assert list(scored["prediction"]) == list(model.predict(X))
    scored.to_parquet(tmp_path / "old.parquet")  # an earlier output is still named one
    with pytest.raises(DataError, match=r"old\.parquet already has column\(s\) .*earlier scoring"):
        score_files(model, tmp_path / "old.parquet", tmp_path / "out2.parquet")


def test_drift_on_columns_no_rule_tests_is_told_apart_and_one_line_on_the_command(tmp_path):
    """A 300-column table scored 45 drift warnings, each on its line, 43 of them on noise
    columns no rule tests, with bounds in full precision."""
    from libre_flows.flows.cli.common import console
    from libre_flows.flows.cli.score import _print_warnings

    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"noise_{i}": rng.normal(size=300) for i in range(6)})
    X["signal"] = rng.normal(size=300)
    y = np.where(X["signal"] > 0.5, "yes", "no")
    model = LibreClassifier(random_state=0, positive_class="yes").fit(X, y)
    assert {f for rule in model.rules_ for f in rule.features} == {"signal"}
    batch = X.head(50) * 10  # every column beyond its training range
    batch.to_parquet(tmp_path / "batch.parquet")
    contract = DataContract.from_model(model, X)
    summary = score_files(
        model, tmp_path / "batch.parquet", tmp_path / "out.parquet", contract=contract
    ).to_dict()
    tested = {w["column"]: w["tested"] for w in summary["warnings"]}
    assert tested == {**{f"noise_{i}": False for i in range(6)}, "signal": True}
    message = next(w["message"] for w in summary["warnings"] if w["column"] == "noise_0")
    assert re.search(r"training range \[-?\d+\.\d{1,5}, \d+\.\d{1,5}\]", message), message
    with console.capture() as captured:
        _print_warnings(summary["warnings"])
    lines = captured.get().strip().splitlines()
    assert len(lines) == 2 and "'signal'" in lines[0]
    assert lines[1].startswith("  - 6 on 6 columns no rule tests, so predictions are unaffected")
    with console.capture() as captured:
        _print_warnings(summary["warnings"][:3])  # few: each on its line
    assert len(captured.get().strip().splitlines()) == 3


def test_scoring_s_python_calls_check_their_arguments_and_take_what_they_return(credit, tmp_path):
    """render_scoring_report refused what score_files returns; fail_on_drift='no' turned the
    check on; a file given twice was scored once without a word."""
    X, model, contract = credit
    X.head(20).to_csv(tmp_path / "a.csv", index=False)
    summary = score_files(model, tmp_path / "a.csv", tmp_path / "out.parquet", contract=contract)
    assert render_scoring_report(summary) == render_scoring_report(summary.to_dict())
    with pytest.raises(ParameterError, match="fail_on_drift must be True or False; got 'no'"):
        score_files(model, tmp_path / "a.csv", tmp_path / "o2.parquet", fail_on_drift="no")
    twice = [tmp_path / "a.csv", tmp_path / "a.csv"]
    with pytest.warns(LibreWarning, match="1 input file is the same file as another input"):
        again = score_files(model, twice, tmp_path / "o3.parquet", contract=contract)
    assert again.rows == 20


def test_drift_in_a_column_tested_only_for_missing_values_does_not_fail_the_batch(tmp_path):
    """A rule `b is missing`: b's values out of range cannot change a prediction, yet
    --fail-on-drift stopped the batch, saying rules "read them as its lowest / highest
    interval"."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=600), "b": rng.normal(size=600)})
    X.loc[rng.random(600) < 0.3, "b"] = np.nan
    y = (X["a"] > 0.5) | X["b"].isna()
    model = LibreClassifier(random_state=0, max_intervals=3).fit(X, y)
    conditions = {c.feature: c for rule in model.rules_ for c in rule}
    assert conditions["b"].missing and not conditions["b"].intervals
    contract = DataContract.from_model(model, X)
    assert [(c.name, c.values_tested) for c in contract.columns] == [("a", True), ("b", False)]
    again = DataContract.from_json(contract.to_json())
    assert again == contract and '"values_in_rules": false' in contract.to_json()
    output = tmp_path / "out.parquet"
    X.assign(b=X["b"] * 100).to_parquet(tmp_path / "wide_b.parquet")
    summary = score_files(
        model, tmp_path / "wide_b.parquet", output, contract=contract, fail_on_drift=True
    )
    (said,) = [w.message for w in summary.warnings if "'b'" in w.message]
    assert said.endswith("rules test 'b' only for a missing value, so predictions are unaffected")
    X.assign(a=X["a"] * 100).to_parquet(tmp_path / "wide_a.parquet")
    with pytest.raises(ContractViolation, match=r"(?s)Drift in columns the rules test.*'a'"):
        score_files(
            model, tmp_path / "wide_a.parquet", output, contract=contract, fail_on_drift=True
        )
    # a contract written before the flag was recorded: read from the model's rules
    old = json.loads(contract.to_json())
    for column in old["columns"]:
        column.pop("values_in_rules", None)
    summary = score_files(
        model, tmp_path / "wide_b.parquet", output, contract=old, fail_on_drift=True
    )
    assert not any(w["tested"] for w in summary.to_dict()["warnings"] if w["column"] == "b")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)  # b's drift cannot change a prediction
        scoring.score_frame(model, X.assign(b=X["b"] * 100), contract)
    # every value of b unseen (upper-cased upstream, say) is no error either
    codes = X.assign(c=np.where(X["b"].isna(), None, "x"))
    coded = LibreClassifier(random_state=0, max_intervals=3).fit(codes.drop(columns="b"), y)
    assert {c.feature: c for rule in coded.rules_ for c in rule}["c"].missing
    scoring.score_frame(coded, codes.drop(columns="b").assign(c=np.where(X["b"].isna(), None, "X")))


def test_a_flag_rate_far_from_the_versions_own_draws_a_caution(tmp_path):
    """A champion that flagged 0.92 % of its holdout (37 of 4,004) flagged 10.68 % of a new
    file's rows, and `libre score` said nothing of it."""
    from libre_flows.flows.cli.score import flag_rate_caution

    model = tmp_path / "v0001" / "model.json"
    model.parent.mkdir()
    metrics = {"n_flagged": 37, "n_rows": 4004, "f1": 0.47}
    (model.parent / "version.json").write_text(json.dumps({"metrics": metrics}))
    said = flag_rate_caution(model, {"rows": 5000, "n_positive": 534})
    assert said.startswith("the model flagged 10.68% of these rows, against 0.92% of the 4,004")
    assert flag_rate_caution(model, {"rows": 5000, "n_positive": 50}) is None  # as before
    assert flag_rate_caution(model, {"rows": 60, "n_positive": 6}) is None  # too few rows
    assert "0.00% of these rows" in flag_rate_caution(model, {"rows": 20000, "n_positive": 0})
    assert flag_rate_caution(tmp_path / "alone.json", {"rows": 5000, "n_positive": 534}) is None
    assert "(37 flagged)" in said
    metrics["n_flagged"] = 0  # a version that flagged none of its holdout now flags 40 %
    (model.parent / "version.json").write_text(json.dumps({"metrics": metrics}))
    assert "40.00% of these rows, against 0.00%" in flag_rate_caution(
        model, {"rows": 5000, "n_positive": 2000}
    )


def test_a_csv_row_longer_than_the_reader_s_block_scores(credit, tmp_path):
    """One 2 MB cell, in a column the model does not read, past the first 4 MB of a CSV:
    scoring failed with "straddling object straddles two block boundaries", a file training
    read."""
    X, model, contract = credit
    rows = pd.concat([X] * 160, ignore_index=True).assign(comment="ok")
    rows.loc[len(rows) - 5, "comment"] = "x" * (2 << 20)
    rows.to_csv(tmp_path / "long.csv", index=False)
    assert (tmp_path / "long.csv").stat().st_size > 6 << 20
    assert scoring.longest_line(tmp_path / "long.csv") > 2 << 20
    summary = score_files(model, tmp_path / "long.csv", tmp_path / "out.parquet", contract=contract)
    assert summary.rows == len(rows)
    out = pq.read_table(tmp_path / "out.parquet", columns=["prediction"]).to_pandas()
    np.testing.assert_array_equal(out["prediction"].to_numpy(), model.predict(rows[X.columns]))
    rows.to_csv(tmp_path / "long.csv.gz", index=False)  # a compressed file: its text's lines
    assert scoring.longest_line(tmp_path / "long.csv.gz") > 2 << 20
    summary = score_files(
        model, tmp_path / "long.csv.gz", tmp_path / "gz.parquet", contract=contract
    )
    assert summary.rows == len(rows)
    for text, longest in ((b"ab\ncdef\n", 5), (b"abc", 3), (b"", 0), (b"\n\n", 1)):
        (tmp_path / "t.txt").write_bytes(text)
        assert scoring.longest_line(tmp_path / "t.txt", chunk_bytes=2) == longest


def test_a_broken_csv_is_named_by_its_line_without_arrow_s_layers(credit, tmp_path):
    """A row cut short: "Error creating dataset. Could not read schema from 'x.csv'. Is this a
    'csv' file?: Could not open CSV input source ...: Invalid: CSV parse error: Row #3:
    Expected 16 columns, got 2: "..." and the raw row, over several lines."""
    X, model, contract = credit
    text = X.head(5).to_csv(index=False).splitlines()
    text[2] = ",".join(text[2].split(",")[:2])  # line 3 (the header is line 1) cut short
    (tmp_path / "short.csv").write_text("\n".join(text) + "\n")
    with pytest.raises(DataError) as caught:
        score_files(model, tmp_path / "short.csv", tmp_path / "out.parquet", contract=contract)
    said = str(caught.value)
    assert said == (
        f"Could not read {tmp_path / 'short.csv'} as CSV: row 3 has 2 values where the "
        f"header names {X.shape[1]} columns (a row cut short or run on, or a separator inside "
        "a value that is not quoted; the header is row 1). Fix or remove that row."
    )
    (tmp_path / "quote.csv").write_text("\n".join([text[0], text[1], '"' + text[3]]) + "\n")
    with pytest.raises(DataError, match=r"row 3 has 1 value where the header names"):
        score_files(model, tmp_path / "quote.csv", tmp_path / "out.parquet", contract=contract)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all" * 10)
    with pytest.raises(DataError) as caught:
        score_files(model, tmp_path / "bad.parquet", tmp_path / "out.parquet", contract=contract)
    said = str(caught.value)
    assert said.startswith(f"Could not read {tmp_path / 'bad.parquet'} as Parquet: ")
    assert "Error creating dataset" not in said and "\n" not in said, said
    assert said.endswith("(pyarrow.parquet.read_table reads it).")
