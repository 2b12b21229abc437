"""The search inside the pipeline: mapped ``tune`` tasks and ``pick`` (haberman, 10 learners)."""

import warnings
from pathlib import Path

import pandas as pd
import pytest
from prefect import Task

from libre_flows.flows.train import train
from libre_lib import LibreClassifier
from libre_lib.estimator import AUTO_CHOSEN
from libre_lib.ops import stages
from libre_lib.ops.spec import load_spec


def _stages(summary, name=None):
    return [s for s in summary["stages"] if name is None or s["stage"] == name]


def _recomputed(summary):
    return {s["stage"] for s in summary["stages"] if not s["cache_hit"]}


def _search_beside_the_run(spec_path, summary):
    """The spec, the run's training rows, the spec's search fitted on them and the model the
    run shipped."""
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    X, y = stages.split_rows(spec, data, holdout)
    search = stages.search(spec).fit(X, y)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    return spec, X, y, search, model


def _library_beside_the_run(spec_path, summary):
    """The spec's ``LibreClassifier`` fitted on the run's training rows, and the model the run
    shipped."""
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    X, y = stages.split_rows(spec, data, holdout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        library = stages.estimator(spec).fit(X, y)
    return library, LibreClassifier.from_json(Path(summary["model"]).read_text())


@pytest.fixture(scope="module")
def tuned_run(tmp_path_factory, write_spec):
    spec = write_spec(tmp_path_factory.mktemp("tuning"), tuning__enabled=True, tuning__refine="f1")
    return spec, train(spec), train(spec)


def test_the_pipeline_model_is_the_searchs_refit_on_the_same_rows(tuned_run):
    spec_path, summary, _ = tuned_run
    spec, X, y, search, model = _search_beside_the_run(spec_path, summary)
    assert model.rules_ == search.best_estimator_.rules_
    assert model.get_params()["alpha"] == search.best_estimator_.alpha
    # the refit's boundary refinement ran in the flow too (it moves a cut point here)
    assert model.refine == "f1"
    unrefined = stages.search(spec).set_params(refine=None).fit(X, y).best_estimator_
    assert unrefined.rules_ != model.rules_
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    assert len(picked) == len(search.cv_results_["params"])
    assert picked["chosen"].sum() == 1 and picked["chosen"].idxmax() == search.best_index_
    assert picked["mean_score"].tolist() == pytest.approx(search.cv_results_["mean_test_score"])


def test_one_tune_task_per_fold_and_bin_cap_with_a_readable_name(tuned_run):
    spec_path, summary, _ = tuned_run
    names = [s["stage"] for s in summary["stages"]]
    n_tune = len(_stages(summary, "tune"))
    assert names[:3] == ["load", "validate", "split"]
    assert names[3 : 3 + n_tune + 2] == [*["tune"] * n_tune, "pick", "choose"]
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    units = stages.tuning_units(spec, *stages.split_rows(spec, data, holdout))
    assert n_tune == len(units) == 5 * len({u["max_intervals"] for u in units}) == 10
    from libre_flows.tasks import tuning

    tasks = [t for t in vars(tuning).values() if isinstance(t, Task)]
    assert {t.name for t in tasks} == {"tune", "pick"}
    assert all(t.name == t.fn.__name__ for t in tasks)


def test_an_unchanged_rerun_recomputes_nothing(tuned_run):
    _, _, again = tuned_run
    assert _recomputed(again) == set()
    assert again["cache_hits"] == again["n_stages"]


def test_changing_only_the_choice_rule_recomputes_no_tune_task_and_no_unchanged_learner(
    tuned_run, write_spec, tmp_path
):
    spec_path, first, _ = tuned_run
    import yaml

    raw = yaml.safe_load(Path(spec_path).read_text())
    raw["tuning"].update(score_tolerance=0.0, standard_errors=0.0)
    changed = Path(spec_path).with_name("haberman-best.yaml")
    changed.write_text(yaml.safe_dump(raw))
    summary = train(changed)
    recomputed = _recomputed(summary)
    assert "pick" in recomputed and "tune" not in recomputed
    first_picked = pd.read_parquet(_stages(first, "pick")[0]["path"])
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    if picked["chosen"].idxmax() == first_picked["chosen"].idxmax():
        assert recomputed == {"pick"}  # the same point: every later stage is a cache hit


def test_changing_only_refine_recomputes_pick_and_set_cover_alone(tuned_run):
    spec_path, first, _ = tuned_run
    import yaml

    raw = yaml.safe_load(Path(spec_path).read_text())
    raw["tuning"]["refine"] = None
    changed = Path(spec_path).with_name("haberman-unrefined.yaml")
    changed.write_text(yaml.safe_dump(raw))
    summary = train(changed)
    assert _recomputed(summary) == {"pick", "set_cover", "report"}  # no tune task, no learner
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    shipped = LibreClassifier.from_json(Path(first["model"]).read_text())
    assert model.refine is None and model.rules_ != shipped.rules_
    cover = pd.read_parquet(_stages(summary, "set_cover")[0]["path"])
    refined = pd.read_parquet(_stages(first, "set_cover")[0]["path"])
    assert cover["rule"].tolist() == refined["rule"].tolist()  # the cover's rules, unrefined
    assert refined["model_rule"].tolist() != cover["model_rule"].tolist()


def test_the_tuning_section_is_checked():
    from libre_lib.errors import SpecError
    from libre_lib.ops.spec import PipelineSpec

    base = {"name": "x", "data": {"path": "x.csv"}, "target": {"column": "y", "positive_class": 1}}
    good = PipelineSpec(**base, tuning={"grid": {"alpha": [0.5, 0.9], "max_rules": [1, 3]}})
    assert good.tuning.search_kwargs()["param_grid"] == {"alpha": [0.5, 0.9], "max_rules": [1, 3]}
    for grid, message in [
        ({"alpha": [1.5]}, "alpha: 1.5 must be a float in"),
        ({"alpha": 0.5}, "non-empty list"),
        ({"random_state": [1, 2]}, "'random_state' cannot be tuned"),
        ({"max_rules": ["auto"]}, "not 'auto'"),
        ("best", "must be .default., .paper. or lists"),
    ]:
        with pytest.raises((SpecError, ValueError), match=message):
            PipelineSpec(**base, tuning={"grid": grid})


def test_tuning_max_rules_takes_one_cap_or_the_early_stops_to_tune():
    from libre_lib.errors import SpecError
    from libre_lib.ops.spec import PipelineSpec

    base = {"name": "x", "data": {"path": "x.csv"}, "target": {"column": "y", "positive_class": 1}}
    for value in (3, [1, 2, 3, 5, 8, 13], [1, None], None):
        tuning = PipelineSpec(**base, tuning={"max_rules": value}).tuning
        assert tuning.search_kwargs()["max_rules"] == value
    for value, message in [
        ([], "list the early stops"),
        ([1, "auto"], "'auto' is not"),
        ([0, 3], "0 is not"),
        ([3, 3], "twice"),
        (0, "one cap"),
        (2.5, "one cap"),
        (True, "one cap"),
        (20_000, "one cap"),
    ]:
        with pytest.raises((SpecError, ValueError), match=message):
            PipelineSpec(**base, tuning={"max_rules": value})


def test_early_stops_listed_in_the_spec_give_the_searchs_model(tmp_path, write_spec):
    """``tuning.max_rules: [1, 13]`` tunes those early stops in the flow's tune tasks too."""
    spec_path = write_spec(
        tmp_path, tuning__grid={"alpha": [0.5, 0.9]}, tuning__max_rules=[1, 13], tuning__folds=3
    )
    summary = train(spec_path)
    *_, search, model = _search_beside_the_run(spec_path, summary)
    assert {p["max_rules"] for p in search.cv_results_["params"]} == {1, 13}
    assert model.rules_ == search.best_estimator_.rules_
    assert model.max_rules == search.best_params_["max_rules"]
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    assert len(picked) == 4
    assert picked["mean_score"].tolist() == pytest.approx(search.cv_results_["mean_test_score"])


def test_flow_runs_are_named_after_the_pipeline_and_the_data_fingerprint(tuned_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    from libre_lib.ops.artifacts import ArtifactStore

    _, summary, _ = tuned_run
    load = _stages(summary, "load")[0]
    store = ArtifactStore(Path(load["path"]).parents[1])
    sha = next(
        store.metadata(ref)["source_sha256"]
        for ref in [store.lookup("load", Path(load["path"]).stem)]
        if ref is not None
    )
    name = f"haberman-{sha[:12]}"
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))
        )
        flows = {client.read_flow(flow_id).name for flow_id in {r.flow_id for r in runs}}
    # both train() calls of the fixture (one "libre-train" run each: train() runs the pipeline
    # under that name); a deployment's run would add its "libre-train-pipeline" subflow
    assert len(runs) >= 2
    assert "libre-train" in flows and flows <= {"libre-train", "libre-train-pipeline"}


