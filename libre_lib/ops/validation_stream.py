"""Validating a table read in batches: per-batch statistics, merged, then judged.

For tables larger than memory the rows come in batches (DataFrames, possibly read by different
processes, in a fixed order). ``batch_statistics`` reduces one batch to a small JSON-friendly
dict; ``merge_statistics`` merges such dicts in order (associatively, so processes can merge
partial results in any grouping); ``validate_statistics`` turns the merged statistics into the
``ValidationReport`` that ``validate_frame`` gives on the concatenated batches
(``pd.concat(batches)``).

The built-in ("rules") expectations are evaluated exactly from the statistics, with GX's own
arithmetic (its ``mostly`` ratios, its choice of the first 20 unexpected values and their
ordering by count) and the report texts of ``libre_lib.ops.validation``:

* row count, missing values per column, the target's count per class key, the values outside
  a declared range and the values outside a declared set are counts, summed over batches;
* examples come from the first 20 unexpected values in row order (GX's partial list), kept per
  batch and cut to 20 after merging, so they are the same as on the concatenated frame;
* a column's dtype is the dtype ``pd.concat`` gives the column, found by concatenating empty
  columns of each batch's dtype: an ``int64`` batch and a ``float64`` batch make ``float64``, a
  batch where a number column holds ``"?"`` makes the column ``object`` (so a numeric-dtype rule
  fails, counting the non-numbers over all batches);
* a column missing from some batches counts as missing values in those rows, as after
  ``pd.concat``.

Where it can differ: examples GX picks in hash order (when more than 20 declared classes never
appear, GX lists 20 of them in set order, here the first 20 sorted); an example value may have
another Python type when the batches' dtypes differ (``70`` from an ``int64`` batch where the
concatenated ``float64`` column gives ``70.0``; equal values); and a dtype pandas cannot name
back from its text is taken as ``object`` when the batches' dtypes differ.

The user's extra expectations need GX and the rows, so ``user_expectation_results`` runs them
on each batch; ``validate_statistics`` merges those per-batch results (see its docstring for
what is exact).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import reduce
from itertools import chain
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..errors import ParameterError, counted
from ..inputs import is_categorical_dtype
from .validation import (
    _PARTIAL_UNEXPECTED,
    DTYPE_EXPECTATION,
    MAX_EXAMPLES,
    ColumnRule,
    ExpectationResult,
    ValidationReport,
    ValidationRules,
    _checked_frame,
    _dtype_result,
    _examples,
    _exception_messages,
    _expectation_classes,
    _gx_expectation,
    _gx_result,
    _import_gx,
    _non_numbers,
    _non_numeric_range_result,
    _own_column_check,
    _plain_observed,
    _reported_value,
    _result_column,
    _run_gx_suite,
    _runnable,
    _unique,
    _with_hint,
    build_expectations,
    label_key,
)

__all__ = [
    "batch_statistics",
    "merge_statistics",
    "user_expectation_results",
    "validate_statistics",
]

FORMAT = "libre-validation-statistics/1"

# Single-column GX expectations that judge each row on its own: their merged verdict is
# recomputed from the summed counts, as GX computes it on the whole table.
ROW_WISE = frozenset(
    f"expect_column_{name}"
    for name in (
        "values_to_be_between",
        "values_to_be_in_set",
        "values_to_not_be_in_set",
        "values_to_be_null",
        "values_to_not_be_null",
        "values_to_match_regex",
        "values_to_not_match_regex",
        "values_to_match_regex_list",
        "values_to_not_match_regex_list",
        "values_to_match_like_pattern",
        "values_to_not_match_like_pattern",
        "values_to_match_like_pattern_list",
        "values_to_not_match_like_pattern_list",
        "value_lengths_to_be_between",
        "value_lengths_to_equal",
        "values_to_match_strftime_format",
        "values_to_be_json_parseable",
        "values_to_match_json_schema",
        "values_to_be_dateutil_parseable",
    )
)
# Row-wise expectations whose ``mostly`` ratio counts every row, not only the non-missing ones.
_RATIO_OF_ALL_ROWS = frozenset(
    {"expect_column_values_to_not_be_null", "expect_column_values_to_be_null"}
)


# --------------------------------------------------------------------------- small pieces


def _rules_key(rules: ValidationRules) -> str:
    """A short fingerprint of the parts of the rules the statistics depend on."""
    classes = rules.target_classes
    data = {
        "target": rules.target_column,
        "classes": None if classes is None else _unique(label_key(c) for c in classes),
        "columns": {
            name: [rule.min, rule.max, rule.dtype, _plain_list(rule.values)]
            for name, rule in rules.columns.items()
        },
    }
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain_list(values: Iterable | None) -> list | None:
    return None if values is None else [_reported_value(v) for v in values]


def _first_distinct(values: pd.Series, limit: int = MAX_EXAMPLES) -> list:
    """The first ``limit`` distinct values (as reported), in row order, without a row loop."""
    array = values.to_numpy(dtype=object)
    try:
        array = pd.unique(array)  # first appearances, in order
    except TypeError:  # unhashable values
        pass
    found: dict = {}
    for value in array:
        found.setdefault(_reported_value(value), None)
        if len(found) == limit:
            break
    return list(found)


def _first_values(values: pd.Series, mask: np.ndarray) -> list:
    """The first ``_PARTIAL_UNEXPECTED`` values where ``mask`` holds, as GX lists them."""
    positions = np.flatnonzero(mask)[:_PARTIAL_UNEXPECTED]
    return [_reported_value(v) for v in values.iloc[positions]]


def _as_bool(result: pd.Series) -> np.ndarray:
    return result.to_numpy(dtype=bool, na_value=False)


def _partial_counts(values: list) -> list[dict] | None:
    """GX's ``partial_unexpected_counts``: the listed values by count, then by value."""
    items = [tuple(v.values()) if isinstance(v, dict) else v for v in values]
    try:
        ranked = sorted(
            Counter(items).most_common(_PARTIAL_UNEXPECTED), key=lambda x: (-x[1], x[0])
        )
    except TypeError:  # GX leaves the counts out when the values do not sort
        return None
    return [{"value": value, "count": count} for value, count in ranked]


