"""The streamed passes give what the in-memory path gives on the same training rows: the same
cut points and category bins, the same distinct records (same order, same weights), so the
same rules; on columns with more distinct values than ``EXACT_VALUES`` the cut points move by a
bounded amount."""

import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier
from libre_lib.datasets import load_dataset
from libre_lib.errors import DataError
from libre_lib.inputs import binary_target
from libre_lib.ops import stages, streamed
from libre_lib.ops.batches import (
    copy_keys,
    holdout_flags,
    plan_parts,
    row_ids,
    row_keys,
    unit_hash,
)
from libre_lib.ops.sources import fingerprint_source
from libre_lib.ops.spec import PipelineSpec

DATASETS = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets"
MANIFEST = json.loads((DATASETS / "MANIFEST.json").read_text())["datasets"]


def _spec(path: Path, target: str, positive, categorical, **data) -> PipelineSpec:
    return PipelineSpec.model_validate(
        {
            "name": "streamed",
            "data": {"path": str(path), "streamed": True, **data},
            "target": {"column": target, "positive_class": str(positive)},
            "features": {"categorical": categorical},
            "tuning": {"enabled": False},
        }
    )


def _in_memory(frame: pd.DataFrame, spec: PipelineSpec, holdout: np.ndarray, max_intervals=3):
    """Discretization and records of ``LibreClassifier`` on the training rows."""
    train = frame.loc[~holdout].reset_index(drop=True)
    X, y = train.drop(columns=spec.target.column), train[spec.target.column]
    model = LibreClassifier(  # the cap given, as the stream's: not "auto"'s rows rules
        categorical_features=spec.features.categorical,
        positive_class=str(spec.target.positive_class),
        max_intervals=max_intervals,
    )
    target = binary_target(y, str(spec.target.positive_class))
    discretization = model.discretize(X, target, max_intervals)
    return discretization, LibreClassifier.encode(X, target, discretization)


def _assert_same_records(a, b):
    assert a.n_rows == b.n_rows
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(a.positive_weight, b.positive_weight)
    np.testing.assert_array_equal(a.negative_weight, b.negative_weight)


def _holdout(frame: pd.DataFrame, spec) -> np.ndarray:
    """The streamed run's holdout flags of ``frame``'s rows (one file): keyed by their values,
    with the target and the categorical columns read as text, as the run reads them, and a
    repeated row's copies ranked within each batch of ``batch_rows`` rows."""
    text = [spec.target.column, *(spec.features.categorical or [])]
    keys = row_keys(frame.astype({c: "string" for c in text}))
    size = spec.data.batch_rows
    ranked = np.concatenate([copy_keys(keys[i : i + size]) for i in range(0, len(keys), size)])
    return holdout_flags(ranked, spec.holdout_fraction, spec.split_seed)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_bundled_dataset_streams_to_the_in_memory_bins_and_records(name):
    entry = MANIFEST[name]
    path = DATASETS / entry["file"]
    categorical = entry.get("categorical_columns") or []
    spec = _spec(path, entry["target_column"], entry["positive_class"], categorical,
                 batch_rows=1_999, sample_rows=10**7)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = streamed.stream(spec, max_intervals=None)
        frame = pd.read_csv(path, dtype={c: "string" for c in [*categorical, spec.target.column]})
        frame = frame.astype({c: object for c in [*categorical, spec.target.column]})
        holdout = _holdout(frame, spec)
        bins, records = _in_memory(frame, spec, holdout, max_intervals=None)
    assert data.discretization == bins
    _assert_same_records(data.records, records)
    # the sample is every row when sample_rows exceeds them, in file order
    assert len(data.sample) == len(frame)
    np.testing.assert_array_equal(data.sample_holdout, holdout)
    assert data.profile.n_rows == len(frame) and data.profile.n_train == int((~holdout).sum())


@pytest.fixture(scope="module")
def pima_parts(tmp_path_factory):
    """pima cut into three CSV files of a directory (uneven sizes)."""
    folder = tmp_path_factory.mktemp("pima-parts")
    frame = pd.read_csv(DATASETS / "pima.csv")
    for k, (start, stop) in enumerate([(0, 100), (100, 450), (450, len(frame))]):
        frame.iloc[start:stop].to_csv(folder / f"part-{k}.csv", index=False)
    return folder, frame


def test_a_directory_of_files_streams_like_their_concatenation(pima_parts):
    folder, frame = pima_parts
    spec = _spec(folder, "target", "1", None, batch_rows=128, format="csv")
    data = streamed.stream(spec)
    assert [p.file_index for p in data.plan.parts] == [0, 1, 2]
    holdout = _holdout(frame, spec)
    frame = frame.assign(target=frame["target"].astype(str).astype(object))
    bins, records = _in_memory(frame, spec, holdout)
    assert data.discretization == bins
    _assert_same_records(data.records, records)


