"""Promotion compares champion and challenger on the same rows: the challenger's holdout, with
the champion's model (checksum verified) rescored on it; the decision, the report's scores
table and the changes say which rows."""

import json

import pytest

from libre_lib import LibreClassifier
from libre_lib.ops.diff import render_diff_markdown
from libre_lib.ops.registry import Holdout, ModelRegistry, RegistryError
from libre_lib.ops.report import metrics

PIPE = "haberman"
pytestmark = pytest.mark.filterwarnings("ignore::libre_lib.errors.LibreWarning")
PASSED = {"success": True, "n_failed": 0, "n_expectations": 5}


@pytest.fixture(scope="module")
def split(haberman):
    """Training rows, and the challenger's 108-row holdout."""
    X, y, _info = haberman
    return X.iloc[:198], y.iloc[:198], X.iloc[198:].reset_index(drop=True), y.iloc[198:]


@pytest.fixture(scope="module")
def ranked(haberman, split):
    """(weaker, stronger) of two models by F1 on the holdout."""
    X_train, y_train, X_hold, y_hold = split
    fitted = [
        LibreClassifier(
            n_estimators=5,
            random_state=seed,
            alpha=alpha,
            positive_class=haberman[2].positive_class,
        ).fit(X_train, y_train)
        for seed, alpha in ((0, 0.5), (1, 0.9), (2, 0.7))
    ]
    by_f1 = sorted(fitted, key=lambda m: metrics(m, X_hold, y_hold)["f1"])
    weaker, stronger = by_f1[0], by_f1[-1]
    assert metrics(weaker, X_hold, y_hold)["f1"] < metrics(stronger, X_hold, y_hold)["f1"]
    return weaker, stronger


OTHER_DATA = "; the champion was trained on other data, which may include some of these rows "
OTHER_DATA += "(that favours it)"
SAME_DATA = "; the champion was trained on another split of the same data, so some of these rows "
SAME_DATA += "were most likely its training rows (that favours it)"


def _register(registry, model, scores, run_id):
    return registry.register(
        PIPE,
        model.to_json(),
        spec={"name": PIPE},
        metrics=scores,
        validation=PASSED,
        data_fingerprint=run_id * 64,
        spec_hash="s" * 64,
        run_id=run_id,
    )


@pytest.fixture
def registry(tmp_path, ranked, split):
    """A champion whose recorded F1 (on its own, easier 154-row holdout) is far above what it
    scores on the challenger's holdout, and a challenger registered with its holdout scores."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    registry = ModelRegistry(tmp_path / "store")
    champion = _register(registry, weaker, {"f1": 0.99, "n_rows": 154}, "a")
    registry.promote(PIPE, champion.version)
    challenger = _register(registry, stronger, metrics(stronger, X_hold, y_hold), "b")
    return registry, champion, challenger


def test_the_champion_is_rescored_on_the_challengers_holdout(registry, ranked, split):
    registry, _champion, challenger = registry
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run b")
    decision = registry.decide(PIPE, challenger.version, holdout=holdout)
    assert decision.champion_value == metrics(weaker, X_hold, y_hold)["f1"]
    assert decision.value == metrics(stronger, X_hold, y_hold)["f1"]
    assert decision.promoted  # against the recorded 0.99 it would not be
    assert decision.rows == 108 and decision.same_rows
    assert decision.scored_on == (
        f"both scored on the same 108 rows, the holdout rows of run b{OTHER_DATA}"
    )
    assert decision.reason.endswith(decision.scored_on)
    assert decision.champion_scores["n_rows"] == 108
    record = decision.to_dict()
    assert record["rows"] == 108 and record["scored_on"] == decision.scored_on
    assert record["champion_value"] == decision.champion_value
    json.dumps(record)  # run.json holds it

    promoted = registry.promote(PIPE, challenger.version, holdout=holdout)
    assert promoted == decision
    assert registry.champion(PIPE).version == challenger.version


def test_a_champion_of_the_previous_release_trained_on_the_same_data_is_named_so(
    tmp_path, ranked, split
):
    """The previous release recorded the load file's sha256 as the data fingerprint: a version
    registered after the upgrade (the source's sha256, the load file's as its alias) on the
    same data was said to compare with a champion "trained on other data"."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    registry = ModelRegistry(tmp_path / "store")
    old = _register(registry, weaker, {"f1": 0.99, "n_rows": 154}, "L")  # "LLL...": the file's
    registry.promote(PIPE, old.version)
    new, _ = registry.register_unless_unchanged(
        PIPE,
        stronger.to_json(),
        spec={"name": PIPE, "split_seed": 1},
        metrics=metrics(stronger, X_hold, y_hold),
        validation=PASSED,
        data_fingerprint="S" * 64,  # the source's
        spec_hash="t" * 64,
        run_id="n",
        data_aliases=("L" * 64,),
    )
    assert new.data_aliases == ("L" * 64,)
    assert registry.get(PIPE, new.version).data_aliases == ("L" * 64,)  # kept in version.json
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run n")
    decision = registry.decide(PIPE, new.version, holdout=holdout)
    assert decision.scored_on.endswith(SAME_DATA), decision.scored_on