def test_the_report_shows_the_choice_and_the_score_against_rules_plot(tuned_run):
    _, summary, _ = tuned_run
    run_dir = Path(summary["run_dir"])
    markdown = (run_dir / "report.md").read_text()
    html = (run_dir / "report.html").read_text()
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    assert "How the parameters were chosen" in markdown
    assert f"{len(picked):,} combinations of parameters" in markdown
    assert 'aria-label="Inner cross-validation score against the number of rules' in html
    assert html.count("<circle") >= len(picked)  # one point per grid point (plus others)


def test_a_search_on_few_positive_rows_per_fold_says_its_choice_is_near_chance(tuned_run):
    """A fraud table's search ran on a sample holding 114 positive rows (23 per inner fold)
    and picked a point whose spurious condition halved the recall; the report said only how
    many rows it searched. (Haberman: 245 training rows, 65 of them positive.)"""
    spec_path, summary, _ = tuned_run
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    _, y = stages.split_rows(spec, data, holdout)
    n_positive = int((y.astype(str) == str(spec.target.positive_class)).sum())
    (note,) = [n for n in summary["notes"] if n.startswith("The search scored its settings")]
    assert note.startswith(
        f"The search scored its settings on the {len(y):,} training rows, holding "
        f"{n_positive:,} positive rows: about {n_positive / 5:.0f} in each inner fold's "
        "held-out part, too few for the fold scores to rank the settings reliably"
    )