def test_batch_size_does_not_change_anything(pima_parts):
    folder, _ = pima_parts
    small = streamed.stream(_spec(folder, "target", "1", None, batch_rows=100, format="csv"))
    large = streamed.stream(_spec(folder, "target", "1", None, batch_rows=10_000, format="csv"))
    assert small.discretization == large.discretization
    _assert_same_records(small.records, large.records)
    pd.testing.assert_frame_equal(small.sample, large.sample)


def test_the_row_hash_is_uniform_and_seeded():
    ids = row_ids(0, 0, 200_000)
    u = unit_hash(ids, seed=0)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs((u < 0.2).mean() - 0.2) < 0.005
    assert not np.array_equal(u, unit_hash(ids, seed=1))
    np.testing.assert_array_equal(u[1000:2000], unit_hash(row_ids(0, 1000, 1000), seed=0))
    assert not np.array_equal(u[:1000], unit_hash(row_ids(1, 0, 1000), seed=0))


@pytest.mark.parametrize("dtype", ["float32", "Float32", "float16"])
def test_numbers_stored_in_fewer_bits_key_their_rows_as_their_decimals(dtype):
    """pima with bmi as float32 (a Parquet file of 32-bit floats): 33.6 widened to
    33.59999847..., so 227 of 768 rows changed side of the holdout, and the promotion compared
    with a champion trained on most of the new holdout rows."""
    frame, _, _ = load_dataset("pima")
    frame = frame.assign(bmi=frame["bmi"].where(frame["bmi"] > 0)).round({"bmi": 1})
    narrow = frame.astype({"bmi": dtype, "diabetes_pedigree_function": dtype})
    assert not np.array_equal(narrow["bmi"].to_numpy(float), frame["bmi"].to_numpy(float))
    if dtype == "float16":  # 3 significant digits: the rows that still read the same
        same = narrow["bmi"].astype(str).astype(float).eq(frame["bmi"]) & narrow[
            "diabetes_pedigree_function"
        ].astype(str).astype(float).eq(frame["diabetes_pedigree_function"])
        assert 0 < same.sum() < len(frame)
        np.testing.assert_array_equal(row_keys(narrow)[same], row_keys(frame)[same])
    else:
        np.testing.assert_array_equal(row_keys(narrow), row_keys(frame))


def test_a_sample_smaller_than_the_table_is_uniform(pima_parts):
    folder, frame = pima_parts
    data = streamed.stream(_spec(folder, "target", "1", None, batch_rows=100, format="csv",
                                 sample_rows=200))  # fmt: skip
    assert 120 <= len(data.sample) <= 280
    assert data.profile.n_rows == len(frame)  # the counts still cover every row
    assert data.records.positive_weight.sum() + data.records.negative_weight.sum() == (
        data.profile.n_train
    )


def test_parquet_parts_follow_row_groups(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"x": np.arange(1000.0), "y": np.arange(1000) % 2})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=100)
    parts = plan_parts(str(path), "parquet", batch_rows=50)  # up to 4 batches = 200 rows a part
    assert [p.row_groups for p in parts] == [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]
    assert [p.first_row for p in parts] == [0, 200, 400, 600, 800]
    assert sum(p.n_rows for p in parts) == 1000