def test_without_a_holdout_the_decision_says_the_figures_are_in_sample(registry, split):
    registry, _champion, challenger = registry
    *_, X_hold, y_hold = split
    rows = Holdout(X_hold, y_hold, "the training rows of run b", kind="training")
    decision = registry.decide(PIPE, challenger.version, holdout=rows)
    assert decision.reason.startswith("in-sample (training) f1 ")
    assert "holdout f1" not in decision.reason
    assert decision.scored_on.endswith(
        f"(no holdout: {challenger.version} was fitted on them, so the comparison favours it)"
    )
    # a comparison that favours it does not promote it: the user does, knowingly
    assert not decision.promoted
    promote = f"libre models promote {PIPE} {challenger.version} --store {registry.root}"
    assert decision.reason.endswith(
        f"it is not promoted automatically; `{promote}` promotes it"
    )  # the store named: the command's default is ./.libre-store, and the reason is kept
    assert not registry.promote(PIPE, challenger.version, holdout=rows).promoted
    assert registry.champion(PIPE).version == _champion.version


def test_the_changes_compare_the_same_rows_and_say_so(registry, split):
    registry, champion, challenger = registry
    *_, X_hold, y_hold = split
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run b")
    decision = registry.decide(PIPE, challenger.version, holdout=holdout)
    changes = registry.changes(PIPE, champion, challenger, decision)
    f1 = changes.deltas["f1"]
    assert f1["before"] == decision.champion_value and f1["after"] == decision.value
    assert changes.deltas["n_rows"]["before"] == changes.deltas["n_rows"]["after"] == 108
    assert changes.scored_on == decision.scored_on
    text = render_diff_markdown(changes.diff, changes.deltas, champion, challenger)
    assert "108" in text  # the rows column
    from libre_lib.ops.diff import diff_blocks

    blocks = diff_blocks(changes.diff, changes.deltas, "old", "new", scored_on=changes.scored_on)
    said = f"Both scored on the same 108 rows, the holdout rows of run b{OTHER_DATA}."
    assert ("p", said) in blocks


def test_a_champion_that_may_have_trained_on_the_rows_is_said_to_be_favoured(
    tmp_path, ranked, split
):
    """The champion rescored on the new version's holdout was called a holdout comparison
    although, trained on another split of the same data, it had trained on most of those rows."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run b")
    for split_seed, said in [(0, ""), (7, SAME_DATA)]:
        registry = ModelRegistry(tmp_path / str(split_seed))
        kwargs = dict(validation=PASSED, data_fingerprint="d" * 64, spec_hash="s" * 64)
        split_spec = {"name": PIPE, "holdout_fraction": 0.2}
        champion = registry.register(
            PIPE, weaker.to_json(), spec={**split_spec, "split_seed": 0}, metrics={"f1": 0.5},
            run_id="a", **kwargs,
        )  # fmt: skip
        registry.promote(PIPE, champion.version)
        challenger = registry.register(
            PIPE, stronger.to_json(), spec={**split_spec, "split_seed": split_seed},
            metrics={"f1": 0.6}, run_id="b", **kwargs,
        )  # fmt: skip
        decision = registry.decide(PIPE, challenger.version, holdout=holdout)
        assert decision.scored_on == f"both scored on the same 108 rows, {holdout.source}{said}"


def test_without_the_rows_the_decision_says_they_differ(registry):
    registry, champion, challenger = registry
    decision = registry.decide(PIPE, challenger.version)
    assert not decision.promoted and decision.rows is None and not decision.same_rows
    assert decision.champion_value == 0.99
    assert "each scored on its own holdout (the champion on 154 rows" in decision.scored_on
    assert f"{challenger.version} on 108 rows): not the same rows" in decision.scored_on
    changes = registry.changes(PIPE, champion, challenger, decision)
    assert changes.deltas["f1"]["before"] == 0.99
    assert "not the same rows" in changes.scored_on


def test_a_champion_that_cannot_score_the_rows_falls_back_and_says_why(registry, split):
    registry, _champion, challenger = registry
    *_, X_hold, y_hold = split
    missing = X_hold.drop(columns=X_hold.columns[0])
    decision = registry.decide(PIPE, challenger.version, holdout=Holdout(missing, y_hold, "R"))
    assert decision.rows is None and decision.champion_value == 0.99
    # the champion (no rule) reads the rows without the column; the new version's rules test
    # it: the decision names the version that cannot score them, never the champion
    assert f"not the same rows, since {challenger.version} cannot score R (" in decision.scored_on
    assert "these rows lack the column 'age' that its rules test" in decision.scored_on


def test_a_tampered_champion_is_not_rescored(registry, split):
    registry, champion, challenger = registry
    *_, X_hold, y_hold = split
    path = champion.path / "model.json"
    path.write_text(path.read_text().replace('"alpha"', '"alpha" ', 1))
    with pytest.raises(RegistryError, match="does not match the sha256 recorded"):
        registry.decide(PIPE, challenger.version, holdout=Holdout(X_hold, y_hold, "R"))


def test_a_first_version_without_a_holdout_is_not_called_holdout(tmp_path, ranked, split):
    """The first version's reason said "(holdout f1 ...)" for in-sample figures."""
    *_, X_hold, y_hold = split
    registry = ModelRegistry(tmp_path / "store")
    first = _register(registry, ranked[0], metrics(ranked[0], X_hold, y_hold), "a")
    rows = Holdout(X_hold, y_hold, "the training rows of run a", kind="training")
    decision = registry.promote(PIPE, first.version, holdout=rows)
    assert decision.promoted and "in-sample (training) f1" in decision.reason
    assert "holdout f1" not in decision.reason


