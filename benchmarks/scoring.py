"""Batch scoring time and peak memory as the input grows (``libre score``).

    python benchmarks/scoring.py --rows 1000000 10000000 [--formats parquet csv]
        [--data /tmp/libre-scoring-bench] [--json before.json] [--before before.json]
        [--update-docs]

A model is trained on a small synthetic sample (20 000 rows: 6 numeric and 3 categorical
features, the target from a hidden rule plus noise) and saved with its data contract. For each
size and format, the input is one file of synthetic rows with a little drift (unseen
categories, values beyond the training range, extra missing values); Parquet files get row
groups of 1,048,576 rows, what ``DataFrame.to_parquet`` and ``pyarrow.parquet.write_table``
write by default. With ``--data`` the model and the inputs are kept in that folder and reused
by later runs (a 10M-row input is generated once), else they live in a temp folder.

Each input is scored in a fresh Python process by ``libre_flows.flows.score.score``, the
Prefect flow ``libre score MODEL INPUTS OUTPUT`` runs (input check, streamed scoring, scoring
report; Prefect's temporary server runs in its own process). The process reports the scoring
task's seconds, the whole run's seconds and its peak RSS (VmHWM), so one
size's memory cannot leak into the next. ``--json`` saves the results; ``--before`` adds the
results a run of another version saved, as "before" columns.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _docs import replace_marked_section
from _machine import cpu_model, ram_gib

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- scoring:start -->", "<!-- scoring:end -->"
CHUNK_ROWS = 262_144
ROW_GROUP = 1_048_576  # pyarrow.parquet.write_table's default
RESULT = "RESULT "
CITIES = np.array(["paris", "rome", "oslo", "lima", "kyiv", "pune", "baku", "riga"])
PLANS = np.array(["basic", "plus", "pro"])
CHANNELS = np.array(["web", "store", "phone", "partner"])


def synthetic(n: int, seed: int, drift: bool = False):
    """n rows of the synthetic scoring data as a pandas DataFrame."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64) + seed * 10**9,
            "age": rng.integers(18, 90, n).astype(np.float64),
            "income": rng.lognormal(10, 0.6, n),
            "tenure": rng.exponential(4.0, n),
            "balance": rng.normal(1000, 400, n),
            "visits": rng.poisson(3, n).astype(np.float64),
            "score_a": rng.uniform(0, 1, n),
            "city": CITIES[rng.integers(0, len(CITIES), n)],
            "plan": PLANS[rng.integers(0, len(PLANS), n)],
            "channel": CHANNELS[rng.integers(0, len(CHANNELS), n)],
        }
    )
    frame.loc[rng.random(n) < 0.02, "income"] = np.nan
    frame["channel"] = frame["channel"].where(rng.random(n) >= 0.03, None)
    if drift:
        frame.loc[rng.random(n) < 0.001, "city"] = "atlantis"
        frame.loc[rng.random(n) < 0.001, "age"] = 130.0
        frame.loc[rng.random(n) < 0.05, "tenure"] = np.nan
    return frame


def target(frame, seed: int):
    rng = np.random.default_rng(seed + 1)
    rule = ((frame["age"] > 60) & (frame["plan"] == "pro")) | (
        (frame["tenure"] < 1.0) & frame["city"].isin(["oslo", "riga"])
    )
    noise = rng.random(len(frame)) < 0.05
    return np.where(rule.to_numpy() ^ noise, "churn", "stay")