def _map_info(total: int, unexpected: int, first: list, missing: int | None = None) -> dict:
    """A GX map-expectation result (the keys ``_gx_result`` reads); ``missing``: the missing
    values, which GX leaves unchecked and counts apart."""
    info = {
        "element_count": total,
        "unexpected_count": unexpected,
        "partial_unexpected_list": first,
    }
    if missing is not None:
        info["missing_count"] = missing
    counts = _partial_counts(first)
    if counts is not None:
        info["partial_unexpected_counts"] = counts
    return info


def _map_success(
    type_: str, total: int, nonnull: int | None, unexpected: int, mostly: float
) -> bool:
    """GX's verdict for a map expectation, with its ``mostly`` arithmetic."""
    considered = total if type_ in _RATIO_OF_ALL_ROWS or nonnull is None else nonnull
    if total == 0 or considered == 0:
        return True  # vacuously true, as in GX
    return (float(considered) - float(unexpected)) / float(considered) >= mostly


def _as_gx_result(success: bool, info: Mapping) -> SimpleNamespace:
    return SimpleNamespace(success=success, result=dict(info), exception_info=None)


# --------------------------------------------------------------------------- dtypes


def _dtype_spec(dtype):
    """How to rebuild ``dtype`` from JSON: its text, a dict, or ``None`` (unknown)."""
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        return {
            "categories": _plain_list(categories),
            "ordered": bool(dtype.ordered),
            "of": _dtype_spec(categories.dtype),
        }
    if isinstance(dtype, pd.StringDtype):
        return {"string": dtype.storage, "na": "NA" if dtype.na_value is pd.NA else "nan"}
    text = str(dtype)
    try:
        return text if pd.api.types.pandas_dtype(text) == dtype else None
    except TypeError:
        return None


