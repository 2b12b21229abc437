"""`libre init`: a first spec for a data file, with clear errors and nothing overwritten."""

import re
import warnings
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from libre_flows.flows.cli import app
from libre_lib.ops.sources import csv_dialect
from libre_lib.ops.spec import load_spec

runner = CliRunner()


def _data(folder: Path) -> Path:
    frame = pd.DataFrame(
        {"amount": [float(i % 17) for i in range(120)], "fraud": ["false", "true", "false"] * 40}
    )
    frame.to_parquet(folder / "payments.parquet", index=False)
    return folder / "payments.parquet"


def _init_spec(data: Path, target: str, out: Path):
    """`libre init DATA --target TARGET -o OUT`, which must succeed: its output and the spec."""
    result = runner.invoke(
        app, ["init", str(data), "--target", target, "-o", str(out)], terminal_width=300
    )
    assert result.exit_code == 0, result.output
    return result.output, load_spec(out)


def test_init_writes_a_spec_load_spec_reads(tmp_path):
    data = _data(tmp_path)
    out = tmp_path / "specs" / "pay.yaml"
    result = runner.invoke(app, ["init", str(data), "--target", "fraud", "-o", str(out)])
    assert result.exit_code == 0, result.output
    spec = load_spec(out)
    assert spec.name == "payments" and spec.target.positive_class == "true"
    assert spec.data.path == "../payments.parquet"
    assert spec.data_location() == str(data.resolve())
    # the store where `libre score` and `libre models` look: the folder init ran in
    assert spec.store_location() == str((Path.cwd() / ".libre-store").resolve())
    assert re.search(
        r"positive class 'true' \(\d+\.\d% of the rows read: it reads as yes", result.output
    )
    assert "next: libre validate" in result.output


def test_init_errors_name_the_problem_and_write_nothing(tmp_path):
    data = _data(tmp_path)
    for args, message in [
        (["--target", "Fraud"], "--target 'Fraud' is not a column of the data"),
        ([], "the only column of two values in the rows read is 'fraud' (--target fraud)"),
        (["--target", "fraud", "--positive", "yes"], "--positive 'yes' is not a value"),
        (["--target", "fraud", "--name", "Pay Ments"], "name"),
    ]:
        result = runner.invoke(app, ["init", str(data), *args], terminal_width=300)
        assert result.exit_code == 1 and message in result.output, result.output
        assert "Traceback" not in result.output
    result = runner.invoke(app, ["init", str(tmp_path / "nope.csv"), "--target", "x"])
    assert result.exit_code == 1 and "does not exist" in result.output
    (tmp_path / "empty").mkdir()  # no spec yet: the error speaks of the folder, not data.path
    result = runner.invoke(
        app, ["init", str(tmp_path / "empty"), "--target", "x"], terminal_width=300
    )
    assert (
        result.exit_code == 1
        and "is a directory without .csv or .parquet files: give a data file" in result.output
    )
    assert "data.path" not in result.output
    assert not list(tmp_path.glob("*.yaml"))