@pytest.fixture(scope="module")
def synthetic_1m(tmp_path_factory):
    """1,000,000 rows of the benchmarks' synthetic data (categorical columns, missing cells)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from synthetic import make_frame, write_parquet

    X, y = make_frame(1_000_000, seed=0, messy=True)
    path = tmp_path_factory.mktemp("synthetic") / "synthetic.parquet"
    write_parquet(path, X, y)
    frame = X.assign(label=y.astype(np.int8).astype(str).astype(object))
    return path, frame


def test_one_million_rows_stream_to_the_in_memory_bins_and_records(synthetic_1m):
    """Past EXACT_VALUES distinct values a column is counted on fine bins, and the bins its
    pre-binning's quantiles fall in are resolved into values: the cut points stay exact."""
    path, frame = synthetic_1m
    spec = _spec(path, "label", "1", ["c3", "c20"], batch_rows=250_000)
    data = streamed.stream(spec)
    assert all(name in data.profile.edges for name in ("x0", "x1", "x2"))  # fine-binned
    holdout = _holdout(frame, spec)
    bins, records = _in_memory(frame, spec, holdout)
    assert data.discretization == bins
    _assert_same_records(data.records, records)


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_an_fsspec_url_directory_streams_like_the_local_one(pima_parts, file_format):
    """Object-store sources: every part is read through fsspec (here its in-memory file
    system), with the same parts, rows and results as from local files."""
    import fsspec

    folder, _ = pima_parts
    fs = fsspec.filesystem("memory")
    root = f"memory://pima-{file_format}"
    local = folder.parent / f"{folder.name}-{file_format}"
    local.mkdir(exist_ok=True)
    for k, path in enumerate(sorted(folder.glob("*.csv"))):
        part = pd.read_csv(path)
        name = f"part-{k}.{file_format}"
        if file_format == "csv":
            part.to_csv(local / name, index=False)
        else:
            part.to_parquet(local / name, index=False)
        fs.pipe(f"{root}/{name}", (local / name).read_bytes())
    try:
        remote = streamed.stream(
            _spec(root, "target", "1", None, batch_rows=128, format=file_format)
        )
        here = streamed.stream(
            _spec(local, "target", "1", None, batch_rows=128, format=file_format)
        )
        fingerprint = fingerprint_source(root)
        assert fingerprint == fingerprint_source(root)
        fs.pipe(f"{root}/extra.txt", b"x")  # the source's sha256 covers every file
        assert fingerprint_source(root) != fingerprint
    finally:
        fs.rm(root, recursive=True)
    assert all(p.path.startswith("memory://") for p in remote.plan.parts)
    assert remote.discretization == here.discretization
    _assert_same_records(remote.records, here.records)
    pd.testing.assert_frame_equal(remote.sample, here.sample)


def test_a_directory_read_in_memory_is_its_files_one_after_the_other(pima_parts):
    """A folder read whole (``data.streamed: false``) was refused; under "auto" a folder
    streams, a URL one too (it was read as a file, and failed)."""
    import fsspec

    from libre_lib.ops.sources import read_source

    folder, frame = pima_parts
    pd.testing.assert_frame_equal(read_source(str(folder), "csv"), read_source_of(frame))
    spec = _spec(folder, "target", "1", None, format="csv")
    assert spec.is_streamed()
    auto = spec.model_copy(update={"data": spec.data.model_copy(update={"streamed": "auto"})})
    assert auto.is_streamed()
    fs = fsspec.filesystem("memory")
    for part in folder.iterdir():
        fs.pipe(f"/pima-url-parts/{part.name}", part.read_bytes())
    try:
        url = auto.model_copy(
            update={"data": auto.data.model_copy(update={"path": "memory://pima-url-parts"})}
        )
        assert url.is_streamed()
        one = url.model_copy(
            update={
                "data": url.data.model_copy(update={"path": "memory://pima-url-parts/part-0.csv"})
            }
        )
        assert not one.is_streamed()
    finally:
        fs.rm("/pima-url-parts", recursive=True)


