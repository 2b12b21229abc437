"""Reading a pipeline's data: a header that repeats a column name is refused, not renamed; a
directory source reads its data files only."""

import gzip
from pathlib import Path

import pandas as pd
import pytest

from libre_lib.errors import DataError
from libre_lib.ops.sources import fingerprint_source, read_source, source_files


def write(tmp_path, text: str, name: str = "data.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_repeated_header_name_is_refused_with_the_columns_named(tmp_path):
    # the story: pandas renamed the second 'a' to 'a.1', and the model trained on a column
    # nobody had named
    location = write(tmp_path, "a,b,a,c,b\n1,2,3,4,5\n6,7,8,9,10\n")
    with pytest.raises(DataError) as exc:
        read_source(location, "csv")
    message = str(exc.value)
    assert "repeats column names in its header: 'a' (columns 1, 3), 'b' (columns 2, 5)" in message
    assert "Rename them" in message and "'a.1'" in message


def test_the_header_is_read_with_the_spec_s_read_options(tmp_path):
    location = write(tmp_path, "# exported 2024-05-01\nx;y;x\n1;2;3\n")
    with pytest.raises(DataError, match=r"'x' \(columns 1, 3\)"):
        read_source(location, "csv", {"sep": ";", "skiprows": 1})
    location = write(tmp_path, "title line\nx,y,x\n1,2,3\n", "header1.csv")
    with pytest.raises(DataError, match=r"'x' \(columns 1, 3\)"):
        read_source(location, "csv", {"header": 1})
    location = write(tmp_path, "id,x,x\n7,2,3\n", "indexed.csv")
    with pytest.raises(DataError, match=r"'x' \(columns 2, 3\)"):
        read_source(location, "csv", {"index_col": 0})


def test_names_that_only_look_renamed_are_kept(tmp_path):
    location = write(tmp_path, "a,a.1,v2.0\n1,2,3\n")
    frame = read_source(location, "csv")
    assert list(frame.columns) == ["a", "a.1", "v2.0"]
    # names given in read_options replace the header: pandas checks those itself
    renamed = read_source(write(tmp_path, "a,a\n1,2\n", "n.csv"), "csv", {"names": ["p", "q"]})
    assert list(renamed.columns) == ["p", "q"]


def test_a_compressed_csv_header_is_checked_too(tmp_path):
    path = tmp_path / "data.csv.gz"
    path.write_bytes(gzip.compress(b"k,m,k\n1,2,3\n"))
    with pytest.raises(DataError, match=r"'k' \(columns 1, 3\)"):
        read_source(str(path), "csv")


def test_a_directory_source_reads_data_files_only_and_fingerprints_what_it_reads(tmp_path):
    data = tmp_path / "data"
    (data / "2026").mkdir(parents=True)
    (data / "a.csv").write_text("x,target\n1,1\n")
    (data / "2026" / "b.csv").write_text("x,target\n2,0\n")
    before = fingerprint_source(str(data), "csv")
    # what a directory of exports also holds: notes, markers, hidden partial uploads
    (data / "README.txt").write_text("see the docs\n")
    (data / "_SUCCESS").write_text("")
    (data / ".partial-upload.csv").write_text("x,target\n99,1\n")
    (data / "_tmp").mkdir()
    (data / "_tmp" / "c.csv").write_text("x,target\n3,1\n")
    assert source_files(str(data), "csv") == [str(data / "2026" / "b.csv"), str(data / "a.csv")]
    assert fingerprint_source(str(data), "csv") == before
    (data / "a.csv").write_text("x,target\n1,0\n")  # a data file that changes does count
    assert fingerprint_source(str(data), "csv") != before
    with pytest.raises(DataError, match=r"holds no parquet file .* not starting with '\.' or '_'"):
        source_files(str(data), "parquet")


def test_whole_numbers_with_blanks_read_as_text_alike_from_csv_and_parquet(tmp_path):
    """A categorical column of whole numbers with a blank is int64 with nulls in Parquet (as
    pyarrow, Spark or DuckDB write it), which pandas reads as floats: its text was "62.0"
    where the CSV's is "62", so the same data split, learned and scored otherwise."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "year": pa.array([62, None, 65, 70], pa.int64()),
            "ratio": pa.array([0.5, 1.0, None, 2.0], pa.float64()),
            "y": ["a", "b", "a", "b"],
        }
    )
    pq.write_table(table, tmp_path / "data.parquet")
    (tmp_path / "data.csv").write_text("year,ratio,y\n62,0.5,a\n,1.0,b\n65,,a\n70,2.0,b\n")
    text = ["year", "ratio", "y"]
    from_parquet = read_source(str(tmp_path / "data.parquet"), "parquet", {}, text)
    from_csv = read_source(str(tmp_path / "data.csv"), "csv", {}, ["year", "y"])
    assert from_parquet["year"].tolist() == ["62", None, "65", "70"]
    assert from_parquet["year"].tolist() == from_csv["year"].tolist()
    assert from_parquet["ratio"].tolist() == ["0.5", "1.0", None, "2.0"]  # floats: as read
    assert pd.isna(from_csv["year"][1])
    import fsspec  # a file at a URL, read in memory: alike

    fsspec.filesystem("memory").pipe("/whole.parquet", (tmp_path / "data.parquet").read_bytes())
    remote = read_source("memory://whole.parquet", "parquet", {}, text)
    assert remote["year"].tolist() == ["62", None, "65", "70"]
    # a streamed run reads the file in batches: alike
    from libre_lib.ops.batches import plan_parts, read_batches

    (part,) = plan_parts(str(tmp_path / "data.parquet"), "parquet", 100)
    ((_, batch),) = read_batches(part, "parquet", ["year", "y"], ["year", "y"], 100)
    assert batch["year"].tolist() == ["62", None, "65", "70"]


def test_a_pipe_is_named_as_such_not_as_missing(tmp_path):
    """`mkfifo data.csv` was reported as "does not exist"."""
    import os

    from libre_lib.ops.scoring import list_inputs

    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="is not a regular file"):
        read_source(str(fifo), "csv")
    with pytest.raises(DataError, match="is not a regular file"):
        list_inputs(str(fifo))


def test_a_store_inside_a_streamed_data_folder_is_refused(tmp_path):
    """The second run read the store's own Parquet files as data ("has no column(s)
    ['age', ...]")."""
    import shutil

    from libre_flows.flows.train import preflight
    from libre_lib.errors import SpecError

    folder = tmp_path / "parts"
    folder.mkdir()
    shutil.copy(Path(__file__).parents[2] / "libre_lib" / "datasets" / "haberman.csv", folder)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: h\ndata: {path: parts}\ntarget: {column: target, positive_class: '2'}\n"
        "store: parts/store\n"
    )
    with pytest.raises(SpecError, match="is inside the data folder"):
        preflight(spec)
    assert preflight(spec, str(tmp_path / "elsewhere")).name == "h"  # --store moves it
    with pytest.raises(SpecError, match="is inside the data folder"):
        preflight(spec, str(folder / "store"))
    assert preflight(spec, str(folder / ".libre-store")).name == "h"  # the reader skips it
    spec.write_text(spec.read_text().replace("store: parts/store", "store: elsewhere"))
    assert preflight(spec).name == "h"


