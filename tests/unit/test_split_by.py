"""``split_by``: the holdout keyed by id columns, so a row keeps its side when its other values
change and all rows of one id share a side (docs/pipeline.md, "The holdout split")."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from libre_lib.errors import DataError, SpecError
from libre_lib.ops import stages, streamed
from libre_lib.ops.batches import copy_keys, row_keys
from libre_lib.ops.spec import PipelineSpec

HABERMAN = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"


def _spec(path: Path, split_by=(), streamed_=False, **top) -> PipelineSpec:
    return PipelineSpec.model_validate(
        {
            "name": "keyed",
            "data": {
                "path": str(path),
                "streamed": streamed_,
                "batch_rows": 100,
                "sample_rows": 10**7,
            },
            "target": {"column": "target", "positive_class": "2"},
            "features": {"exclude": ["patient"]},
            "tuning": {"enabled": False},
            "split_by": list(split_by),
            **top,
        }
    )


def _patients(folder: Path, name: str = "patients.csv", **changes) -> Path:
    """Haberman with a patient id in front (text, e.g. "p0042"), several rows per patient."""
    frame = pd.read_csv(HABERMAN)
    frame.insert(0, "patient", [f"p{i // 3:04d}" for i in range(len(frame))])
    for column, change in changes.items():
        frame[column] = change(frame[column])
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def _holdout(spec: PipelineSpec) -> tuple[pd.DataFrame, np.ndarray]:
    frame, _ = stages.load(spec, "sha")
    return frame, stages.split(spec, frame)[0].column("holdout").to_numpy()


def test_a_patient_keeps_its_side_when_its_values_change_and_rows_move(tmp_path):
    spec = _spec(_patients(tmp_path), split_by=["patient"])
    _, before = _holdout(spec)
    ids = pd.read_csv(tmp_path / "patients.csv")["patient"]
    assert 0.12 < before.mean() < 0.3
    sides = pd.Series(before).groupby(ids.to_numpy()).nunique()
    assert (sides == 1).all()  # all rows of a patient share its side

    older = _patients(tmp_path, "older.csv", age=lambda a: a + 1)
    shuffled = pd.read_csv(older).sample(frac=1.0, random_state=5).iloc[:250]
    shuffled.to_csv(older, index=False)
    _, after = _holdout(_spec(older, split_by=["patient"]))
    side = dict(zip(ids, before, strict=True))
    np.testing.assert_array_equal(after, shuffled["patient"].map(side).to_numpy())

    # keyed by the rows' values, the edited ages move rows to the other side
    _, plain_before = _holdout(_spec(tmp_path / "patients.csv"))
    _, plain_after = _holdout(_spec(older))
    moved = plain_after != plain_before[shuffled.index.to_numpy()]
    assert moved.any()


def test_rows_without_an_id_are_keyed_by_their_values(tmp_path):
    frame = pd.read_csv(_patients(tmp_path))
    frame.loc[::2, "patient"] = None
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    spec = _spec(tmp_path / "gaps.csv", split_by=["patient"])
    loaded, holdout = _holdout(spec)
    absent = frame["patient"].isna().to_numpy()
    keys = copy_keys(row_keys(loaded[absent]))  # as without split_by, among those rows
    keyed = stages.holdout_mask(keys, np.zeros(len(keys), bool), 0.2, spec.split_seed)
    np.testing.assert_array_equal(holdout[absent], keyed)
    assert 0 < holdout[absent].mean() < 0.5  # not all on one side

    frame["patient"] = None
    frame.to_csv(tmp_path / "none.csv", index=False)
    with pytest.raises(DataError, match=r"split_by columns \['patient'\] hold no value"):
        _holdout(_spec(tmp_path / "none.csv", split_by=["patient"]))


def test_split_by_names_columns_of_the_data_and_not_the_target(tmp_path):
    path = _patients(tmp_path)
    with pytest.raises(SpecError, match=r"split_by names columns not in the data.*'patient_id'"):
        stages.load(_spec(path, split_by=["patient_id"]), "sha")
    with pytest.raises(SpecError, match=r"split_by names columns not in the data"):
        streamed.plan_source(_spec(path, split_by=["patient_id"], streamed_=True))
    with pytest.raises(ValidationError, match="lists the target column 'target'"):
        _spec(path, split_by=["target"])
    with pytest.raises(ValidationError, match="names a column twice"):
        _spec(path, split_by=["patient", "patient"])


@pytest.mark.parametrize(
    ("split_by", "file_format"),
    [(["patient"], "csv"), (["age", "patient"], "csv"), (["patient"], "parquet")],
)
def test_streamed_and_in_memory_runs_hold_out_the_same_rows(tmp_path, split_by, file_format):
    """An id that is not a feature (read as text for its keys only; in the Parquet file a
    number with gaps) and a feature among the key columns are keyed alike by the batches and by
    the whole file."""
    path = _patients(tmp_path)
    if file_format == "parquet":
        frame = pd.read_csv(path)
        frame["patient"] = np.arange(len(frame), dtype=float) * 7
        frame.loc[5:9, "patient"] = np.nan
        path = tmp_path / "patients.parquet"
        frame.to_parquet(path, row_group_size=100)
    spec = _spec(path, split_by=split_by, streamed_=True, holdout_fraction=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = streamed.stream(spec)
    assert "patient" not in data.plan.columns
    in_memory = spec.model_copy(update={"data": spec.data.model_copy(update={"streamed": False})})
    _, flags = _holdout(in_memory)
    np.testing.assert_array_equal(data.sample_holdout, flags)
    assert 0.2 < flags.mean() < 0.4


def test_an_ids_rows_stay_together_when_tiny_data_moves_one(tmp_path):
    """On tiny data a class without a holdout row gets one moved there: all rows of its id
    move, so no id sits on both sides."""
    for seed in range(30):
        ids = np.repeat([f"c{i}" for i in range(12)], 4)
        frame = pd.DataFrame(
            {
                "patient": ids,
                "age": np.arange(48),
                "target": np.where(np.isin(ids, ["c0", "c1"]), "2", "1"),
            }
        )
        frame.to_csv(tmp_path / "few.csv", index=False)
        spec = _spec(tmp_path / "few.csv", split_by=["patient"], split_seed=seed)
        _, holdout = _holdout(spec)
        assert (pd.Series(holdout).groupby(ids).nunique() == 1).all(), seed
        assert holdout[np.isin(ids, ["c0", "c1"])].any() and not holdout[:8].all()


def test_streamed_batches_without_ids_or_rows_are_keyed_as_far_as_they_can_be(tmp_path):
    """The newest rows may have no id yet, and a batch may hold only unlabeled rows: one
    such batch refused a file the in-memory run trains on."""
    frame = pd.read_csv(_patients(tmp_path))
    frame.loc[250:, "patient"] = None  # the last batches have no id
    frame["target"] = frame["target"].astype("string")
    frame.loc[100:199, "target"] = pd.NA  # a whole batch without a target value
    frame.to_csv(tmp_path / "late.csv", index=False)
    spec = _spec(
        tmp_path / "late.csv", split_by=["patient"], streamed_=True,
        target={"column": "target", "positive_class": "2", "unlabeled": "drop"},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = streamed.stream(spec)
    in_memory = spec.model_copy(update={"data": spec.data.model_copy(update={"streamed": False})})
    _, flags = _holdout(in_memory)
    assert len(data.sample_holdout) == len(flags) == 206
    assert 0.1 < data.sample_holdout.mean() < 0.3


def test_the_split_key_follows_the_id_not_the_features(tmp_path):
    path = _patients(tmp_path)
    keyed = _spec(path, split_by=["patient"])
    plain = _spec(path)
    columns = ["target", "age", "year_of_operation"]
    assert stages.split_key(keyed, columns) == stages.split_key(keyed, columns[:2])
    assert stages.split_key(plain, columns) != stages.split_key(plain, columns[:2])
    assert stages.split_key(keyed, columns) != stages.split_key(plain, ["patient"])
    # an id read as text (not a feature) keys its rows otherwise than read as a number
    assert stages.split_key(keyed, columns) != stages.split_key(keyed, [*columns, "patient"])
    # float32 keyed columns key their rows by their decimals, as earlier releases did not:
    # another split, which the key tells apart (promotion then says so); an unkeyed one not
    assert stages.split_key(plain, columns, ["age"]) != stages.split_key(plain, columns)
    assert stages.split_key(keyed, columns, ["age"]) == stages.split_key(keyed, columns)
    assert stages.split_params(keyed)["split_by"] == ["patient"]
    assert "split_by" not in stages.split_params(plain)
    # the load stage checks the columns: a cached load of another split_by must not skip that
    assert stages.load_params(keyed)["split_by"] == ["patient"]
    assert "split_by" not in stages.load_params(plain)


def test_an_unset_split_by_leaves_spec_hashes_as_they_were():
    """Registered versions record their spec's hash: a spec without ``split_by`` hashes as it
    did before the field existed (the value a release without it computed), so an unchanged
    re-run after an upgrade reuses its version."""
    spec = PipelineSpec.model_validate(
        {
            "name": "hashed",
            "data": {"path": "data.csv"},
            "target": {"column": "y", "positive_class": "yes"},
        }
    )
    expected = "92b1f995a78ff3ca8c3fe904fa707982f7792f4260f9ba7d0f2c1f3a530bfcf0"
    assert stages.spec_hash(spec) == expected
    assert stages.spec_hash(spec.model_copy(update={"split_by": ["x"]})) != expected
