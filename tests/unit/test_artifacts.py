"""The content-addressed Parquet store: keys, round trips, corruption, crashes, concurrency."""

import hashlib
import io
import json
import logging
import multiprocessing
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from libre_lib import LibreError, ParameterError, __version__
from libre_lib.errors import ArtifactError
from libre_lib.ops.artifacts import (
    ArtifactRef,
    ArtifactStore,
    fingerprint_bytes,
    fingerprint_file,
    fingerprint_frame,
    fingerprint_json,
    stage_key,
)

STAGE = "discretize"
PARAMS = {"max_bins": 8, "alpha": 0.05, "columns": ["a", "b"]}
INPUTS = ["0" * 64, "f" * 64]
KEY = stage_key(STAGE, PARAMS, INPUTS, "1.0")


def make_frame(n: int = 200, shift: int = 0) -> pd.DataFrame:
    """A frame with int, float (with NaN), str and bool columns."""
    ints = np.arange(n, dtype=np.int64) + shift
    floats = np.linspace(0.0, 1.0, n)
    floats[::7] = np.nan
    return pd.DataFrame(
        {
            "i": ints,
            "f": floats,
            "s": pd.Series(ints).astype(str).radd("v"),
            "b": ints % 3 == 0,
        }
    )


def compute_with_counter(counter: list[int], frame: pd.DataFrame | None = None):
    """A compute callable that counts its calls."""

    def compute():
        counter.append(1)
        return (make_frame() if frame is None else frame), {"source": "unit-test"}

    return compute


def stage_dir_names(store: ArtifactStore, stage: str = STAGE) -> set[str]:
    return {p.name for p in (store.root / stage).iterdir()}


# --------------------------------------------------------------------------- fingerprints


def test_fingerprint_file_and_bytes_match_hashlib(tmp_path):
    data = np.random.default_rng(0).bytes(3 * 1024 * 1024 + 17)  # several read chunks
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    expected = hashlib.sha256(data).hexdigest()
    assert fingerprint_file(path) == expected
    assert fingerprint_file(str(path)) == expected
    assert fingerprint_bytes(data) == expected


def test_fingerprint_json_is_canonical_and_converts_numpy():
    a = {"b": [1, 2.5, "é"], "a": {"y": None, "x": True}}
    b = {"a": {"x": True, "y": None}, "b": [1, 2.5, "é"]}
    assert fingerprint_json(a) == fingerprint_json(b)
    assert fingerprint_json(a) != fingerprint_json({**a, "b": [2, 1]})
    with_numpy = {"n": np.int64(3), "f": np.float32(0.5), "arr": np.array([1, 2]), "t": np.bool_(1)}
    plain = {"n": 3, "f": 0.5, "arr": [1, 2], "t": True}
    assert fingerprint_json(with_numpy) == fingerprint_json(plain)


def test_canonical_json_sorts_a_mapping_of_numbers_and_texts_as_json_writes_its_keys():
    """report.value_labels {0: none, "01": one, 1.5: odd} failed the report stage with
    "'<' not supported between instances of 'str' and 'int'"; keys of one type are unchanged
    (numbers still sort as numbers, so no stored key moves)."""
    from libre_lib.ops.artifacts import canonical_json

    mixed = {"labels": {0: "none", "01": "one", 1.5: "odd", np.int64(7): "seven"}}
    assert canonical_json(mixed) == '{"labels":{"0":"none","01":"one","1.5":"odd","7":"seven"}}'
    assert canonical_json({10: "a", 2: "b"}) == '{"2":"b","10":"a"}'


@pytest.mark.parametrize("bad", [{1, 2}, object(), b"bytes", pd.Timestamp("2020-01-01")])
def test_fingerprint_json_rejects_unsupported_values_by_name(bad):
    with pytest.raises(TypeError, match=type(bad).__name__):
        fingerprint_json({"params": [bad]})