def test_a_store_that_cannot_be_written_is_refused_before_the_run(tmp_path, monkeypatch):
    """A read-only store failed `libre train` with "[Errno 30] Read-only file system:
    .../models/haberman/.lock", another pipeline's lock."""
    import os

    from libre_flows.flows.train import preflight
    from libre_lib.errors import ArtifactError

    data = Path(__file__).parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    (tmp_path / "haberman.csv").write_bytes(data.read_bytes())
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: h\ndata: {path: haberman.csv}\ntarget: {column: target, positive_class: '2'}\n"
        "store: store\n"
    )
    (tmp_path / "store").mkdir()
    assert preflight(spec).name == "h"
    read_only = str(tmp_path / "store")
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if str(p) == read_only else real(p, mode)
    )
    with pytest.raises(ArtifactError, match=r"The store .*store' cannot be written \(.*read-only"):
        preflight(spec)
    # `libre validate` says what it writes there, not what training writes
    said = "validation writes the stages that load and check the data there"
    with pytest.raises(ArtifactError, match=said) as caught:
        preflight(spec, writes=said)
    assert "training" not in str(caught.value)
    assert preflight(spec, str(tmp_path / "new" / "store")).name == "h"  # made under tmp_path


def test_files_a_data_folder_holds_but_no_run_reads_are_named(tmp_path):
    """A part-8.csv.xz and a Hive part without a suffix in a folder of CSV parts were left out
    of training without a word: 100,000 of 450,000 rows."""
    from libre_lib.ops.sources import DATA_SUFFIXES, unread_files

    (tmp_path / "sub").mkdir()
    for name in ("part-0.csv", "part-8.csv.xz", "sub/000000_0", ".hidden", "_SUCCESS"):
        (tmp_path / name).write_text("a\n1\n")
    note = unread_files(str(tmp_path), DATA_SUFFIXES["csv"])
    assert note.startswith(f"2 file(s) in {str(tmp_path)!r} are not read (names not ending in")
    assert note.split("): ")[1].startswith("part-8.csv.xz, sub/000000_0. Convert them")
    assert unread_files(str(tmp_path / "part-0.csv"), DATA_SUFFIXES["csv"]) is None
    (tmp_path / "part-8.csv.xz").unlink()
    (tmp_path / "sub" / "000000_0").unlink()
    assert unread_files(str(tmp_path), DATA_SUFFIXES["csv"]) is None