def test_rows_without_the_positive_class_are_compared_by_accuracy(tmp_path, ranked, split):
    """F1 is 0 (or 0/0) for every model on rows without a positive: the comparison says so
    and compares accuracy, on the same rows and on the recorded figures alike."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    negative = (y_hold != stronger.positive_class_).to_numpy()
    X_none, y_none = X_hold[negative].reset_index(drop=True), y_hold[negative]
    by_accuracy = sorted((weaker, stronger), key=lambda m: metrics(m, X_none, y_none)["accuracy"])
    worse, better = by_accuracy
    assert metrics(worse, X_none, y_none)["accuracy"] < metrics(better, X_none, y_none)["accuracy"]

    registry = ModelRegistry(tmp_path / "store")
    first = _register(registry, better, metrics(better, X_none, y_none), "a")
    decision = registry.promote(PIPE, first.version)
    assert decision.promoted and decision.metric == "accuracy"
    assert (
        "holdout accuracy" in decision.reason
        and "f1 is undefined on rows without" in decision.reason
    )

    challenger = _register(registry, worse, metrics(worse, X_none, y_none), "b")
    rows = Holdout(X_none, y_none, "the holdout rows of run b")
    decision = registry.decide(PIPE, challenger.version, holdout=rows)
    assert not decision.promoted and decision.metric == "accuracy"
    assert decision.value == metrics(worse, X_none, y_none)["accuracy"]
    assert decision.champion_value == metrics(better, X_none, y_none)["accuracy"]
    assert decision.reason.startswith("holdout accuracy ") and "compared instead" in decision.reason
    assert not registry.decide(PIPE, challenger.version).promoted  # recorded figures alike

    # rows with a positive keep the metric asked for
    decision = registry.decide(PIPE, challenger.version, holdout=Holdout(X_hold, y_hold, "R"))
    assert decision.metric == "f1" and "undefined" not in decision.reason


@pytest.mark.parametrize(
    ("champion_split", "challenger_split", "caution"),
    [("", "k", SAME_DATA), ("k", "k", ""), ("k", "j", SAME_DATA), ("", "", "")],
)
def test_a_split_that_changed_on_the_same_data_is_said_to_favour_the_champion(
    tmp_path, ranked, split, champion_split, challenger_split, caution
):
    """The first run after rows were split by their values, on unchanged data and spec: the
    champion's holdout was drawn otherwise, so most of the new holdout rows were its training
    rows (the fraction and seed alone did not show it). Equal split keys need no caution."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    registry = ModelRegistry(tmp_path / "store")
    versions = []
    for model, key in ((weaker, champion_split), (stronger, challenger_split)):
        versions.append(
            registry.register(
                PIPE, model.to_json(), spec={"name": PIPE}, metrics={"f1": 0.5},
                validation=PASSED, data_fingerprint="d" * 64, spec_hash="s" * 64,
                run_id="r", split=key,
            )
        )  # fmt: skip
    registry.promote(PIPE, versions[0].version)
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run r")
    decision = registry.decide(PIPE, versions[1].version, holdout=holdout)
    assert (
        decision.scored_on
        == f"both scored on the same 108 rows, the holdout rows of run r{caution}"
    )