def test_stage_key_is_stable_and_sensitive_to_every_part():
    assert stage_key(STAGE, dict(reversed(PARAMS.items())), INPUTS, "1.0") == KEY
    assert len(KEY) == 32 and int(KEY, 16) >= 0
    variants = [
        stage_key("encode", PARAMS, INPUTS, "1.0"),
        stage_key(STAGE, {**PARAMS, "max_bins": 9}, INPUTS, "1.0"),
        stage_key(STAGE, {**PARAMS, "extra": None}, INPUTS, "1.0"),
        stage_key(STAGE, PARAMS, ["1" * 64, "f" * 64], "1.0"),
        stage_key(STAGE, PARAMS, list(reversed(INPUTS)), "1.0"),
        stage_key(STAGE, PARAMS, INPUTS[:1], "1.0"),
        stage_key(STAGE, PARAMS, INPUTS, "1.1"),
    ]
    assert len({KEY, *variants}) == len(variants) + 1


@pytest.mark.parametrize(
    ("stage", "params", "inputs", "version"),
    [
        ("../up", {}, [], "1"),
        ("", {}, [], "1"),
        (STAGE, [1], [], "1"),
        (STAGE, {}, "abc", "1"),
        (STAGE, {}, [1], "1"),
        (STAGE, {}, [], 1),
    ],
)
def test_stage_key_rejects_bad_arguments(stage, params, inputs, version):
    with pytest.raises(ParameterError):
        stage_key(stage, params, inputs, version)


# --------------------------------------------------------------------------- refs and errors


def test_artifact_ref_round_trips_through_dict_json_and_pickle():
    ref = ArtifactRef(STAGE, KEY, "/tmp/x.parquet", "a" * 64, 12)
    assert ArtifactRef.from_dict(json.loads(json.dumps(ref.to_dict()))) == ref
    assert pickle.loads(pickle.dumps(ref)) == ref
    with pytest.raises(ArtifactError, match="n_rows"):
        ArtifactRef.from_dict({k: v for k, v in ref.to_dict().items() if k != "n_rows"})


def test_artifact_error_is_a_libre_error_and_an_os_error():
    err = ArtifactError("boom")
    assert isinstance(err, LibreError) and isinstance(err, OSError)
    assert isinstance(err, ValueError) and str(err) == "boom"
    assert str(pickle.loads(pickle.dumps(err))) == "boom"


def test_artifact_error_survives_traceback_pickling():
    """Dask ships worker errors with tblib's exception reducer: it must rebuild the error."""
    pickling = pytest.importorskip("tblib.pickling_support")
    err = ArtifactError("boom")
    err.path = "/cache/x.parquet"
    func, args, *state = pickling.pickle_exception(err)
    restored = func(*args)
    if state and state[0]:
        restored.__dict__.update(state[0])
    assert type(restored) is ArtifactError and str(restored) == "boom"
    assert restored.path == "/cache/x.parquet"


def test_store_rejects_urls_and_unsafe_names(tmp_path):
    with pytest.raises(ParameterError, match="local"):
        ArtifactStore("s3://bucket/cache")
    store = ArtifactStore(tmp_path)
    with pytest.raises(ParameterError):
        store.path_for("../escape", KEY)
    with pytest.raises(ParameterError):
        store.write(STAGE, "a/b", make_frame())
    with pytest.raises(ParameterError, match="reserved"):
        store.write(STAGE, KEY, make_frame(), {"stage": "other"})


# --------------------------------------------------------------------------- round trip