def test_a_dask_address_where_no_scheduler_answers_is_named_before_the_run(tmp_path):
    """runner.address of a scheduler that is not there: the run waited 30 s and failed with a
    bare "Timed out trying to connect to tcp://127.0.0.1:8111 after 30 s"."""
    import asyncio
    import socket

    from libre_flows.flows.train import preflight
    from libre_lib.errors import SpecError

    data = Path(__file__).parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    (tmp_path / "haberman.csv").write_bytes(data.read_bytes())
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    spec = tmp_path / "s.yaml"

    def write(address: str) -> Path:
        spec.write_text(
            "name: h\ndata: {path: haberman.csv}\ntarget: {column: target, positive_class: '2'}\n"
            f"runner: {{kind: dask, address: '{address}'}}\n"
        )
        return spec

    from distributed import LocalCluster

    try:  # a listener that is not a scheduler: the run waited without end, without a word
        with pytest.raises(SpecError, match=r"something listens there, but no Dask scheduler"):
            preflight(write(f"tcp://127.0.0.1:{port}"))
    finally:
        listening.close()
    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp", dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")  # the address checked
        assert preflight(write(cluster.scheduler_address)).name == "h"
        worker = next(iter(cluster.scheduler.workers))  # a worker's address: said so
        with pytest.raises(SpecError, match=r"but a Dask worker, not the scheduler"):
            preflight(write(worker))

        async def in_a_loop():  # asyncio.run cannot nest: the check runs in a thread there
            from libre_flows.flows.train import _dask_identity

            return _dask_identity(cluster.scheduler_address, 5.0)

        assert asyncio.run(in_a_loop()) == "Scheduler"
    with pytest.raises(SpecError, match=rf"runner.address 'tcp://127.0.0.1:{port}': no Dask"):
        preflight(write(f"tcp://127.0.0.1:{port}"))
    # Dask takes an address without its scheme too: it was not checked (a 30 s timeout)
    with pytest.raises(SpecError, match=rf"runner.address '127.0.0.1:{port}': no Dask"):
        preflight(write(f"127.0.0.1:{port}"))
    with pytest.raises(SpecError, match=r"'tcp://127.0.0.1' is not a scheduler address"):
        preflight(write("tcp://127.0.0.1"))  # "invalid literal for int()" before
    # an address without kind: dask ran on threads, the cluster never used
    spec.write_text(
        "name: h\ndata: {path: haberman.csv}\ntarget: {column: target, positive_class: '2'}\n"
        f"runner: {{address: 'tcp://127.0.0.1:{port}'}}\n"
    )
    with pytest.raises(SpecError, match=r"address is an option of the Dask runner, but kind"):
        preflight(spec)
    with pytest.raises(SpecError, match=r"is not a scheduler address.*in brackets"):
        preflight(write("tcp://::1:8786"))  # Dask refuses an IPv6 host without brackets
    spec.write_text(
        "name: h\ndata: {path: haberman.csv}\ntarget: {column: target, positive_class: '2'}\n"
        f"runner: {{kind: dask, address: 'tcp://127.0.0.1:{port}', n_workers: 4}}\n"
    )
    with pytest.raises(SpecError, match=r"n_workers sizes the local cluster a run starts"):
        preflight(spec)
    spec.write_text(  # the threads of workers the run does not start: ignored without a word
        "name: h\ndata: {path: haberman.csv}\ntarget: {column: target, positive_class: '2'}\n"
        f"runner: {{kind: dask, address: 'tcp://127.0.0.1:{port}', max_workers: 4}}\n"
    )
    with pytest.raises(SpecError, match=r"max_workers sets the threads of each worker of the"):
        preflight(spec)