def test_a_picked_point_whose_refit_keeps_no_rule_falls_back_as_the_search_does(
    tmp_path, write_spec
):
    # haberman with seed 25: the picked point kept rules in every inner fold, but its refit on
    # all the training rows keeps none (the majority guard); the search refits the next points
    # of its choice order until one keeps a rule, and so must the pipeline
    spec_path = write_spec(tmp_path, tuning__enabled=True, model__random_state=25)
    summary = train(spec_path)
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    search = stages.search(spec).fit(*stages.split_rows(spec, data, holdout))
    assert search.refit_fallbacks_ >= 1 and len(search.best_estimator_.rules_) >= 1
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert model.rules_ == search.best_estimator_.rules_
    assert model.get_params() == {**search.best_estimator_.get_params(), "n_jobs": model.n_jobs}
    # the passed-over fits are in the run's stages; the report marks the point shipped
    assert len(_stages(summary, "set_cover")) == search.refit_fallbacks_ + 1
    report = Path(summary["report"]).read_text()
    assert f"({search.refit_fallbacks_} passed over)" in report
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    assert picked["chosen"].idxmax() != search.best_index_  # pick's own choice, refitted first
    again = train(spec_path)
    assert _recomputed(again) == set()
    assert Path(again["model"]).read_text() == Path(summary["model"]).read_text()