def _dtype_from_spec(spec):
    if spec is None:
        return np.dtype(object)
    if isinstance(spec, str):
        return pd.api.types.pandas_dtype(spec)
    if "string" in spec:
        return pd.StringDtype(spec["string"], na_value=pd.NA if spec["na"] == "NA" else np.nan)
    try:
        categories = pd.Index(spec["categories"], dtype=_dtype_from_spec(spec["of"]))
    except (TypeError, ValueError):
        return np.dtype(object)
    return pd.CategoricalDtype(categories, ordered=spec["ordered"])


def _dtype_entry(series: pd.Series) -> dict:
    return {
        "text": str(series.dtype),
        "categorical": is_categorical_dtype(series),
        "spec": _dtype_spec(series.dtype),
    }


def _merged_dtype(entries: list) -> tuple[str, bool]:
    """The dtype ``pd.concat`` gives a column whose batches had these dtypes (``None``: the
    column was absent): its text and whether it is categorical."""
    if len(entries) == 1 and entries[0] is not None:
        return entries[0]["text"], entries[0]["categorical"]
    frames = [
        pd.DataFrame({"other": []})
        if entry is None
        else pd.DataFrame({"value": pd.Series([], dtype=_dtype_from_spec(entry["spec"]))})
        for entry in entries
    ]
    series = pd.concat(frames)["value"]
    return str(series.dtype), is_categorical_dtype(series)


# --------------------------------------------------------------------------- one batch


def _target_part(frame: pd.DataFrame, rules: ValidationRules) -> dict:
    """Per class key, how many rows; the missing labels; the labels outside the declared
    classes (count and the first ones, in row order)."""
    part = {"nulls": len(frame), "keys": {}, "outside": {"count": 0, "first": []}}
    if rules.target_column not in frame.columns:
        return part
    codes, uniques = pd.factorize(frame[rules.target_column], use_na_sentinel=True)
    keys = [label_key(u) for u in uniques]  # one per distinct label, not per row
    counts = np.bincount(codes + 1, minlength=len(keys) + 1)  # slot 0: missing
    tally: dict = {}
    for key, count in zip(keys, counts[1:].tolist(), strict=True):
        tally[key] = tally.get(key, 0) + count
    part["nulls"] = int(counts[0]) + tally.pop(None, 0)
    part["keys"] = tally
    if rules.target_classes is not None:
        allowed = {label_key(c) for c in rules.target_classes}
        outside = np.array([k is not None and k not in allowed for k in keys] + [False])
        mask = outside[codes]  # code -1 (missing) reads the trailing False
        first = np.flatnonzero(mask)[:_PARTIAL_UNEXPECTED]
        part["outside"] = {
            "count": int(mask.sum()),
            "first": [keys[code] for code in codes[first].tolist()],
        }
    return part