def test_a_spec_dumped_and_read_again_is_the_same_spec(tmp_path):
    """The runner check refused every dumped spec (a dump writes address: null, n_workers: 2)."""
    from libre_lib.ops.spec import PipelineSpec, load_spec

    data = Path(__file__).parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: h\ndata: {{path: {data}}}\ntarget: {{column: target, positive_class: '2'}}\n"
        "runner: {kind: thread, n_workers: 2, address: null}\n"
    )
    loaded = load_spec(spec)
    again = PipelineSpec.model_validate(loaded.model_dump())  # refused before
    assert again.runner == loaded.runner and again.model == loaded.model


def test_a_url_whose_protocol_package_is_missing_names_the_package():
    """An s3:// path failed with a bare "ImportError: Install s3fs to access S3"."""
    import importlib.util

    from libre_lib.errors import DataError
    from libre_lib.ops.sources import fingerprint_source

    if importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed here")
    with pytest.raises(DataError, match=r"s3:// URL, and reading it needs s3fs"):
        fingerprint_source("s3://bucket/data.csv", "csv")


def test_the_tsv_parts_of_a_folder_read_with_tabs_as_a_tsv_file_does(tmp_path):
    """A folder of .tsv parts read as one column each (a spec names a .tsv file's tabs, not
    those of the parts of a folder); a separator the options give still decides."""
    from libre_lib.ops.batches import plan_parts, read_batches, source_columns

    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.tsv").write_text("x\ty\n1\tno\n2\tyes\n")
    (tmp_path / "parts" / "b.tsv").write_text("x\ty\n3\tyes\n")
    folder = str(tmp_path / "parts")
    assert source_columns(folder, "csv") == ["x", "y"]
    parts = plan_parts(folder, "csv", 100)
    rows = [b for p in parts for _, b in read_batches(p, "csv", ["x", "y"], ["y"], 100)]
    assert pd.concat(rows)["y"].tolist() == ["no", "yes", "yes"]
    assert read_source(parts[0].path, "csv")["x"].tolist() == [1, 2]
    assert source_columns(folder, "csv", {"sep": ","}) == ["x\ty"]