def read_source_of(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as ``read_source`` reads it from one CSV file."""
    from libre_lib.ops.sources import read_source

    path = Path(tempfile.mkdtemp()) / "whole.csv"
    frame.to_csv(path, index=False)
    return read_source(str(path), "csv")


def test_a_column_of_many_categories_streams_to_the_same_groups(tmp_path):
    """Grouped categories (more than 100) are cut from the merged per-batch class counts, so
    the streamed bins equal the in-memory ones."""
    rng = np.random.default_rng(0)
    n = 6_000
    city = rng.integers(0, 150, n)
    share = np.array([0.1, 0.5, 0.9])[city % 3]
    frame = pd.DataFrame(
        {
            "city": [f"c{c}" for c in city],
            "x": rng.normal(size=n).round(3),
            "target": np.where(rng.random(n) < share, "yes", "no"),
        }
    )
    path = tmp_path / "cities.csv"
    frame.to_csv(path, index=False)
    spec = _spec(path, "target", "yes", ["city"], batch_rows=700, sample_rows=10**7)
    data = streamed.stream(spec, max_intervals=None)
    frame = frame.astype({"city": object, "target": object})
    holdout = _holdout(frame, spec)
    bins, records = _in_memory(frame, spec, holdout, max_intervals=None)
    city_bins = bins.features[bins.names.index("city")]
    assert city_bins.groups and city_bins.n_value_bins < 20
    assert data.discretization == bins
    _assert_same_records(data.records, records)


def test_rows_without_a_target_value_are_left_out_and_counted_when_asked(tmp_path):
    """target.unlabeled: drop leaves the unlabeled rows out of every pass; the others keep
    their row ids, so their split, and give the in-memory bins and records."""
    entry = MANIFEST["pima"]
    frame = pd.read_csv(DATASETS / entry["file"], dtype={entry["target_column"]: "string"})
    target = entry["target_column"]
    unlabeled = np.zeros(len(frame), dtype=bool)
    unlabeled[np.random.default_rng(0).choice(len(frame), 37, replace=False)] = True
    frame.loc[unlabeled, target] = pd.NA
    frame.to_csv(tmp_path / "pima.csv", index=False)
    spec = PipelineSpec.model_validate(
        {
            **_spec(tmp_path / "pima.csv", target, entry["positive_class"], []).model_dump(),
            "target": {
                "column": target,
                "positive_class": str(entry["positive_class"]),
                "unlabeled": "drop",
            },
        }
    )
    spec = spec.model_copy(update={"data": spec.data.model_copy(update={"batch_rows": 250})})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = streamed.stream(spec, max_intervals=None)
        kept = frame.loc[~unlabeled].reset_index(drop=True).astype({target: object})
        holdout = _holdout(kept, spec)
        bins, records = _in_memory(kept, spec, holdout, max_intervals=None)
    assert data.profile.n_unlabeled == 37 and data.profile.n_rows == len(frame) - 37
    assert data.discretization == bins
    _assert_same_records(data.records, records)
    np.testing.assert_array_equal(data.sample_holdout, holdout)


def test_merge_order_streams_to_the_in_memory_bins(pima_parts):
    folder, frame = pima_parts
    spec = _spec(folder, "target", "1", None, batch_rows=128, format="csv")
    spec = spec.model_copy(update={"model": spec.model.model_copy(update={"merge_order": "sweep"})})
    data = streamed.stream(spec, max_intervals=None)
    holdout = _holdout(frame, spec)
    train = frame.loc[~holdout].reset_index(drop=True)
    X, y = train.drop(columns="target"), train["target"].astype(str)
    model = LibreClassifier(positive_class="1", merge_order="sweep")
    assert data.discretization == model.discretize(X, binary_target(y, "1"), None)


def test_significant_cuts_stream_to_the_in_memory_bins(pima_parts):
    folder, frame = pima_parts
    spec = _spec(folder, "target", "1", None, batch_rows=128, format="csv")
    spec = spec.model_copy(
        update={"model": spec.model.model_copy(update={"significant_cuts": True})}
    )
    data = streamed.stream(spec, max_intervals=None)
    holdout = _holdout(frame, spec)
    train = frame.loc[~holdout].reset_index(drop=True)
    X, y = train.drop(columns="target"), train["target"].astype(str)
    model = LibreClassifier(positive_class="1", significant_cuts=True)
    expected = model.discretize(X, binary_target(y, "1"), None)
    assert data.discretization == expected
    plain = streamed.stream(_spec(folder, "target", "1", None, batch_rows=128, format="csv"), None)
    assert sum(len(f.cuts) for f in expected.features) < sum(
        len(f.cuts) for f in plain.discretization.features
    )


@pytest.mark.parametrize("name", ["credit_approval", "australian", "pima"])
def test_streamed_and_in_memory_runs_hold_out_the_same_rows(name, tmp_path):
    """Both pipelines key a row's side by its values as read, so one file's holdout is the
    same rows whichever way it is trained (in memory only the tiny-data guard can differ)."""
    entry = MANIFEST[name]
    categorical = entry.get("categorical_columns") or []
    spec = _spec(DATASETS / entry["file"], entry["target_column"], entry["positive_class"],
                 categorical, batch_rows=197, sample_rows=10**7)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = streamed.stream(spec)
    in_memory = spec.model_copy(update={"data": spec.data.model_copy(update={"streamed": False})})
    frame, _ = stages.load(in_memory, "sha")
    flags = stages.split(in_memory, frame)[0].column("holdout").to_numpy()
    np.testing.assert_array_equal(data.sample_holdout, flags)
    assert 0.15 < flags.mean() < 0.25


def test_a_data_error_in_a_later_part_names_its_file_and_the_specs_key(tmp_path):
    """Stray text among a later CSV part's numbers failed the run with "Column 'age' should be
    numeric ... Declare it in categorical_features": no file, and not the spec's key."""
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.DataFrame({"age": np.arange(40) % 30 + 20, "y": np.arange(40) % 2})
    frame.iloc[:20].to_csv(folder / "part-0.csv", index=False)
    frame.iloc[20:].assign(age=["unknown", *frame.age.iloc[21:]]).to_csv(
        folder / "part-1.csv", index=False
    )
    spec = _spec(folder, "y", 1, [], format="csv")
    plan = streamed.plan_source(spec)
    first, second = plan.parts
    streamed.in_part(first, streamed.profile, spec, plan, first)
    with pytest.raises(DataError, match=r"^In .*part-1.csv: Column 'age' should be numeric") as e:
        streamed.in_part(second, streamed.profile, spec, plan, second)
    assert "features.categorical" in str(e.value) and "categorical_features" not in str(e.value)