def test_init_reads_a_directory_of_parts(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    frame = pd.DataFrame({"x": [float(i) for i in range(90)], "y": ["a", "a", "b"] * 30})
    for k in range(3):
        frame.iloc[30 * k : 30 * (k + 1)].to_csv(parts / f"part-{k}.csv", index=False)
    out = tmp_path / "parts.yaml"
    result = runner.invoke(app, ["init", str(parts), "--target", "y", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "written from the first 30 rows" in out.read_text()  # the first part's
    spec = load_spec(out)
    assert spec.target.positive_class == "b" and spec.data.resolved_format() == "csv"


def test_init_reads_a_question_mark_among_numbers_as_missing(tmp_path):
    rows = ["age,sex,y"] + [f"{20 + i % 40},{'mf'[i % 2]},{'ny'[i % 3 == 0]}" for i in range(80)]
    rows[5] = "?,m,n"
    (tmp_path / "raw.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "raw.yaml"
    result = runner.invoke(
        app, ["init", str(tmp_path / "raw.csv"), "--target", "y", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "read as missing: '?' (among the numbers of age)" in result.output
    spec = load_spec(out)
    assert spec.data.read_options == {"na_values": ["?"]}
    assert spec.features.categorical == ["sex"]  # age is a column of numbers


def test_init_reads_a_semicolon_csv_with_decimal_commas_and_says_so(tmp_path):
    frame = pd.DataFrame(
        {"amount": [i % 17 + 0.25 for i in range(120)], "fraud": ["false", "true", "false"] * 40}
    )
    frame.to_csv(tmp_path / "payments.csv", index=False, sep=";", decimal=",")
    output, spec = _init_spec(tmp_path / "payments.csv", "fraud", tmp_path / "pay.yaml")
    assert "read with separator ';' and a decimal comma" in output
    assert spec.data.read_options == {"sep": ";", "decimal": ","}
    assert spec.features.include == ["amount"] and spec.features.categorical == []


def test_init_reads_points_between_thousands_beside_a_decimal_comma(tmp_path):
    """4.299,90: read as text, the one column with the signal was left out as an id."""
    income = [500 + 37.5 * i for i in range(200)]
    written = [f"{v:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".") for v in income]
    assert "4.212,50" in written
    frame = pd.DataFrame({"income": written, "target": [int(v > 2500) for v in income]})
    frame.to_csv(tmp_path / "eu.csv", index=False, sep=";")
    output, spec = _init_spec(tmp_path / "eu.csv", "target", tmp_path / "eu.yaml")
    assert "decimal comma (points between thousands)" in output
    assert spec.data.read_options == {"sep": ";", "decimal": ",", "thousands": "."}
    assert spec.features.include == ["income"] and spec.features.categorical == []
    read = pd.read_csv(tmp_path / "eu.csv", **spec.data.read_options)
    assert read["income"].tolist() == income


def test_init_reads_points_between_thousands_without_a_decimal_comma(tmp_path):
    """12.475;800: read with the point as a decimal mark, 12,475 inhabitants were 12.475 and
    sorted below 800, and the rules cut at 40 instead of 40,000."""
    people = [500 + 997 * i for i in range(120)]
    written = [f"{v:,}".replace(",", ".") for v in people]
    assert "1.497" in written and "500" in written
    frame = pd.DataFrame(
        {"people": written, "grant": ["ja" if v < 40_000 else "nein" for v in people]}
    )
    frame["share"] = [f"{i % 50}" for i in range(120)]
    frame.to_csv(tmp_path / "towns.csv", index=False, sep=";")
    output, spec = _init_spec(tmp_path / "towns.csv", "grant", tmp_path / "towns.yaml")
    assert "points between thousands (12.475 is twelve thousand)" in output
    assert spec.data.read_options == {"sep": ";", "thousands": "."}
    read = pd.read_csv(tmp_path / "towns.csv", **spec.data.read_options)
    assert read["people"].tolist() == people
    # a column of decimal points keeps the point a decimal mark
    frame.assign(share=[f"{i % 50}.25" for i in range(120)]).to_csv(
        tmp_path / "mixed.csv", index=False, sep=";"
    )
    _, spec = _init_spec(tmp_path / "mixed.csv", "grant", tmp_path / "mixed.yaml")
    assert spec.data.read_options == {"sep": ";"}
    # weights with three decimals beside whole numbers: 0.250 is no thousand
    weights = frame.assign(people=[f"{i % 3}.250" if i % 2 else str(i % 3) for i in range(120)])
    weights.to_csv(tmp_path / "weights.csv", index=False, sep=";")
    assert csv_dialect(str(tmp_path / "weights.csv")) == {"sep": ";"}
    # and a file in a Windows encoding is probed in it
    frame.assign(town="Orléans").to_csv(
        tmp_path / "cp.csv", index=False, sep=";", encoding="cp1252"
    )
    assert csv_dialect(str(tmp_path / "cp.csv"), encoding="cp1252") == {
        "sep": ";",
        "thousands": ".",
    }


def test_init_names_columns_that_may_hold_codes(tmp_path):
    data = tmp_path / "visits.csv"
    pd.DataFrame(
        {"region": [3, 6, 7] * 40, "amount": [float(i % 17) for i in range(120)], "y": [0, 1] * 60}
    ).to_csv(data, index=False)
    out = tmp_path / "visits.yaml"
    args = ["init", str(data), "--target", "y", "-o", str(out)]
    result = runner.invoke(app, args, terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "few whole numbers, codes?: region (read as numbers;" in result.output
    assert "amount" not in result.output.split("codes?")[1]


def test_init_refuses_a_name_the_store_registers_for_other_data(tmp_path, monkeypatch):
    """Two files called data.csv: the second spec would have taken over the first pipeline's
    name, and a run its champion. init says so, and --name settles it either way."""
    from libre_lib import LibreClassifier
    from libre_lib.ops.registry import ModelRegistry
    from libre_lib.ops.sources import fingerprint_source

    monkeypatch.chdir(tmp_path)
    data = _data(tmp_path)
    frame = pd.read_parquet(data)
    with warnings.catch_warnings():  # the model only fills the registry
        warnings.simplefilter("ignore")
        model = LibreClassifier(random_state=0, max_rules=1).fit(frame[["amount"]], frame["fraud"])
    ModelRegistry(tmp_path / ".libre-store").register(
        "payments", model.to_json(), spec={"name": "payments", "data": {"path": "old/pay.csv"}},
        metrics={"f1": 0.5}, validation={"success": True}, data_fingerprint="d" * 64,
        spec_hash="s" * 64, run_id="run-1",
    )  # fmt: skip
    result = runner.invoke(app, ["init", str(data), "--target", "fraud"], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert "already holds a pipeline named 'payments'" in result.output
    assert "trained on old/pay.csv" in result.output and "Pass --name" in result.output
    assert not (tmp_path / "payments.yaml").exists()
    for name in ("payments", "payments-2"):  # continue that one, or name a new one
        result = runner.invoke(app, ["init", str(data), "--target", "fraud", "--name", name])
        assert result.exit_code == 0, result.output
    # the same data as a registered version, whatever path a spec wrote: no question
    ModelRegistry(tmp_path / ".libre-store").register(
        "payments", model.to_json(),
        spec={"name": "payments", "data": {"path": "../elsewhere/payments.parquet"}},
        metrics={"f1": 0.5}, validation={"success": True},
        data_fingerprint=fingerprint_source(str(data), "parquet"),
        spec_hash="t" * 64, run_id="run-2",
    )  # fmt: skip
    result = runner.invoke(app, ["init", str(data), "--target", "fraud", "--force"])
    assert result.exit_code == 0, result.output
    # the same path as a spec wrote it, other data (two folders' data.parquet): refused
    other = tmp_path / "b" / data.name
    other.parent.mkdir()
    frame.iloc[::2].to_parquet(other)
    args = ["init", str(other), "--target", "fraud", "-o", str(other.parent / "payments.yaml")]
    result = runner.invoke(app, args, terminal_width=300)
    assert result.exit_code == 1 and "already holds a pipeline named 'payments'" in result.output


def test_init_names_the_datas_problem_before_an_existing_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = _data(tmp_path)
    (tmp_path / "payments.yaml").write_text("name: payments\n")
    result = runner.invoke(app, ["init", str(data), "--target", "nope"], terminal_width=300)
    assert result.exit_code == 1 and "--target 'nope' is not a column" in result.output
    result = runner.invoke(app, ["init", str(data), "--target", "fraud"], terminal_width=300)
    assert result.exit_code == 1 and "payments.yaml exists: --force" in result.output
    assert (tmp_path / "payments.yaml").read_text() == "name: payments\n"


def test_init_refuses_target_values_that_differ_only_by_spaces(tmp_path):
    """ " Yes" and "Yes " were two classes: one became the positive class and the other's 99
    rows were learned as the negative answer."""
    frame = pd.DataFrame(
        {"age": range(120), "churned": ([" Yes"] * 33 + ["Yes "] + ["No"] * 26) * 2}
    )
    frame.to_csv(tmp_path / "ws.csv", index=False)
    out = tmp_path / "ws.yaml"
    result = runner.invoke(
        app, ["init", str(tmp_path / "ws.csv"), "--target", "churned", "-o", str(out)],
        terminal_width=300,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "(spaces, case or number format): ' Yes' (66 rows), 'Yes ' (2 rows)" in result.output
    assert "Traceback" not in result.output and not out.exists()
    # a few rows spelled in other case: the rare spelling was taken as the positive class
    cased = ["yes"] * 43 + ["Yes"] * 2 + ["no"] * 53 + ["NO"] * 2
    frame.assign(churned=cased + cased[:20]).to_csv(tmp_path / "case.csv", index=False)
    result = runner.invoke(
        app, ["init", str(tmp_path / "case.csv"), "--target", "churned", "-o", str(out)],
        terminal_width=300,
    )  # fmt: skip
    said = "(spaces, case or number format): 'yes' (63 rows), 'Yes' (2 rows)"
    assert result.exit_code == 1 and said in result.output and ".str.lower() on it" in result.output
    assert not out.exists()


def test_init_reads_a_csv_written_in_a_windows_encoding_and_says_so(tmp_path):
    """'utf-8' codec can't decode byte 0xe9, about a spec that did not exist yet."""
    rows = "".join(
        f"{['Orléans', 'Paris', 'Besançon'][i % 3]},{20 + i},{i % 2}\n" for i in range(60)
    )
    (tmp_path / "towns.csv").write_bytes(("ville,age,target\n" + rows).encode("cp1252"))
    output, spec = _init_spec(tmp_path / "towns.csv", "target", tmp_path / "towns.yaml")
    assert "read with cp1252 text (not UTF-8)" in output
    assert spec.data.read_options == {"encoding": "cp1252"}
    read = pd.read_csv(tmp_path / "towns.csv", **spec.data.read_options)
    assert set(read["ville"]) == {"Orléans", "Paris", "Besançon"}


def test_init_prints_markup_and_escape_codes_from_the_data_as_text(tmp_path):
    """A class named '[/bad]' crashed `libre init` with rich's MarkupError after it had written
    the spec; '[bold red]APPROVED[/]' printed as a restyled APPROVED; an ESC sequence in a
    column name set the terminal's title."""
    n = 120
    frame = pd.DataFrame(
        {
            "amount": [float(i % 17) for i in range(n)],
            "id\x1b]0;PWNED\x07": range(n),
            "[link=https://evil.example]outcome[/link]": ["ok", "ok", "ok", "[/bad]"] * (n // 4),
        }
    )
    data = tmp_path / "odd.csv"
    frame.to_csv(data, index=False)
    target = "[link=https://evil.example]outcome[/link]"
    out = tmp_path / "odd.yaml"
    result = runner.invoke(
        app, ["init", str(data), "--target", target, "-o", str(out)], terminal_width=300
    )
    assert result.exit_code == 0, result.output
    assert f"target {target!r}, positive class '[/bad]'" in result.output
    assert "\x1b" not in result.output and "left out: id\\x1b]0;PWNED\\x07" in result.output
    assert load_spec(out).target.positive_class == "[/bad]"