def _numeric_view(values: pd.Series) -> pd.Series | None:
    """The (non-missing) values as numbers when this batch could concatenate into a numeric
    column (numbers, bools, categories of numbers); ``None`` otherwise."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        of = dtype.categories.dtype
        numeric = pd.api.types.is_numeric_dtype(of) and not pd.api.types.is_bool_dtype(of)
        return values.astype(of) if numeric else None
    if pd.api.types.is_bool_dtype(dtype):
        return values.astype("int64")
    return values if pd.api.types.is_numeric_dtype(dtype) else None


def _range_part(series: pd.Series | None, rule: ColumnRule) -> dict:
    """The non-missing numbers outside ``[rule.min, rule.max]``: count and the first ones."""
    values = None if series is None else _numeric_view(series[series.notna()])
    if values is None or values.empty:
        return {"count": 0, "first": []}
    outside = np.zeros(len(values), dtype=bool)
    if rule.min is not None:
        outside |= _as_bool(values < rule.min)
    if rule.max is not None:
        outside |= _as_bool(values > rule.max)
    return {"count": int(outside.sum()), "first": _first_values(values, outside)}


def _value_set_part(series: pd.Series | None, rule: ColumnRule) -> dict:
    """The non-missing values not in ``rule.values``: count and the first ones."""
    if series is None:
        return {"count": 0, "first": []}
    values = series[series.notna()]
    outside = ~_as_bool(values.isin(list(rule.values)))
    return {"count": int(outside.sum()), "first": _first_values(values, outside)}


def _non_number_part(series: pd.Series | None) -> dict:
    """The non-missing values that are not numbers: count and the first distinct ones."""
    if series is None or not is_categorical_dtype(series):
        return {"count": 0, "examples": []}
    bad = _non_numbers(series)
    return {"count": len(bad), "examples": _first_distinct(bad)}


def _needs_numbers(rule: ColumnRule) -> bool:
    return rule.dtype == "numeric" or rule.min is not None or rule.max is not None


def batch_statistics(frame: pd.DataFrame, rules: ValidationRules) -> dict:
    """Statistics of one batch, enough to judge every built-in expectation of ``rules``.

    Vectorized: one pass per column with pandas, Python loops only over distinct target
    labels and a few example values.

    Parameters
    ----------
    frame : DataFrame
        One batch of the table (column names are compared as strings).
    rules : ValidationRules
        The rules the batches will be validated against.

    Returns
    -------
    dict
        JSON-friendly: the row count; per column its missing count and dtype; per target
        class key its count; per range / value-set rule the values outside (count and the
        first 20); per numeric rule on a text column the non-numbers (count and examples).
    """
    frame = _checked_frame(frame)
    missing = frame.isna().sum()
    columns = {
        name: {"missing": int(missing[name]), "dtypes": [_dtype_entry(frame[name])]}
        for name in frame.columns
    }
    ruled = rules.columns.items()
    return {
        "format": FORMAT,
        "rules": _rules_key(rules),
        "n_batches": 1,
        "n_rows": len(frame),
        "columns": columns,
        "target": _target_part(frame, rules),
        "ranges": {
            name: _range_part(frame.get(name), rule)
            for name, rule in ruled
            if rule.min is not None or rule.max is not None
        },
        "value_sets": {
            name: _value_set_part(frame.get(name), rule)
            for name, rule in ruled
            if rule.values is not None
        },
        "non_numbers": {
            name: _non_number_part(frame.get(name)) for name, rule in ruled if _needs_numbers(rule)
        },
    }


# --------------------------------------------------------------------------- merging


def _merge_first(a: dict, b: dict) -> dict:
    return {
        "count": a["count"] + b["count"],
        "first": (a["first"] + b["first"])[:_PARTIAL_UNEXPECTED],
    }


def _merge_examples(a: dict, b: dict) -> dict:
    return {
        "count": a["count"] + b["count"],
        "examples": list(_examples(a["examples"] + b["examples"])),
    }


def _merge_columns(a: dict, b: dict) -> dict:
    """Columns in order of first appearance; a column absent from a side counts that side's
    rows as missing and adds an absent (``None``) dtype, as ``pd.concat`` fills it."""
    merged = {}
    for name in _unique((*a["columns"], *b["columns"])):
        left = a["columns"].get(name) or {"missing": a["n_rows"], "dtypes": [None]}
        right = b["columns"].get(name) or {"missing": b["n_rows"], "dtypes": [None]}
        merged[name] = {
            "missing": left["missing"] + right["missing"],
            "dtypes": _unique_entries(left["dtypes"] + right["dtypes"]),
        }
    return merged


def _unique_entries(entries: list) -> list:
    out: list = []
    for entry in entries:
        if entry not in out:
            out.append(entry)
    return out


def _merge_target(a: dict, b: dict) -> dict:
    keys = dict(a["keys"])
    for key, count in b["keys"].items():
        keys[key] = keys.get(key, 0) + count
    return {
        "nulls": a["nulls"] + b["nulls"],
        "keys": keys,
        "outside": _merge_first(a["outside"], b["outside"]),
    }


def _merge_two(a: dict, b: dict) -> dict:
    if a["rules"] != b["rules"]:
        raise ParameterError("Cannot merge batch statistics computed for different rules.")
    return {
        "format": FORMAT,
        "rules": a["rules"],
        "n_batches": a["n_batches"] + b["n_batches"],
        "n_rows": a["n_rows"] + b["n_rows"],
        "columns": _merge_columns(a, b),
        "target": _merge_target(a["target"], b["target"]),
        "ranges": {c: _merge_first(a["ranges"][c], b["ranges"][c]) for c in a["ranges"]},
        "value_sets": {
            c: _merge_first(a["value_sets"][c], b["value_sets"][c]) for c in a["value_sets"]
        },
        "non_numbers": {
            c: _merge_examples(a["non_numbers"][c], b["non_numbers"][c]) for c in a["non_numbers"]
        },
    }


def _checked_stats(stats) -> dict:
    if not isinstance(stats, Mapping) or stats.get("format") != FORMAT:
        raise ParameterError(
            f"Not validation statistics from batch_statistics (format {FORMAT!r})."
        )
    return dict(stats)


def merge_statistics(parts: Sequence[dict]) -> dict:
    """Merge batch statistics, in the batches' order.

    Associative: merging ``[a, b, c]`` equals merging ``[merge([a, b]), c]`` and
    ``[a, merge([b, c])]``, so partial merges can be done anywhere, as long as the order of the
    batches is kept (it decides which unexpected values are reported as examples).

    Parameters
    ----------
    parts : sequence of dict
        Results of ``batch_statistics`` or of earlier merges, computed for the same rules.

    Returns
    -------
    dict
        The statistics of the batches' concatenation.
    """
    parts = [_checked_stats(p) for p in parts]
    if not parts:
        raise ParameterError("merge_statistics needs at least one part.")
    return reduce(_merge_two, parts)


# --------------------------------------------------------------------------- user expectations


def _user_part(item: dict, result, ran: bool, n_rows: int) -> dict:
    """One batch's outcome of one user expectation, in plain values."""
    part = {"type": item["type"], "ran": ran, "n_rows": n_rows}
    if not ran:
        return part
    if result is None:
        return {
            **part,
            "success": False,
            "unexpected_count": None,
            "element_count": None,
            "missing_count": None,
            "partial_unexpected_list": [],
            "examples": [],
            "details": "Great Expectations returned no result for this expectation",
            "errors": ["Great Expectations returned no result for this expectation"],
        }
    info = result.result or {}
    outcome = _gx_result(item, result)
    return {
        **part,
        "success": outcome.success,
        "unexpected_count": outcome.unexpected_count,
        "element_count": info.get("element_count"),
        "missing_count": info.get("missing_count"),
        "partial_unexpected_list": _plain_observed(info.get("partial_unexpected_list") or []),
        "examples": list(outcome.unexpected_examples),
        "details": outcome.details,
        "errors": _exception_messages(result.exception_info),
    }