def test_dataframe_round_trip_with_metadata(tmp_path):
    store = ArtifactStore(str(tmp_path / "store"))  # str root, created lazily
    assert not (tmp_path / "store").exists()
    frame = make_frame().set_axis(np.arange(200) * 2)  # the index is not preserved
    meta = {"source": "iris", "params": {"max_bins": np.int64(8), "cols": ["a"]}}
    ref = store.write(STAGE, KEY, frame, meta)

    assert ref.path == str(tmp_path / "store" / STAGE / f"{KEY}.parquet")
    assert ref.n_rows == 200 and ref.sha256 == fingerprint_file(ref.path)
    assert stage_dir_names(store) == {f"{KEY}.parquet", f"{KEY}.parquet.sha256"}
    expected = frame.reset_index(drop=True)
    pd.testing.assert_frame_equal(store.read_frame(ref), expected)
    assert store.read(ref).num_rows == 200
    assert store.metadata(ref) == {
        "schema_version": "1",
        "library_version": __version__,
        "stage": STAGE,
        "key": KEY,
        "source": "iris",
        "params": {"max_bins": 8, "cols": ["a"]},
    }
    sidecar = json.loads((tmp_path / "store" / STAGE / f"{KEY}.parquet.sha256").read_text())
    assert sidecar["sha256"] == ref.sha256 and sidecar["size"] == os.path.getsize(ref.path)
    assert "created" in sidecar
    assert store.lookup(STAGE, KEY) == ref


def test_artifact_is_a_plain_parquet_file(tmp_path):
    store = ArtifactStore(tmp_path)
    ref = store.write(STAGE, KEY, make_frame(), {"source": "iris"})
    pd.testing.assert_frame_equal(pd.read_parquet(ref.path), make_frame())
    table = pq.read_table(ref.path)
    assert table.schema.metadata[b"libre.stage"] == b'"discretize"'
    assert table.schema.metadata[b"libre.source"] == b'"iris"'
    footer = pq.read_metadata(ref.path).metadata
    assert json.loads(footer[b"libre.library_version"]) == __version__
    assert json.loads(footer[b"libre.key"]) == KEY


def test_arrow_table_input_and_empty_metadata(tmp_path):
    store = ArtifactStore(tmp_path)
    table = pa.table({"x": [1, 2, 3], "y": ["a", None, "c"]})
    ref = store.write(STAGE, KEY, table)
    assert store.read(ref).equals(table.replace_schema_metadata(store.read(ref).schema.metadata))
    assert store.metadata(ref)["stage"] == STAGE


# --------------------------------------------------------------------------- caching


def test_get_or_compute_hits_and_force_recomputes(tmp_path):
    store = ArtifactStore(tmp_path)
    calls: list[int] = []
    ref1, hit1 = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls))
    ref2, hit2 = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls))
    assert (hit1, hit2, len(calls)) == (False, True, 1)
    assert ref1 == ref2 and ref1.key == stage_key(STAGE, PARAMS, INPUTS, __version__)
    meta = store.metadata(ref1)
    assert meta["params"] == PARAMS and meta["inputs"] == INPUTS
    assert meta["stage_version"] == __version__ and meta["source"] == "unit-test"

    ref3, hit3 = store.get_or_compute(
        STAGE, PARAMS, INPUTS, compute_with_counter(calls, make_frame(shift=5)), force=True
    )
    assert (hit3, len(calls)) == (False, 2)
    assert ref3.key == ref1.key and ref3.sha256 != ref1.sha256
    pd.testing.assert_frame_equal(store.read_frame(ref3), make_frame(shift=5))

    _, hit4 = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls), version="2")
    assert (hit4, len(calls)) == (False, 3)


def test_get_or_compute_rejects_a_bad_compute_result(tmp_path):
    store = ArtifactStore(tmp_path)
    with pytest.raises(ParameterError, match="must return"):
        store.get_or_compute(STAGE, PARAMS, INPUTS, make_frame)


# --------------------------------------------------------------------------- corruption


def test_truncated_file_is_a_miss_and_is_recomputed(tmp_path, caplog):
    store = ArtifactStore(tmp_path)
    calls: list[int] = []
    ref, _ = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls))
    data = open(ref.path, "rb").read()
    with open(ref.path, "wb") as handle:
        handle.write(data[: len(data) // 2])

    with caplog.at_level(logging.WARNING, logger="libre_lib.ops.artifacts"):
        assert store.lookup(ref.stage, ref.key) is None
    assert ref.path in caplog.text and "truncated" in caplog.text
    moved = {name for name in stage_dir_names(store) if ".corrupt-" in name}
    assert {name.split(".corrupt-")[0] for name in moved} == {
        f"{ref.key}.parquet",
        f"{ref.key}.parquet.sha256",
    }

    ref2, hit = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls))
    assert (hit, len(calls)) == (False, 2) and ref2 == ref
    pd.testing.assert_frame_equal(store.read_frame(ref2), make_frame())
    assert store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter(calls))[1] is True