def test_the_champion_is_rescored_when_the_data_gained_or_lost_a_column_it_does_not_test(
    tmp_path, ranked, split
):
    """A constant column added upstream (or a column no rule tests dropped) made the champion
    unable to score the new holdout ("X's columns differ"): a version with the champion's very
    rules was rejected on F1 measured on other rows (-0.064)."""
    weaker, stronger = ranked
    *_, X_hold, y_hold = split
    registry = ModelRegistry(tmp_path / "store")
    champion = _register(registry, stronger, {"f1": 0.99, "n_rows": 154}, "a")
    registry.promote(PIPE, champion.version)
    challenger = _register(registry, weaker, metrics(weaker, X_hold, y_hold), "b")
    expected = metrics(stronger, X_hold, y_hold)["f1"]
    tested = {name for rule in stronger.rules_ for name in rule.features}
    untested = [c for c in X_hold.columns if c not in tested]
    assert untested and tested
    for rows in (X_hold.assign(batch_tag="2026-11"), X_hold.drop(columns=untested[:1])):
        decision = registry.decide(PIPE, challenger.version, holdout=Holdout(rows, y_hold, "b"))
        assert decision.same_rows and decision.champion_value == expected
    lacking = Holdout(X_hold.drop(columns=sorted(tested)[:1]), y_hold, "b")
    decision = registry.decide(PIPE, challenger.version, holdout=lacking)
    assert not decision.same_rows
    assert f"lack the column {sorted(tested)[0]!r} that its rules test" in decision.scored_on


def test_a_version_rejected_on_rows_the_champion_may_have_trained_on_gets_the_way_out(
    registry, ranked, split
):
    """After the split changed (an upgrade), every run was rejected against a champion that
    had trained on some of its holdout rows, and the reason did not say how to get out."""
    registry, _, challenger = registry
    weaker, _ = ranked
    *_, X_hold, y_hold = split
    holdout = Holdout(X_hold, y_hold, "the holdout rows of run b")
    registry.promote(PIPE, challenger.version, holdout=holdout)  # the stronger one leads
    again = _register(registry, weaker, metrics(weaker, X_hold, y_hold), "c")
    decision = registry.decide(PIPE, again.version, holdout=holdout)
    assert not decision.promoted
    assert decision.reason.endswith(
        f"{OTHER_DATA}; if this version is the better one, `libre models promote {PIPE} "
        f"{again.version}` makes it the champion"
    ), decision.reason


def test_a_champion_that_flags_none_of_the_rows_is_said_to(tmp_path):
    """An upgraded store's champion read a column's categories as "58.0", the new rows write
    "58": it scored 0.000 on them, and the decision only said that the comparison favoured it."""
    import numpy as np
    import pandas as pd

    years = np.arange(300) % 10 + 58
    y = pd.Series(np.where(years >= 65, "yes", "no"))
    written = {"old": pd.DataFrame({"year": [f"{v}.0" for v in years]}),
               "new": pd.DataFrame({"year": [str(v) for v in years]})}  # fmt: skip
    models = {
        k: LibreClassifier(random_state=0, n_estimators=2, positive_class="yes").fit(X, y)
        for k, X in written.items()
    }
    registry = ModelRegistry(tmp_path / "store")
    champion = _register(registry, models["old"], {"f1": 1.0}, "a")
    registry.promote(PIPE, champion.version)
    challenger = _register(registry, models["new"], metrics(models["new"], written["new"], y), "b")
    holdout = Holdout(written["new"], y, "the holdout rows of run b")
    decision = registry.decide(PIPE, challenger.version, holdout=holdout)
    assert decision.champion_value == 0.0 and decision.promoted
    said = " ".join(decision.scored_on.split())
    assert "; the champion flags none of these rows: its rules may be too narrow for them" in said
    assert "or test values these rows write otherwise" in said


def test_a_champion_that_cannot_score_the_new_rows_stays(tmp_path, ranked, split):
    """A delivery whose column turned to text trained a version without it, and the two
    versions' recorded figures (each on its own holdout) promoted it: the champion, whose rules
    test the column, could not score the new rows at all."""
    _weaker, stronger = ranked
    X_train, y_train, X_hold, y_hold = split
    tested = sorted({c.feature for rule in stronger.rules_ for c in rule.conditions})
    broken = X_hold.drop(columns=tested)
    without = LibreClassifier(n_estimators=5, random_state=0).fit(
        X_train.drop(columns=tested), y_train
    )
    registry = ModelRegistry(tmp_path / "store")
    champion = _register(registry, stronger, {"f1": 0.2, "n_rows": 108}, "a")
    registry.promote(PIPE, champion.version)
    challenger = _register(registry, without, metrics(without, broken, y_hold), "b")
    decision = registry.decide(PIPE, challenger.version, holdout=Holdout(broken, y_hold, "R"))
    assert not decision.promoted
    assert f"the champion {champion.version} cannot score this version's holdout rows (" in (
        decision.reason
    )
    assert "that its rules test): the data, or the spec's features, changed" in decision.reason
    assert f"`libre models promote {PIPE} {challenger.version} --store " in decision.reason