def user_expectation_results(frame: pd.DataFrame, rules: ValidationRules) -> list[dict]:
    """Run the user's extra expectations on one batch with GX, in a mergeable form.

    Parameters
    ----------
    frame : DataFrame
        One batch of the table.
    rules : ValidationRules
        Only ``rules.expectations`` are run (the built-in ones come from the statistics).

    Returns
    -------
    list of dict
        One per user expectation, in the rules' order: ``type``, ``n_rows`` (the batch's),
        ``ran`` (False when a column it names is missing from the batch), and when it ran
        ``success``, ``unexpected_count``, ``element_count``, ``missing_count``,
        ``partial_unexpected_list`` (GX's first 20 unexpected values),
        ``examples``, ``details`` and ``errors``. JSON-friendly.

    Raises
    ------
    ParameterError
        For an unknown expectation type or kwargs GX rejects.
    """
    frame = _checked_frame(frame)
    plan = build_expectations(rules, columns=list(frame.columns))
    users = [i for i, item in enumerate(plan) if item["source"] == "user"]
    if not users:
        return []
    gx, progress_bars_config, get_impl, not_found, registered = _import_gx()
    classes = _expectation_classes([plan[i] for i in users], get_impl, not_found, registered)
    ran = set(users) & set(_runnable(plan, set(frame.columns))[0])
    expectations = [_gx_expectation(plan[i], i, plan[i]["kwargs"], classes) for i in sorted(ran)]
    results = {}
    if expectations:
        for result in _run_gx_suite(gx, progress_bars_config, frame, expectations):
            results[result.expectation_config.meta["libre_index"]] = result
    return [_user_part(plan[i], results.get(i), i in ran, len(frame)) for i in users]