def test_a_part_without_a_column_the_spec_reads_is_named_not_blamed_on_the_format(tmp_path):
    """It said "Usecols do not match columns ... Check the file and data.format /
    data.read_options in the spec"."""
    from libre_lib.ops.batches import plan_parts, read_batches

    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.csv").write_text("x,z,y\n1,5,no\n2,6,yes\n")
    (tmp_path / "parts" / "b.csv").write_text("x,y\n3,yes\n")
    parts = plan_parts(str(tmp_path / "parts"), "csv", 100)
    with pytest.raises(DataError, match=r"^Data file '.*b\.csv' has no column\(s\) \['z'\], which"):
        for part in parts:
            list(read_batches(part, "csv", ["x", "z", "y"], ["y"], 100))
    # a part written with another separator reads as one column: the error says which
    (tmp_path / "parts" / "b.csv").write_text("x;z;y\n3;7;yes\n")
    with pytest.raises(DataError, match=r"seem separated by ';', not commas"):
        for part in parts:
            list(read_batches(part, "csv", ["x", "z", "y"], ["y"], 100))


def test_parquet_markers_read_as_a_csv_reads_them(tmp_path):
    """Parquet sources could not read na_values at all; read now as read_csv reads them: a
    number in any spelling in a text column, exactly in an integer column (2**53 + 1 is not
    2**53), a text column left with numbers alone as numbers, unless it is declared text."""
    from libre_lib.errors import SpecError
    from libre_lib.ops.sources import mark_missing

    frame = pd.DataFrame(
        {
            "big": pd.array([2**53, 2**53 + 1, 7], dtype="Int64"),
            "v": ["63", "?", "70"],
            "code": ["1", "0.0", "2"],
            "word": ["a", "0", "b"],
        }
    )
    path = tmp_path / "f.parquet"
    frame.to_parquet(path)
    read = read_source(str(path), "parquet", {"na_values": ["?", 0, 2**53 + 1]}, ["code"])
    assert read["big"].isna().tolist() == [False, True, False]
    assert read["v"].tolist()[::2] == [63, 70] and pd.api.types.is_numeric_dtype(read["v"])
    assert read["code"].isna().tolist() == [False, True, False]  # "0.0" is 0, and stays text
    assert read["word"].isna().tolist() == [False, True, False]
    per_column = mark_missing(frame, {"word": ["a"], "absent": ["x"]})
    assert per_column["word"].isna().tolist() == [True, False, False]
    assert per_column["v"].tolist() == ["63", "?", "70"]
    with pytest.raises(SpecError, match=r"\['sep'\] are options of CSV files"):
        read_source(str(path), "parquet", {"sep": ";"})


def test_identical_parts_are_named_but_not_parts_of_a_header_alone(tmp_path):
    from libre_lib.ops.sources import DATA_SUFFIXES, identical_files

    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    (tmp_path / "b.csv").write_text("x,y\n")
    (tmp_path / "c.csv").write_text("x,y\n")
    assert identical_files(str(tmp_path), DATA_SUFFIXES["csv"]) is None
    (tmp_path / "d.csv").write_text("x,y\n1,2\n")
    note = identical_files(str(tmp_path), DATA_SUFFIXES["csv"])
    assert note.startswith("1 data file(s) in ") and ": a.csv = d.csv. Their rows" in note


def test_a_folder_whose_files_disagree_on_a_columns_type_reads_it_as_text(tmp_path):
    """Ages as numbers in one file and with a "?" in the other were an object column of ints
    and texts, which the load stage could not store ("Conversion failed for column age"): read
    whole, the column is text in every file, as one file holding both reads it."""
    import pyarrow as pa

    (tmp_path / "p1.csv").write_text("age,y\n30,a\n41,b\n")
    (tmp_path / "p2.csv").write_text("age,y\n?,a\n52,b\n")
    read = read_source(str(tmp_path), "csv")
    assert read["age"].tolist() == ["30", "41", "?", "52"]
    pa.Table.from_pandas(read)  # storable
    (tmp_path / "one").mkdir()
    pd.DataFrame({"age": [30, 41], "y": ["a", "b"]}).to_parquet(tmp_path / "one" / "p1.parquet")
    pd.DataFrame({"age": ["?", "52"], "y": ["a", "b"]}).to_parquet(tmp_path / "one" / "p2.parquet")
    assert read_source(str(tmp_path / "one"), "parquet")["age"].tolist() == ["30", "41", "?", "52"]