def test_flipped_byte_is_detected_by_lookup_and_read(tmp_path, caplog):
    store = ArtifactStore(tmp_path)
    ref = store.write(STAGE, KEY, make_frame())
    data = bytearray(open(ref.path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    with open(ref.path, "wb") as handle:
        handle.write(data)

    with pytest.raises(ArtifactError, match="--force") as excinfo:
        store.read(ref)
    assert ref.path in str(excinfo.value)
    with caplog.at_level(logging.WARNING, logger="libre_lib.ops.artifacts"):
        assert store.lookup(STAGE, KEY) is None
    assert "corrupt" in caplog.text and ref.path in caplog.text
    with pytest.raises(ArtifactError, match="missing"):  # moved aside, never trusted
        store.read(ref)


@pytest.mark.parametrize("damage", ["delete", "garble", "wrong-size"])
def test_missing_or_garbled_sidecar_is_a_miss(tmp_path, caplog, damage):
    store = ArtifactStore(tmp_path)
    ref = store.write(STAGE, KEY, make_frame())
    sidecar = tmp_path / STAGE / f"{KEY}.parquet.sha256"
    if damage == "delete":
        sidecar.unlink()
    elif damage == "garble":
        sidecar.write_text("{not json")
    else:
        record = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**record, "size": record["size"] + 1}))
    with caplog.at_level(logging.WARNING, logger="libre_lib.ops.artifacts"):
        assert store.lookup(STAGE, KEY) is None
    assert ref.path in caplog.text
    assert store.write(STAGE, KEY, make_frame()) == ref
    assert store.lookup(STAGE, KEY) == ref


def test_lookup_of_an_unknown_key_is_a_silent_miss(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="libre_lib.ops.artifacts"):
        assert ArtifactStore(tmp_path).lookup(STAGE, KEY) is None
    assert caplog.records == []
    with pytest.raises(ArtifactError, match="missing") as raised:
        ArtifactStore(tmp_path).read(ArtifactRef(STAGE, KEY, "x", "0" * 64, 1))
    # what removes one, and what to do; not the name of an internal function
    assert "libre prune --min-age-hours" in str(raised.value)
    assert "get_or_compute" not in str(raised.value)


# --------------------------------------------------------------------------- crashes


def failing_replace(monkeypatch, fail_on: int) -> None:
    """Make the ``fail_on``-th call of os.replace raise, as a crash at that point would."""
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == fail_on:
            raise OSError("simulated crash")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)


def test_crash_before_rename_leaves_no_final_file(tmp_path, monkeypatch):
    store = ArtifactStore(tmp_path)
    failing_replace(monkeypatch, fail_on=1)
    with pytest.raises(ArtifactError, match="simulated crash"):
        store.write(STAGE, KEY, make_frame())
    assert stage_dir_names(store) == set()  # no final file, no temp file
    assert store.lookup(STAGE, KEY) is None

    ref, hit = store.get_or_compute(STAGE, PARAMS, INPUTS, compute_with_counter([]))
    assert hit is False and store.lookup(STAGE, ref.key) == ref
    pd.testing.assert_frame_equal(store.read_frame(ref), make_frame())


def test_crash_between_file_and_sidecar_is_not_trusted(tmp_path, monkeypatch):
    store = ArtifactStore(tmp_path)
    failing_replace(monkeypatch, fail_on=2)  # the Parquet rename works, the sidecar's fails
    with pytest.raises(ArtifactError, match="simulated crash"):
        store.write(STAGE, KEY, make_frame())
    assert stage_dir_names(store) == {f"{KEY}.parquet"}
    assert store.lookup(STAGE, KEY) is None
    ref = store.write(STAGE, KEY, make_frame())
    assert store.lookup(STAGE, KEY) == ref