def _row_wise_result(item: dict, parts: list[dict], n_batches: int) -> ExpectationResult:
    """A row-wise expectation judged on the summed counts, exactly as on the whole table."""
    total = sum(p["element_count"] for p in parts)
    unexpected = sum(p["unexpected_count"] for p in parts)
    missing = [p.get("missing_count") for p in parts]
    nonnull = None if None in missing else total - sum(missing)
    mostly = item["kwargs"].get("mostly", 1.0)
    success = _map_success(item["type"], total, nonnull, unexpected, mostly)
    first = list(chain.from_iterable(p["partial_unexpected_list"] for p in parts))
    whole = _gx_result(
        item,
        _as_gx_result(
            success,
            _map_info(
                total,
                unexpected,
                first[:_PARTIAL_UNEXPECTED],
                None if nonnull is None else total - nonnull,
            ),
        ),
    )
    batches = counted(n_batches, "batch", "batches")
    details = f"{whole.details}; checked batch by batch ({batches}), exact"
    return ExpectationResult(
        whole.expectation, whole.column, success, unexpected, whole.unexpected_examples, details
    )


def _per_batch_result(item: dict, parts: list[dict], n_batches: int) -> ExpectationResult:
    """An expectation judged batch by batch: it fails when it fails in any batch."""
    numbered = [(n, p) for n, p in enumerate(parts, 1) if p["ran"]]
    if any(p["n_rows"] for _, p in numbered):  # an empty batch has no mean, no order, ...
        numbered = [(n, p) for n, p in numbered if p["n_rows"]]
    failed = [(n, p) for n, p in numbered if not p["success"]]
    counts = [p["unexpected_count"] for _, p in numbered]
    unexpected = None if None in counts or not counts else sum(counts)
    examples = _examples(chain.from_iterable(p["examples"] for _, p in numbered))
    skipped = sum(1 for p in parts if not p["ran"])
    verdict = (
        f"not met in {len(failed)} of {counted(len(numbered), 'batch', 'batches')}"
        if failed
        else f"met in each of {counted(len(numbered), 'batch', 'batches')}"
    )
    details = f"checked batch by batch, not on the whole table: {verdict}"
    if skipped:
        details += f"; skipped in {counted(skipped, 'batch', 'batches')} without its column"
    if numbered:
        number, shown = (failed or numbered)[0]
        details += f"; batch {number}: {shown['details']}"
    success = bool(numbered) and not failed
    column = _result_column(item["kwargs"])
    return ExpectationResult(item["type"], column, success, unexpected, examples, details)


def _user_result(item: dict, parts: list[dict]) -> ExpectationResult:
    for part in parts:
        if part.get("type") != item["type"]:
            raise ParameterError(
                f"user_parts do not match the rules: expected results of {item['type']!r}, "
                f"got {part.get('type')!r}."
            )
    exact = (
        item["type"] in ROW_WISE
        and all(p["ran"] and not p["errors"] for p in parts)
        and all(p["unexpected_count"] is not None and p["element_count"] is not None for p in parts)
    )
    if exact:
        return _row_wise_result(item, parts, len(parts))
    return _per_batch_result(item, parts, len(parts))


def _user_results(plan: list[dict], rules: ValidationRules, user_parts) -> dict[int, list]:
    """Per plan index of a user expectation, its per-batch results."""
    indices = [i for i, item in enumerate(plan) if item["source"] == "user"]
    if not indices:
        return {}
    if user_parts is None:
        raise ParameterError(
            "The rules have user expectations: pass user_parts, the user_expectation_results "
            "of every batch, in order."
        )
    batches = [list(batch) for batch in user_parts]
    if not batches or any(len(batch) != len(indices) for batch in batches):
        raise ParameterError(
            f"user_parts must hold, per batch, one result per user expectation ({len(indices)})."
        )
    return {index: [batch[j] for batch in batches] for j, index in enumerate(indices)}


