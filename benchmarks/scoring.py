"""Batch scoring throughput and peak memory as the input grows (``libre_lib.ops.scoring``).

    python benchmarks/scoring.py --rows 1000000 10000000 [--batch-rows 100000] [--csv]
    python benchmarks/scoring.py --rows 1000000 10000000 --update-docs   # docs/benchmarks.md

A model is trained on a small synthetic sample (20 000 rows: 6 numeric and 3 categorical
features, the target from a hidden rule plus noise). For each size, synthetic rows are written
in chunks to Parquet files (1M rows per file, row groups of 100 000) in a temp folder, with a
little drift (unseen categories, values beyond the training range, extra missing values).
Each size is scored by ``score_files`` in a fresh Python process, which reports rows/second
and its peak RSS (``resource.getrusage``), so one size's memory cannot leak into the next.
Peak memory should stay roughly flat as rows grow, since only a batch is in memory at a time.
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
FILE_ROWS = 1_000_000
CHUNK_ROWS = 250_000
ROW_GROUP = 100_000
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


def train(folder: Path) -> tuple[Path, Path]:
    """Fit on a 20 000-row sample; write model.json and contract.json into ``folder``."""
    from libre_lib import LibreClassifier, LibreWarning
    from libre_lib.ops.contract import DataContract

    sample = synthetic(20_000, seed=1)
    X = sample.drop(columns=["id"])
    model = LibreClassifier(positive_class="churn", n_estimators=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model.fit(X, target(X, 1))
    (folder / "model.json").write_text(model.to_json())
    DataContract.from_model(model, X).save(folder / "contract.json")
    return folder / "model.json", folder / "contract.json"


def generate(folder: Path, n_rows: int, csv: bool = False) -> float:
    """Write n_rows synthetic rows as Parquet (or CSV) files of FILE_ROWS rows, chunk by chunk;
    returns the seconds it took."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    written, part = 0, 0
    while written < n_rows:
        rows_in_file = min(FILE_ROWS, n_rows - written)
        path = folder / (f"part-{part:04d}." + ("csv" if csv else "parquet"))
        writer = None
        done = 0
        while done < rows_in_file:
            n = min(CHUNK_ROWS, rows_in_file - done)
            table = pa.Table.from_pandas(
                synthetic(n, seed=100 + part * 1000 + done // CHUNK_ROWS, drift=True),
                preserve_index=False,
            )
            if csv:
                if writer is None:
                    writer = pacsv.CSVWriter(str(path), table.schema)
                writer.write_table(table)
            else:
                if writer is None:
                    writer = pq.ParquetWriter(str(path), table.schema)
                writer.write_table(table, row_group_size=ROW_GROUP)
            done += n
        writer.close()
        written += rows_in_file
        part += 1
    return time.perf_counter() - started


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child(args) -> None:
    """Runs in a fresh process: score the inputs, print one JSON line."""
    from libre_lib.ops.contract import DataContract
    from libre_lib.ops.scoring import load_model, score_files

    model = load_model(args.model)
    contract = DataContract.load(args.contract)
    baseline = peak_rss_mb()
    summary = score_files(
        model, args.inputs, args.output, batch_rows=args.batch_rows, contract=contract
    )
    print(
        json.dumps(
            {
                "rows": summary.rows,
                "batches": summary.batches,
                "seconds": summary.seconds,
                "rows_per_second": summary.rows_per_second,
                "baseline_rss_mb": baseline,
                "peak_rss_mb": peak_rss_mb(),
                "output_mb": Path(args.output).stat().st_size / 2**20,
                "warnings": len(summary.warnings),
            }
        )
    )


def run_size(workdir: Path, model: Path, contract: Path, n_rows: int, batch_rows: int, csv: bool):
    inputs = workdir / f"in-{n_rows}"
    gen_s = generate(inputs, n_rows, csv=csv)
    output = workdir / f"out-{n_rows}.parquet"
    command = [
        sys.executable,
        __file__,
        "--child",
        "--model",
        str(model),
        "--contract",
        str(contract),
        "--inputs",
        str(inputs),
        "--output",
        str(output),
        "--batch-rows",
        str(batch_rows),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(n_rows=n_rows, generate_s=gen_s, format="CSV" if csv else "Parquet")
    shutil.rmtree(inputs)
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


def table(results) -> str:
    lines = [
        "| rows | format | batches | seconds | rows/s | peak RSS (MiB) | RSS before scoring (MiB) "
        "| output (MiB) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['n_rows']:,} | {r['format']} | {r['batches']} | {r['seconds']:.1f} | "
            f"{r['rows_per_second']:,.0f} | {r['peak_rss_mb']:.0f} | {r['baseline_rss_mb']:.0f} | "
            f"{r['output_mb']:.0f} |"
        )
    return "\n".join(lines)


def flatness(results) -> list[str]:
    """One sentence comparing peak RSS of the smallest and largest Parquet runs."""
    parquet = sorted((r for r in results if r["format"] == "Parquet"), key=lambda r: r["n_rows"])
    if len(parquet) < 2:
        return []
    small, large = parquet[0], parquet[-1]
    return [
        f"Rows grew {large['n_rows'] / small['n_rows']:.0f}x ({small['n_rows']:,} to "
        f"{large['n_rows']:,}) while peak RSS went from {small['peak_rss_mb']:.0f} to "
        f"{large['peak_rss_mb']:.0f} MiB: memory is bounded by the batch size, not the input "
        f"size. Scoring adds about {large['peak_rss_mb'] - large['baseline_rss_mb']:.0f} MiB to "
        "the process (most of the rest is the imports: pandas, pyarrow, scikit-learn). "
        "Throughput is about the same at every size; much of the time is the Parquet "
        "writing of the input columns plus the four score columns.",
        "",
    ]


def update_docs(section: str) -> None:
    """Replace only our marked section of docs/benchmarks.md (others write other sections)."""
    replace_marked_section(DOCS, START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--batch-rows", type=int, default=100_000)
    parser.add_argument("--csv", action="store_true", help="also score CSV inputs (1st size)")
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--contract", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="libre-scoring-bench-") as tmp:
        workdir = Path(tmp)
        model, contract = train(workdir)
        from libre_lib.ops.scoring import load_model

        n_rules = len(load_model(model).rules_)
        print(f"model: {n_rules} rules, trained on 20,000 synthetic rows", flush=True)
        runs = [(n, False) for n in args.rows]
        if args.csv:
            runs.append((args.rows[0], True))
        for n_rows, csv in runs:
            result = run_size(workdir, model, contract, n_rows, args.batch_rows, csv)
            results.append(result)
            print(json.dumps(result), flush=True)
    command = "python benchmarks/scoring.py " + " ".join(sys.argv[1:])
    section = "\n".join(
        [
            "## Scoring",
            "",
            "Batch scoring (`libre_lib.ops.scoring.score_files`: contract check per batch, rules, "
            "explanations, one Parquet output written atomically) of synthetic rows: 10 "
            f"columns (6 numeric, 3 categorical, an id), a {n_rules}-rule model trained on "
            f"20,000 rows, batches of {args.batch_rows:,} rows, inputs in files of "
            f"{FILE_ROWS:,} rows (Parquet row groups of {ROW_GROUP:,}) with a little drift. "
            "Each size runs in a fresh process; peak RSS is that process's "
            '`resource.getrusage` maximum (imports included; "RSS before scoring" is the '
            "peak after imports and loading the model).",
            "",
            table(results),
            "",
            *flatness(results),
            f"Machine: {machine()}.",
            "",
            f"Command: `{command}` ({time.strftime('%Y-%m-%d')}).",
        ]
    )
    print()
    print(section)
    if args.update_docs:
        update_docs(section)
        print(f"\nwrote the Scoring section of {DOCS}")


if __name__ == "__main__":
    main()