def test_discretization_options_tuned_in_the_flow_give_the_searchs_model(tmp_path, write_spec):
    """A tuning grid with both discretization options, in a spec that asks for one range per
    numeric condition: the tune tasks score every bins, the mapped learners widen their
    points, and the shipped model is the search's refit on the same rows."""
    options = {"significant_cuts": [False, True], "merge_order": ["lowest", "sweep"]}
    grid = {**options, "max_intervals": [None], "max_rules": [1, 3]}
    spec_path = write_spec(
        tmp_path, name="pima", tuning__grid=grid, tuning__folds=3, model__contiguous=True
    )
    summary = train(spec_path)
    *_, search, model = _search_beside_the_run(spec_path, summary)
    assert model.rules_ == search.best_estimator_.rules_
    assert model.contiguous and search.best_estimator_.contiguous
    numeric = [c for r in model.rules_ for c in r.conditions if c.kind == "numeric"]
    assert numeric and all(len(c.intervals) == 1 for c in numeric)
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    assert picked["mean_score"].tolist() == pytest.approx(search.cv_results_["mean_test_score"])
    for name, values in options.items():
        assert getattr(model, name) == search.best_params_[name]
        assert {p[name] for p in search.cv_results_["params"]} == set(values)


def _churn_table(path: Path) -> Path:
    """The table a new user met (3,000 rows, 21 % churn): the signal is in support calls,
    tenure and the plan; the fee and the 60 countries are noise."""
    import numpy as np

    rng = np.random.default_rng(1)
    n = 3000
    frame = pd.DataFrame(
        {
            "plan": rng.choice(["basic", "pro", "enterprise", None], n, p=[0.5, 0.3, 0.15, 0.05]),
            "monthly_fee": np.round(rng.gamma(3, 20, n), 2),
            "support_calls": rng.poisson(2, n),
            "tenure_months": rng.integers(0, 72, n),
            "country": rng.choice([f"country_{i}" for i in range(60)], n),
        }
    )
    rng.integers(1e9, size=n)  # the draws of a free-text column the spec leaves out
    frame.loc[rng.random(n) < 0.1, "monthly_fee"] = np.nan
    calls, tenure = frame["support_calls"], frame["tenure_months"]
    logit = -2 + 0.6 * calls - 0.04 * tenure + (frame["plan"] == "basic") * 1.0
    frame["churned"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    frame.to_csv(path, index=False)
    return path


def _churn_spec(tmp_path: Path, **changes) -> Path:
    """The spec a new user wrote for the churn table (tuning on unless ``changes`` say)."""
    import yaml

    data = _churn_table(tmp_path / "churn.csv")
    spec = {
        "name": "churn",
        "data": {"path": str(data)},
        "store": str(tmp_path / "store"),
        "target": {"column": "churned", "positive_class": "yes", "classes": ["no", "yes"]},
        "features": {
            "include": ["plan", "monthly_fee", "support_calls", "tenure_months", "country"],
            "categorical": ["plan", "country"],
        },
        "model": {"random_state": 0},
        **changes,
    }
    spec_path = tmp_path / "churn.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    return spec_path


def test_when_every_accepted_refit_keeps_no_rule_the_flow_goes_beyond_the_tolerance(tmp_path):
    """A new user's churn table shipped a model with no rules: the points within the
    tolerance kept rules in every inner fold and the majority guard emptied each refit. The
    check goes on with the best points outside the tolerance (twenty-second round), in the
    flow as in ``LibreSearchCV``. (Seed 6: on this table's training rows the search passes
    over every accepted point.)"""
    spec_path = _churn_spec(tmp_path, model={"random_state": 6})
    summary = train(spec_path)
    *_, search, model = _search_beside_the_run(spec_path, summary)
    order = search.refit_order()
    accepted = len(search.choice_order())
    assert search.refit_fallbacks_ >= accepted  # every accepted point was passed over
    assert len(order) > accepted and search.best_index_ in order[accepted:]
    best = search.cv_results_["mean_test_score"].max()
    assert search.best_score_ < best - search.tolerance_
    assert len(model.rules_) >= 1 and model.rules_ == search.best_estimator_.rules_
    assert len(_stages(summary, "set_cover")) == search.refit_fallbacks_ + 1
    report = Path(summary["report"]).read_text()
    assert "none of the combinations within the tolerance did" in report
    assert f"({search.refit_fallbacks_} passed over)" in report


def test_without_tuning_the_flow_falls_back_as_libreclassifier_does(tmp_path):
    """Tuning off, the churn table: the fit of the "auto" choice keeps no rule although the
    choice kept rules in every inner fold; the flow fits the next combinations in the choice's
    order (``choose_fallback``) as ``LibreClassifier.fit`` does (twenty-fourth round), ships
    the same model and says so in the report; a re-run recomputes nothing."""
    spec_path = _churn_spec(tmp_path, tuning={"enabled": False})
    summary = train(spec_path)
    library, model = _library_beside_the_run(spec_path, summary)
    fallbacks = library.auto_fallbacks_
    assert fallbacks >= 1 and len(model.rules_) >= 1
    assert model.rules_ == library.rules_ and model.auto_fallbacks_ == fallbacks
    assert {k: getattr(model, k + "_") for k in AUTO_CHOSEN} == {
        k: getattr(library, k + "_") for k in AUTO_CHOSEN
    }
    # the choice and every fallback tried are in the run's stages; one fit each
    assert len(_stages(summary, "choose")) == 1
    assert len(_stages(summary, "choose_fallback")) == fallbacks
    assert len(_stages(summary, "set_cover")) == fallbacks + 1
    report = Path(summary["report"]).read_text()
    assert f"({fallbacks} passed over)" in report
    again = train(spec_path)
    assert _recomputed(again) == set()
    assert Path(again["model"]).read_text() == Path(summary["model"]).read_text()


def _pair_spec(tmp_path: Path, pair_data, **changes) -> Path:
    """A spec for the table whose class joins two of its twelve columns, eight learners."""
    import yaml

    X, y = pair_data
    X.assign(y=y).to_csv(tmp_path / "pairs.csv", index=False)
    spec = {
        "name": "pairs",
        "data": {"path": str(tmp_path / "pairs.csv")},
        "store": str(tmp_path / "store"),
        "target": {"column": "y", "positive_class": "yes", "classes": ["no", "yes"]},
        "features": {"include": list(X.columns)},
        **changes,
    }
    (tmp_path / "pairs.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "pairs.yaml"


def test_without_tuning_a_fit_far_below_its_inner_score_gets_more_learners_as_in_the_library(
    tmp_path, pair_data
):
    """Tuning off, eight learners, seed 15: on the run's training rows the fit of the "auto"
    choice falls far below its inner score. The flow fits the stages again with twice the
    learners as ``LibreClassifier.fit`` does (the thirty-fifth round), ships the same model,
    and the report says so; a re-run recomputes nothing."""
    model_params = {"random_state": 15, "n_estimators": 8}
    spec_path = _pair_spec(tmp_path, pair_data, model=model_params, tuning={"enabled": False})
    summary = train(spec_path)
    library, model = _library_beside_the_run(spec_path, summary)
    assert library.learner_factor_ == 2 and model.learner_factor_ == 2
    assert model.rules_ == library.rules_
    assert model.feature_subsets_ == library.feature_subsets_
    # the first fit's stages and the shipped one's, each once
    covers = {s["path"] for s in _stages(summary, "set_cover")}
    assert len(covers) == len(_stages(summary, "set_cover")) == 2
    learned = {s["path"] for s in _stages(summary, "learn")}  # the first fit's are shared
    assert len(learned) == len(_stages(summary, "learn")) == len(model.feature_subsets_)
    assert (
        f"The rules come from {len(model.feature_subsets_)} learners, drawn for 2 × n_estimators"
        in Path(summary["report"]).read_text()
    )
    assert not summary["cautions"]
    again = train(spec_path)
    assert _recomputed(again) == set()
    assert Path(again["model"]).read_text() == Path(summary["model"]).read_text()


def test_a_tuned_refit_far_below_its_inner_score_gets_more_learners_as_in_the_search(
    tmp_path, pair_data
):
    """Tuning on (one point, eight learners, seed 1, every row for training): the picked
    point's refit falls far below its mean inner F1; the flow fits it again with twice the
    learners as ``LibreSearchCV`` does (the thirty-fifth round) and ships the same model."""
    grid = {"n_estimators": [8], "alpha": [0.7], "max_intervals": [3],
            "conflict_tolerance": [0.5], "max_rules": [3]}  # fmt: skip
    spec_path = _pair_spec(
        tmp_path,
        pair_data,
        model={"random_state": 1, "n_estimators": 8},
        tuning={"grid": grid, "folds": 3},
        holdout_fraction=0,
    )
    summary = train(spec_path)
    *_, search, model = _search_beside_the_run(spec_path, summary)
    assert search.best_estimator_.learner_factor_ == 2 and model.learner_factor_ == 2
    assert model.rules_ == search.best_estimator_.rules_
    assert len({s["path"] for s in _stages(summary, "set_cover")}) == 2
    assert not summary["cautions"]


def test_without_tuning_a_fit_still_far_below_its_inner_score_is_a_caution(
    tmp_path, pair_data, monkeypatch
):
    """When no fit with more learners reaches the inner score (here none is tried), the
    shipped fit stays and the report's cautions say so: the model's JSON does not keep the
    "auto" choice's inner scores, so the report reads them from the ``choose`` stage."""
    from libre_lib import estimator

    monkeypatch.setattr(estimator, "LEARNER_FACTORS", ())
    model_params = {"random_state": 15, "n_estimators": 8}
    spec_path = _pair_spec(tmp_path, pair_data, model=model_params, tuning={"enabled": False})
    summary = train(spec_path)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert model.learner_factor_ == 1
    (caution,) = [c for c in summary["cautions"] if "far below" in c]
    assert 'with which the "auto" choice picked its settings' in caution
    assert "Train again with another random_state" in caution


def test_a_pipeline_search_below_flagging_every_row_says_so_in_the_report(tmp_path):
    """A target drawn independently of its only column: ``LibreSearchCV`` warned that no grid
    point beat flagging every row, but the same search inside the pipeline shipped its rules
    with no word in the report, the run's notes or the artifact."""
    import html

    import numpy as np
    import yaml

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300).round(3)})
    frame["target"] = np.where(rng.random(300) < 0.2, "yes", "no")
    frame.to_csv(tmp_path / "noise.csv", index=False)
    grid = {"n_estimators": [5], "max_rules": [1, 3], "max_intervals": [None], "alpha": [0.9]}
    spec = {
        "name": "noise",
        "data": {"path": str(tmp_path / "noise.csv")},
        "store": str(tmp_path / "store"),
        "target": {"column": "target", "positive_class": "yes", "classes": ["no", "yes"]},
        "features": {"include": ["a"]},
        "model": {"random_state": 0},
        "tuning": {"grid": grid | {"conflict_tolerance": [0.5]}},
    }
    spec_path = tmp_path / "noise.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    summary = train(spec_path)
    picked = pd.read_parquet(_stages(summary, "pick")[0]["path"])
    top = picked["mean_score"].max()
    # a caution under the report's header, beside the baselines' (it was the last note)
    assert not [n for n in summary["notes"] if "of flagging every row" in n]
    said = [n for n in summary["cautions"] if "of flagging every row" in n]
    assert len(said) == 1 and f"inner F1 of {top:.3f}" in said[0]
    report = Path(summary["report"]).read_text()
    assert html.escape(said[0]) in report
    assert report.index(html.escape(said[0])) < report.index("<h2>Rule set</h2>")
    # tuning off, the "auto" choice's inner scores are compared as LibreClassifier does
    spec_path.write_text(yaml.safe_dump(spec | {"tuning": {"enabled": False}}))
    summary = train(spec_path)
    said = [n for n in summary["cautions"] if "of flagging every row" in n]
    assert len(said) == 1 and said[0].startswith('The best of the "auto" choice')
    # a search whose best point beats that answer says nothing (the churn table)
    (tmp_path / "churn").mkdir()
    spec_path = _churn_spec(tmp_path / "churn")
    summary = train(spec_path)  # 500 positive rows: neither
    said = [*summary["notes"], *summary["cautions"]]
    assert not [n for n in said if "of flagging every row" in n or "settings on" in n]