def test_stale_temp_files_are_ignored_and_cleaned_up(tmp_path):
    store = ArtifactStore(tmp_path)
    stage_dir = tmp_path / STAGE
    stage_dir.mkdir()
    dead = 2**22 + 1  # above Linux's largest pid_max: never a live process
    stale = stage_dir / f".{KEY}.parquet.tmp-{dead}-{'a' * 32}"
    fresh = stage_dir / f".{KEY}.parquet.tmp-{dead}-{'b' * 32}"
    other = stage_dir / "notes.txt"
    for path in (stale, fresh, other):
        path.write_bytes(b"PAR1 half written")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    os.utime(other, (old, old))

    assert store.lookup(STAGE, KEY) is None
    assert store.cleanup_temp(max_age_s=3600) == [stale]
    assert stage_dir_names(store) == {fresh.name, other.name}
    assert ArtifactStore(tmp_path / "absent").cleanup_temp() == []


# --------------------------------------------------------------------------- other files


def test_write_file_stays_under_the_root(tmp_path):
    store = ArtifactStore(tmp_path / "root")
    path = store.write_file("reports/summary.md", "# Rules\n")
    assert path == tmp_path / "root" / "reports" / "summary.md"
    assert path.read_text() == "# Rules\n"
    assert store.write_file("model.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    for bad in ("../outside.txt", str(tmp_path / "abs.txt"), "."):
        with pytest.raises(ParameterError):
            store.write_file(bad, "x")


# --------------------------------------------------------------------------- concurrency


def concurrent_writer(root: str, barrier, rounds: int, shift: int = 0) -> None:
    """Write the same key ``rounds`` times once every writer is ready (runs in a subprocess)."""
    store = ArtifactStore(root)
    frame = make_frame(5000, shift)
    barrier.wait(timeout=120)
    for _ in range(rounds):
        store.write(STAGE, KEY, frame, {"source": "race"})


def test_concurrent_threads_and_processes_leave_one_valid_file(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(6)
    processes = [
        ctx.Process(target=concurrent_writer, args=(str(tmp_path), barrier, 5)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(concurrent_writer, str(tmp_path), barrier, 5) for _ in range(4)]
        for future in futures:
            future.result()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0

    store = ArtifactStore(tmp_path)
    assert stage_dir_names(store) == {f"{KEY}.parquet", f"{KEY}.parquet.sha256"}
    ref = store.lookup(STAGE, KEY)
    assert ref is not None and ref.n_rows == 5000
    pd.testing.assert_frame_equal(store.read_frame(ref), make_frame(5000))


def test_concurrent_writers_of_different_content_leave_a_matching_pair(tmp_path):
    barrier = threading.Barrier(4)
    with ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(concurrent_writer, str(tmp_path), barrier, 10, shift) for shift in range(4)
        ]
        for future in futures:
            future.result()
    store = ArtifactStore(tmp_path)
    ref = store.lookup(STAGE, KEY)
    assert ref is not None
    shift = int(store.read_frame(ref)["i"].iloc[0])
    pd.testing.assert_frame_equal(store.read_frame(ref), make_frame(5000, shift))
    assert stage_dir_names(store) == {f"{KEY}.parquet", f"{KEY}.parquet.sha256"}


def test_a_key_committed_by_a_concurrent_run_while_computing_is_kept(tmp_path):
    """Identical `libre train` runs at once on one store failed: both missed a stage, both
    computed it (with its timing in the metadata, so with other bytes), the second commit
    replaced the first, and the first run's ref no longer matched the file it then read. The
    first commit of a key now stays; only force replaces it."""
    store = ArtifactStore(tmp_path)
    key = stage_key(STAGE, PARAMS, INPUTS, "1.0")

    def compute():  # another run commits the key while this one computes it
        store.write(STAGE, key, make_frame(50, shift=1), {"seconds": 1.0})
        return make_frame(50), {"seconds": 2.0}

    ref, hit = store.get_or_compute(STAGE, PARAMS, INPUTS, compute, version="1.0")
    assert not hit
    other_ref = store.lookup(STAGE, key)
    assert ref == other_ref
    pd.testing.assert_frame_equal(store.read_frame(ref), make_frame(50, shift=1))
    assert stage_dir_names(store) == {f"{key}.parquet", f"{key}.parquet.sha256"}

    forced, _ = store.get_or_compute(STAGE, PARAMS, INPUTS, compute, version="1.0", force=True)
    pd.testing.assert_frame_equal(store.read_frame(forced), make_frame(50))


def test_fingerprint_frame_follows_the_rows_not_the_bytes():
    text = "a,b,label\n1,x,yes\n2.5,,no\n"
    lf = pd.read_csv(io.StringIO(text))
    crlf = pd.read_csv(io.BytesIO(text.replace("\n", "\r\n").encode()))
    quoted = pd.read_csv(io.StringIO('"a","b","label"\n1.0,"x","yes"\n2.50,,"no"\n'))
    assert fingerprint_frame(lf) == fingerprint_frame(crlf) == fingerprint_frame(quoted)

    assert fingerprint_frame(lf.iloc[::-1]) != fingerprint_frame(lf)  # row order
    assert fingerprint_frame(lf.rename(columns={"b": "c"})) != fingerprint_frame(lf)
    assert fingerprint_frame(lf.assign(a=[1.0, 2.6])) != fingerprint_frame(lf)
    assert fingerprint_frame(lf.assign(b=["x", "y"])) != fingerprint_frame(lf)  # a filled blank
    assert fingerprint_frame(lf.astype({"a": "float32"})) != fingerprint_frame(lf)  # dtype


def test_a_file_copied_in_under_another_key_is_not_trusted(tmp_path):
    """Two pipelines' set_cover files swapped, sidecars included, were trusted: training
    crashed with a bare KeyError (and with the same columns would have used the other's
    rules)."""
    import shutil

    store = ArtifactStore(tmp_path / "store")
    first = store.write(STAGE, "a" * 64, make_frame(20))
    second = store.write(STAGE, "b" * 64, make_frame(30, shift=5))
    for suffix in ("", ".sha256"):
        shutil.copy(second.path + suffix, first.path + suffix)
    assert store.lookup(STAGE, "b" * 64) is not None
    assert store.lookup(STAGE, "a" * 64) is None  # moved aside, to be recomputed
    assert not os.path.exists(first.path)


def test_a_cache_hit_marks_its_file_used_so_prune_keeps_what_a_run_in_progress_reads(tmp_path):
    """prune's --min-age-hours looked at when a file was written: a run in progress reading a
    two-day-old stage had 43 of its 48 files pruned under it."""
    from libre_lib.ops.cleanup import prune_store

    store = ArtifactStore(tmp_path)
    ref = store.write(STAGE, KEY, make_frame(), {"pipeline": "p"})
    runs = tmp_path / "runs" / "p" / "20200101-000000-aaaaaaaaaaaa"
    runs.mkdir(parents=True)
    (runs / "run.json").write_text(json.dumps({"stages": [{"path": f"{STAGE}/other.parquet"}]}))
    two_days = time.time() - 2 * 86400
    os.utime(ref.path, (two_days, two_days))
    assert store.lookup(STAGE, KEY) == ref  # a run's cache hit
    assert os.path.getmtime(ref.path) > time.time() - 60
    assert prune_store(tmp_path, "p", keep_runs=1, dry_run=True).stage_files == ()
    os.utime(ref.path, (two_days, two_days))  # not used since: prune may take it
    assert [Path(p).name for p in prune_store(tmp_path, "p", dry_run=True).stage_files] == [
        f"{KEY}.parquet"
    ]