# --------------------------------------------------------------------------- judging


def _rules_outcome(item: dict, stats: dict, target_column: str) -> ExpectationResult:
    """A built-in GX-checked expectation, judged from the statistics as GX judges it."""
    type_, kwargs = item["type"], item["kwargs"]
    n_rows, target = stats["n_rows"], stats["target"]
    column = kwargs.get("column")
    if type_ == "expect_table_row_count_to_be_between":
        high = kwargs.get("max_value")
        success = n_rows >= kwargs["min_value"] and (high is None or n_rows <= high)
        return _gx_result(item, _as_gx_result(success, {"observed_value": n_rows}))
    if type_ == "expect_column_unique_value_count_to_be_between":
        observed = sum(1 for count in target["keys"].values() if count > 0)
        return _gx_result(
            item, _as_gx_result(observed >= kwargs["min_value"], {"observed_value": observed})
        )
    if type_ == "expect_column_distinct_values_to_contain_set":
        missing = sorted(k for k in kwargs["value_set"] if target["keys"].get(k, 0) == 0)
        info = {"observed_value": None, "missing_count": len(missing)}
        info["partial_missing_list"] = missing[:_PARTIAL_UNEXPECTED]
        return _gx_result(item, _as_gx_result(not missing, info))
    if type_ == "expect_column_values_to_not_be_null":
        unexpected, first, nonnull = stats["columns"][column]["missing"], [], None
    elif column == target_column:  # the declared classes, compared as label keys
        part = target["outside"]
        unexpected, first, nonnull = part["count"], part["first"], n_rows - target["nulls"]
    else:
        part = stats["ranges" if type_ == "expect_column_values_to_be_between" else "value_sets"]
        part = part[column]
        nonnull = n_rows - stats["columns"][column]["missing"]
        unexpected, first = part["count"], part["first"]
    success = _map_success(type_, n_rows, nonnull, unexpected, kwargs.get("mostly", 1.0))
    missing = None if nonnull is None else n_rows - nonnull
    return _gx_result(item, _as_gx_result(success, _map_info(n_rows, unexpected, first, missing)))


def _own_dtype_outcome(item: dict, stats: dict) -> ExpectationResult:
    column = item["kwargs"]["column"]
    dtype, categorical = _merged_dtype(stats["columns"][column]["dtypes"])
    bad = stats["non_numbers"].get(column, {"count": 0, "examples": []})  # none when categorical
    return _dtype_result(item, dtype, categorical, bad["count"], tuple(bad["examples"]))