def train(folder: Path) -> Path:
    """Fit on a 20 000-row sample; write model.json and contract.json into ``folder`` (kept
    when they are already there); returns the model's path."""
    from libre_lib import LibreClassifier, LibreWarning
    from libre_lib.ops.contract import DataContract

    model_path, contract_path = folder / "model.json", folder / "contract.json"
    if model_path.is_file() and contract_path.is_file():
        return model_path
    sample = synthetic(20_000, seed=1)
    X = sample.drop(columns=["id"])
    model = LibreClassifier(positive_class="churn", n_estimators=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model.fit(X, target(X, 1))
    folder.mkdir(parents=True, exist_ok=True)
    DataContract.from_model(model, X).save(contract_path)
    model_path.write_text(model.to_json())
    return model_path


def generate(folder: Path, n_rows: int, fmt: str) -> Path:
    """One input file of n_rows synthetic rows, written chunk by chunk (Parquet row groups of
    ROW_GROUP rows); kept and reused when a complete one is already in ``folder``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = folder / f"{fmt}-{n_rows}" / f"data.{fmt}"
    done_marker = path.with_name(".complete")
    if path.is_file() and done_marker.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    writer, pending, n_pending, chunk = None, [], 0, 0
    for start in range(0, n_rows, CHUNK_ROWS):
        n = min(CHUNK_ROWS, n_rows - start)
        table = pa.Table.from_pandas(synthetic(n, 100 + chunk, drift=True), preserve_index=False)
        chunk += 1
        if writer is None:
            kind = pacsv.CSVWriter if fmt == "csv" else pq.ParquetWriter
            writer = kind(str(path), table.schema)
        if fmt == "csv":
            writer.write_table(table)
            continue
        pending.append(table)
        n_pending += n
        if n_pending >= ROW_GROUP or start + n == n_rows:
            writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP)
            pending, n_pending = [], 0
    writer.close()
    done_marker.write_text("")
    return path


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM on Linux (``ru_maxrss`` would include the parent's RSS
    at the fork before this process's exec), else ``resource.getrusage``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0  # kB
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child(args) -> None:
    """Runs in a fresh process: score the input as ``libre score`` does, print one result."""
    from libre_flows.flows.score import score
    from libre_lib.ops.scoring import load_model

    load_model(args.model)
    baseline = peak_rss_mb()
    started = time.perf_counter()
    summary = score(args.model, args.inputs, args.output, batch_rows=args.batch_rows)
    wall = time.perf_counter() - started
    result = {
        "rows": summary["rows"],
        "batches": summary["batches"],
        "seconds": summary["seconds"],
        "wall_seconds": wall,
        "rows_per_second": summary["rows_per_second"],
        "baseline_rss_mb": baseline,
        "peak_rss_mb": peak_rss_mb(),
        "output_mb": Path(args.output).stat().st_size / 2**20,
        "warnings": len(summary["warnings"]),
    }
    print(RESULT + json.dumps(result), flush=True)


def run_one(data: Path, model: Path, n_rows: int, fmt: str, batch_rows: int) -> dict:
    inputs = generate(data, n_rows, fmt)
    output = data / f"scored-{fmt}-{n_rows}.parquet"
    command = [
        sys.executable,
        __file__,
        "--child",
        "--model",
        str(model),
        "--inputs",
        str(inputs),
        "--output",
        str(output),
        "--batch-rows",
        str(batch_rows),
    ]
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT, env=env)
    lines = [x for x in done.stdout.splitlines() if x.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise SystemExit(done.stdout[-3000:] + done.stderr[-3000:])
    result = json.loads(lines[-1][len(RESULT) :])
    result.update(n_rows=n_rows, format="CSV" if fmt == "csv" else "Parquet")
    output.unlink()
    return result


def machine() -> str:
    cpu = cpu_model()
    gib = ram_gib()
    mem = "" if gib is None else f", {gib:.0f} GiB RAM"
    import pandas as pd
    import pyarrow as pa

    return (
        f"{os.cpu_count()} cores ({cpu}){mem}; Python {platform.python_version()}, "
        f"pandas {pd.__version__}, pyarrow {pa.__version__}"
    )


def _key(r: dict) -> tuple:
    return (r["format"], r["n_rows"])


def table(results: list[dict], before: list[dict]) -> str:
    old = {_key(r): r for r in before}
    head = ["rows", "format", "batches"]
    cols = [
        ("scoring s", lambda r: f"{r['seconds']:.1f}"),
        ("run s", lambda r: f"{r['wall_seconds']:.1f}"),
        ("peak RSS (MiB)", lambda r: f"{r['peak_rss_mb']:.0f}"),
    ]
    if old:
        names = [f"{name} before → after" for name, _ in cols]
    else:
        names = [name for name, _ in cols]
    lines = [
        "| " + " | ".join(head + names + ["RSS before scoring (MiB)", "output (MiB)"]) + " |",
        "|---:|---|---:|" + "---:|" * len(cols) + "---:|---:|",
    ]
    for r in results:
        prior = old.get(_key(r))
        if old:
            cells = [f"{show(prior) if prior else '–'} → {show(r)}" for _, show in cols]
        else:
            cells = [show(r) for _, show in cols]
        lines.append(
            f"| {r['n_rows']:,} | {r['format']} | {r['batches']} | "
            + " | ".join(cells)
            + f" | {r['baseline_rss_mb']:.0f} | {r['output_mb']:.0f} |"
        )
    return "\n".join(lines)


def growth(results: list[dict], label: str) -> list[str]:
    """One sentence per format comparing peak RSS of its smallest and largest input."""
    out = []
    for fmt in ("Parquet", "CSV"):
        runs = sorted((r for r in results if r["format"] == fmt), key=lambda r: r["n_rows"])
        if len(runs) < 2:
            continue
        small, large = runs[0], runs[-1]
        change = 100.0 * (large["peak_rss_mb"] / small["peak_rss_mb"] - 1.0)
        out.append(
            f"{label}, {fmt}: rows {large['n_rows'] / small['n_rows']:.0f}x "
            f"({small['n_rows']:,} to {large['n_rows']:,}), peak RSS "
            f"{small['peak_rss_mb']:.0f} to {large['peak_rss_mb']:.0f} MiB ({round(change):+d} %)."
        )
    return out


def update_docs(section: str) -> None:
    """Replace only our marked section of docs/benchmarks.md (others write other sections)."""
    replace_marked_section(DOCS, START, END, section)


def render(results, before, args, n_rules) -> str:
    command = "python benchmarks/scoring.py " + " ".join(sys.argv[1:])
    summary = [*growth(before, "Before"), *growth(results, "After" if before else "Now")]
    return "\n".join(
        [
            "## Scoring",
            "",
            "`libre score`'s flow (`libre_flows.flows.score.score`: input check, streamed "
            "scoring with the contract check per batch, rules, explanations, one Parquet output "
            "written atomically, the scoring report) on synthetic rows: 10 columns (6 numeric, "
            f"3 categorical, an id), a {n_rules}-rule model trained on 20,000 rows, batches of "
            f"{args.batch_rows:,} rows, each input one file with a little drift (Parquet row "
            f"groups of {ROW_GROUP:,} rows, the pyarrow and pandas default). Each input runs "
            "in a fresh process; peak RSS is that process's high-water mark (VmHWM, imports "
            'included; "RSS before scoring" is the peak after imports and loading the model); '
            '"scoring s" is the scoring task, "run s" the whole flow (Prefect start included).',
            "",
            table(results, before),
            "",
            *[f"{line}  " for line in summary],
            "",
            f"Machine: {machine()}.",
            "",
            f"Command: `{command}` ({time.strftime('%Y-%m-%d')}).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--formats", nargs="+", choices=["parquet", "csv"], default=["parquet"])
    parser.add_argument("--batch-rows", type=int, default=100_000)
    parser.add_argument("--data", type=Path, help="keep the model and inputs here, for reuse")
    parser.add_argument("--json", type=Path, help="save the results here")
    parser.add_argument("--before", type=Path, help="results of another version (--json)")
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    before = json.loads(args.before.read_text()) if args.before else []
    results = []
    temp = None if args.data else tempfile.mkdtemp(prefix="libre-scoring-bench-")
    data = args.data or Path(temp)
    try:
        model = train(data)
        from libre_lib.ops.scoring import load_model

        n_rules = len(load_model(model).rules_)
        print(f"model: {n_rules} rules, trained on 20,000 synthetic rows", flush=True)
        for fmt in args.formats:
            for n_rows in args.rows:
                result = run_one(data, model, n_rows, fmt, args.batch_rows)
                results.append(result)
                print(json.dumps(result), flush=True)
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    section = render(results, before, args, n_rules)
    print()
    print(section)
    if args.update_docs:
        update_docs(section)
        print(f"\nwrote the Scoring section of {DOCS}")


if __name__ == "__main__":
    main()