def validate_statistics(
    stats: dict, rules: ValidationRules, user_parts: Sequence[Sequence[dict]] | None = None
) -> ValidationReport:
    """The report ``validate_frame`` gives on the concatenated batches, from their statistics.

    Built-in expectations: the same expectations in the same order, with the same success,
    unexpected counts, examples and details (the module docstring lists the corner cases:
    examples GX picks in hash order, example types when batch dtypes differ, unnamed dtypes).

    User expectations are merged from their per-batch GX results:

    * row-wise ones (``ROW_WISE``: between, in_set, not_in_set, (not_)null, regex, like
      patterns, value lengths, ...) are exact: counts are summed and the verdict is GX's on the
      sums, ``mostly`` included, so it is the whole table's; examples are GX's, from the first
      20 unexpected values in row order;
    * any other (aggregates such as ``expect_column_mean_to_be_between``, uniqueness, sort
      order, column pairs) is a per-batch check, not a check of the whole table: it fails when
      it fails in any non-empty batch (or could not be evaluated), counts are summed where every
      batch gives one, examples are the first distinct ones of the batches. A row-wise one
      also falls back to this when a batch lacked its column or GX raised on a batch.

    The details of a user expectation say it was checked batch by batch.

    Parameters
    ----------
    stats : dict
        ``merge_statistics`` of the batches (or ``batch_statistics`` of the only one).
    rules : ValidationRules
        The rules the statistics were computed for.
    user_parts : sequence of lists of dict, optional
        Per batch, in order, ``user_expectation_results(batch, rules)``. Required when the
        rules have user expectations.

    Returns
    -------
    ValidationReport

    Raises
    ------
    ParameterError
        For statistics of other rules, or missing or mismatched ``user_parts``.
    """
    stats = _checked_stats(stats)
    if stats["rules"] != _rules_key(rules):
        raise ParameterError("The statistics were computed for other rules.")
    columns = list(stats["columns"])
    plan = build_expectations(rules, columns=columns)
    present = set(columns)
    runnable, skipped = _runnable(plan, present)
    users = _user_results(plan, rules, user_parts)
    results = []
    for index in runnable:
        item = plan[index]
        if item["type"] == "expect_column_to_exist":
            results.append(_own_column_check(item, present, skipped))
        elif item["type"] == DTYPE_EXPECTATION:
            results.append(_own_dtype_outcome(item, stats))
        elif item["source"] == "user":
            results.append(_user_result(item, users[index]))
        elif item["type"] == "expect_column_values_to_be_between" and _categorical(item, stats):
            column = item["kwargs"]["column"]
            dtype = _merged_dtype(stats["columns"][column]["dtypes"])[0]
            bad = stats["non_numbers"][column]
            results.append(
                _non_numeric_range_result(item, dtype, bad["count"], tuple(bad["examples"]))
            )
        else:
            outcome = _rules_outcome(item, stats, rules.target_column)
            results.append(_with_hint(outcome, item, rules.target_column))
    return ValidationReport(
        success=all(r.success for r in results), n_rows=stats["n_rows"], results=tuple(results)
    )


def _unexpected_in(result: ExpectationResult, stats: dict, target_column: str) -> int:
    """How many of one batch's rows (its statistics) a failed built-in expectation found
    unexpected; 0 where the statistics cannot tell."""
    column, kind = result.column, result.expectation
    if column is None or column not in stats["columns"]:
        return 0
    if kind == "expect_column_values_to_not_be_null":
        return stats["columns"][column]["missing"]
    if column == target_column and kind == "expect_column_values_to_be_in_set":
        return stats["target"]["outside"]["count"]
    if kind == DTYPE_EXPECTATION:
        return stats["non_numbers"].get(column, {"count": 0})["count"]
    if kind == "expect_column_values_to_be_between":
        found = stats["ranges"].get(column, {"count": 0})["count"]
        return found + stats["non_numbers"].get(column, {"count": 0})["count"]
    if kind == "expect_column_values_to_be_in_set":
        return stats["value_sets"].get(column, {"count": 0})["count"]
    return 0


def name_parts(
    report: ValidationReport, parts: Sequence[tuple[str, dict]], target_column: str
) -> ValidationReport:
    """The report with each failed expectation's details naming the parts (files) that hold
    its unexpected values: ``parts`` are (name, ``batch_statistics``) in order. A report of one
    part is returned as it is."""
    if len(parts) < 2 or report.success:
        return report
    results = []
    for result in report.results:
        found = [] if result.success else [
            (name, _unexpected_in(result, stats, target_column)) for name, stats in parts
        ]  # fmt: skip
        found = [(name, n) for name, n in found if n]
        if found:
            found.sort(key=lambda item: -item[1])  # the most first, else in part order
            shown = ", ".join(f"{name} ({n:,})" for name, n in found[:3])
            more = f" and {len(found) - 3:,} more" if len(found) > 3 else ""
            where = f"in {counted(len(found), 'part')} of {len(parts):,}: {shown}{more}"
            result = replace(result, details=f"{result.details}; {where}")
        results.append(result)
    return replace(report, results=tuple(results))


def _categorical(item: dict, stats: dict) -> bool:
    return _merged_dtype(stats["columns"][item["kwargs"]["column"]]["dtypes"])[1]
