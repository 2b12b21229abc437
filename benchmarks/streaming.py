"""Training on tables larger than memory: ``libre train`` on synthetic Parquet data, in memory
or streamed, with its wall time, the peak RSS of its process tree and where the time went.

    python benchmarks/streaming.py --rows 1000000 --mode memory --no-tuning
    python benchmarks/streaming.py --rows 1000000 --mode memory
    python benchmarks/streaming.py --rows 1000000 20000000 100000000 --mode streamed
    python benchmarks/streaming.py --rows 20000000 --mode streamed --layout dir --runner dask
    python benchmarks/streaming.py --rows 1000000 --mode memory --no-tuning --json

The data is ``make_frame(n, seed=..., messy=True)`` of benchmarks/synthetic.py (``x0 .. x9``,
the irrelevant categorical ``c3`` and ``c20``, 1 % missing cells, the learnable label with 5 %
noise as the int8 column ``label``; Bayes-optimal F1 0.893, ``BAYES`` of
benchmarks/growth_quality.py), written chunk by chunk (1,048,576 rows per chunk, chunk ``i``
drawn with seed ``seed * 1000 + i``, so at most one chunk is ever in memory) either as one
Parquet file of 1,048,576-row row groups (``--layout file``) or as a directory of one file
per chunk, ``part-00000.parquet`` ... (``--layout dir``); both layouts hold the same rows, and
1,000,000 rows are exactly ``make_frame(1_000_000, seed=0, messy=True)``. Files are kept in
``--cache`` (default benchmarks/.data/, git-ignored) and reused by later runs with the same
rows, seed and layout.

Each run writes a spec (target ``label``, positive class "1", ``c3`` and ``c20`` categorical,
``data.streamed: true`` with ``--mode streamed``, ``false`` with ``--mode memory`` (no
``streamed`` key if the installed pipeline predates it), ``"auto"`` with ``--mode auto``,
``data.batch_rows`` only if ``--batch-rows`` is given, ``runner: {kind: dask, n_workers: 2}``
with ``--runner dask``, the default tuning unless ``--no-tuning``) and a fresh store in a work
folder (a temporary one, removed afterwards, unless ``--work DIR``), and runs
``libre train SPEC --force --debug`` in a child process; ``--debug`` keeps Prefect's log
lines, whose timestamps give the time per stage. Sizes run one after the other (the machine
is shared). While a run lasts, the RSS of the child and all its descendants (the temporary
Prefect server, Dask's workers) is summed every 0.2 s: the largest sum is the "peak RSS"
(pages shared between processes count once per process, so it errs high). A tree above
``--max-rss-gib`` (default 80 % of the machine's memory) is killed and the run reported as
such. If ``PREFECT_API_URL`` points at a running server (``libre server start``), that server
is not in the tree.

Per-stage seconds: the pipeline records no stage durations (run.json holds the flow's total
``seconds``; ``tune`` artifacts hold their own fit seconds), so they are read off Prefect's
"Finished in state" log lines: a stage's time is from the end of the stage before it (the
start of the pipeline's subflow for the first) to the end of its last task, so mapped stages
(``tune``, ``learn``, their task count after ``x``) count their parallel tasks once, and the
pipeline's own work between tasks counts in the next stage. ``start`` is the time before the
subflow began (imports, the temporary Prefect server), ``end`` the time after the last task.

Prints one markdown table row per run: rows, layout, mode, runner, tuning, wall seconds, peak
RSS (GiB), holdout F1 and rules from the run folder's run.json, and the seconds per stage;
``--json`` prints one JSON object per run instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _machine import kill_tree, ram_gib, tree_rss  # noqa: E402
from growth_quality import BAYES  # noqa: E402
from synthetic import make_frame  # noqa: E402

ROW_GROUP = 1 << 20  # rows per row group, and per generated chunk
CHUNK_SEEDS = 1000  # chunk i of seed s is drawn with seed s * CHUNK_SEEDS + i
SAMPLE_S = 0.2
GIB = 2**30
NAME = "streaming-benchmark"

_LOG = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) \| \w+\s*\| (.*)$")
_EXCEPTION = re.compile(r"^[\w.]*(Error|Exception|Interrupt)\b.*: ")
_FINISHED = re.compile(r"^Task run '([^']+)' - Finished in state (\w+)")


# ------------------------------------------------------------------------------------- data


def chunk_sizes(n: int) -> list[int]:
    sizes = [ROW_GROUP] * (n // ROW_GROUP) + ([n % ROW_GROUP] if n % ROW_GROUP else [])
    if len(sizes) > CHUNK_SEEDS:
        raise SystemExit(f"{n:,} rows is more than {CHUNK_SEEDS} chunks of {ROW_GROUP:,}")
    return sizes


def chunks(n: int, seed: int):
    """The rows as Arrow tables of at most ROW_GROUP rows, one drawn at a time."""
    schema = None
    for i, size in enumerate(chunk_sizes(n)):
        frame, y = make_frame(size, seed=seed * CHUNK_SEEDS + i, messy=True)
        frame["label"] = y.astype(np.int8)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        del frame, y
        if schema is None:
            schema = table.schema
        yield table.cast(schema)


def data_path(cache: Path, n: int, seed: int, layout: str) -> Path:
    stem = f"messy-{n}-seed{seed}"
    return cache / (f"{stem}.parquet" if layout == "file" else f"{stem}-parts")


def stored_rows(path: Path, layout: str) -> int | None:
    """Rows of a complete data file or folder (None if absent or unreadable)."""
    try:
        if layout == "file":
            return pq.ParquetFile(path).metadata.num_rows
        parts = sorted(path.glob("part-*.parquet"))
        return sum(pq.ParquetFile(p).metadata.num_rows for p in parts) if parts else None
    except (OSError, pa.ArrowException):
        return None


def size_of(path: Path) -> int:
    files = sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]
    return sum(p.stat().st_size for p in files)


def ensure_data(cache: Path, n: int, seed: int, layout: str) -> tuple[Path, float | None]:
    """The data's path and the seconds its writing took (None: reused). Written under a
    temporary name and renamed when complete, so an interrupted write is never reused."""
    path = data_path(cache, n, seed, layout)
    if path.exists() and stored_rows(path, layout) == n:
        return path, None
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if layout == "file":
        writer = None
        try:
            for table in chunks(n, seed):
                if writer is None:
                    writer = pq.ParquetWriter(temp, table.schema)
                writer.write_table(table, row_group_size=ROW_GROUP)
        finally:
            if writer is not None:
                writer.close()
    else:
        temp.mkdir()
        for i, table in enumerate(chunks(n, seed)):
            pq.write_table(table, temp / f"part-{i:05d}.parquet", row_group_size=ROW_GROUP)
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    temp.rename(path)
    return path, time.perf_counter() - started


# ------------------------------------------------------------------------------------- spec


def knows_streamed() -> bool:
    """Does the installed pipeline's spec have ``data.streamed`` (whose default, "auto", streams
    a directory or a large file, so that memory mode must say ``streamed: false``)?"""
    from libre_lib.ops.spec import DataSource

    return "streamed" in DataSource.model_fields


def write_spec(folder: Path, data: Path, args) -> Path:
    source: dict = {"path": str(data), "format": "parquet"}
    if args.mode != "memory" or knows_streamed():
        source["streamed"] = {"streamed": True, "memory": False, "auto": "auto"}[args.mode]
    if args.batch_rows is not None:
        source["batch_rows"] = args.batch_rows
    raw = {
        "name": NAME,
        "description": "Synthetic rows of benchmarks/synthetic.py (messy=True).",
        "data": source,
        "store": str(folder / "store"),
        "target": {"column": "label", "positive_class": "1", "classes": ["0", "1"]},
        "features": {"categorical": ["c3", "c20"]},
        "expectations": {"min_rows": 1000, "max_missing_fraction": 0.05},
        "model": {"random_state": 0},
    }
    if args.no_tuning:
        raw["tuning"] = {"enabled": False}
    if args.runner == "dask":
        raw["runner"] = {"kind": "dask", "n_workers": 2}
    path = folder / f"{NAME}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


# -------------------------------------------------------------------------------------- run


def libre_command() -> str:
    beside = Path(sys.executable).with_name("libre")
    found = str(beside) if beside.exists() else shutil.which("libre")
    if not found:
        raise SystemExit("the `libre` command is not installed (pip install -e .)")
    return found


def train(spec: Path, folder: Path, max_rss: float, timeout: float | None) -> dict:
    """``libre train SPEC --force --debug`` in a child; its tree's RSS sampled every 0.2 s."""
    import psutil

    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "INFO", "COLUMNS": "200", "NO_COLOR": "1"}
    cmd = [libre_command(), "train", str(spec), "--force", "--debug"]
    out_path, err_path = folder / "stdout.txt", folder / "stderr.txt"
    status = "ok"
    peak, largest = 0, 0
    began = datetime.now()
    started = time.perf_counter()
    with out_path.open("w") as out, err_path.open("w") as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=folder)
        proc = psutil.Process(child.pid)
        while child.poll() is None:
            total, single = tree_rss(proc)
            peak, largest = max(peak, total), max(largest, single)
            if peak > max_rss:
                status = f"killed above {max_rss / GIB:.1f} GiB"
                kill_tree(proc)
            elif timeout and time.perf_counter() - started > timeout:
                status = f"stopped after {timeout:.0f} s"
                kill_tree(proc)
            time.sleep(SAMPLE_S)
    wall = time.perf_counter() - started
    stdout, stderr = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    if status == "ok" and child.returncode != 0:
        status = f"failed (exit {child.returncode}): {error_message(stderr or stdout)}"
    return {
        "status": status,
        "wall_s": wall,
        "peak_rss_gib": peak / GIB,
        "max_process_rss_gib": largest / GIB,
        "stage_s": stage_seconds(stderr, began, wall, "end" if status == "ok" else "unfinished"),
    }


def error_message(text: str) -> str:
    """The exception a traceback ends with (its lines joined: the console wraps them), else the
    last line; at most 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if _EXCEPTION.match(line)]
    if not starts:
        return (lines[-1] if lines else "")[:300]
    message = []
    for line in lines[starts[-1] :]:
        if _LOG.match(line):  # a log line after the traceback
            break
        message.append(line)
    return " ".join(message)[:300]


def stage_seconds(log: str, began: datetime, wall: float, last: str = "end") -> dict[str, dict]:
    """Seconds per stage from Prefect's log lines (see the module doc), in pipeline order,
    with ``start`` and ``last`` (the time after the last finished task: "end", or
    "unfinished" for a run that did not finish); empty if the log has no task lines."""
    day, latest = began.replace(hour=0, minute=0, second=0, microsecond=0), None
    subflow, ends, tasks = None, {}, {}
    for line in log.splitlines():
        match = _LOG.match(line)
        if not match:
            continue
        h, m, s, ms, message = match.groups()
        when = day + timedelta(hours=int(h), minutes=int(m), seconds=int(s), milliseconds=int(ms))
        if latest is not None and when < latest - timedelta(hours=12):  # past midnight
            day += timedelta(days=1)
            when += timedelta(days=1)
        latest = when
        if subflow is None and re.search(r"Beginning (sub)?flow run", message):
            subflow = when
        finished = _FINISHED.match(message)
        if finished:
            stage = finished.group(1).split("-", 1)[0]
            ends[stage] = max(ends.get(stage, when), when)
            tasks[stage] = tasks.get(stage, 0) + 1
    if subflow is None or not ends:
        return {}
    result = {"start": {"seconds": (subflow - began).total_seconds(), "tasks": 0}}
    previous = subflow
    for stage, end in sorted(ends.items(), key=lambda item: item[1]):
        result[stage] = {"seconds": (end - previous).total_seconds(), "tasks": tasks[stage]}
        previous = end
    result[last] = {"seconds": wall - (previous - began).total_seconds(), "tasks": 0}
    return result


def run_summary(store: Path) -> dict:
    """The newest run.json of the benchmark's pipeline in ``store`` (empty if none)."""
    runs = sorted((store / "runs" / NAME).glob("*/run.json"))
    return json.loads(runs[-1].read_text()) if runs else {}


def measure(n: int, args, max_rss: float) -> dict:
    data, gen_s = ensure_data(args.cache, n, args.seed, args.layout)
    if gen_s is not None:
        print(f"wrote {data} ({n:,} rows) in {gen_s:.0f} s", file=sys.stderr, flush=True)
    label = f"{n}-{args.layout}-{args.mode}-{args.runner}" + ("-notune" if args.no_tuning else "")
    if args.work is not None:
        folder = args.work / label
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix=f"libre-streaming-{label}-"))
    try:
        spec = write_spec(folder, data, args)
        result = train(spec, folder, max_rss, args.timeout)
        summary = run_summary(folder / "store")
    finally:
        if args.work is None:
            shutil.rmtree(folder, ignore_errors=True)
    metrics = summary.get("metrics", {})
    return {
        "rows": n,
        "layout": args.layout,
        "mode": args.mode,
        "runner": args.runner,
        "tuning": not args.no_tuning,
        "batch_rows": args.batch_rows,
        "seed": args.seed,
        "data": str(data),
        "data_bytes": size_of(data),
        "generate_s": gen_s,
        **result,
        "f1": metrics.get("f1"),
        "rules": metrics.get("n_rules"),
        "bayes_f1": BAYES[True],
        "flow_s": summary.get("seconds"),
        "work": str(folder) if args.work is not None else None,
    }


# ----------------------------------------------------------------------------------- output

HEADER = (
    "| rows | layout | mode | runner | tuning | wall s | peak RSS GiB | holdout F1 | rules "
    "| seconds per stage |\n|---:|---|---|---|---|---:|---:|---:|---:|---|"
)


def stages_text(stage_s: dict[str, dict]) -> str:
    if not stage_s:
        return "(no Prefect log lines)"
    parts = []
    for stage, entry in stage_s.items():
        name = stage + (f" x{entry['tasks']}" if entry["tasks"] > 1 else "")
        parts.append(f"{name} {entry['seconds']:.1f}")
    return ", ".join(parts)


def row(r: dict) -> str:
    f1 = "" if r["f1"] is None else f"{r['f1']:.3f}"
    rules = "" if r["rules"] is None else str(r["rules"])
    wall = f"{r['wall_s']:.0f}"
    if r["status"] != "ok":
        wall = r["status"] + ("" if r["status"].startswith("stopped") else f" ({wall} s)")
        wall = wall.replace("|", "\\|")
    return (
        f"| {r['rows']:,} | {r['layout']} | {r['mode']} | {r['runner']} | "
        f"{'on' if r['tuning'] else 'off'} | {wall} | {r['peak_rss_gib']:.2f} | {f1} | {rules} | "
        f"{stages_text(r['stage_s'])} |"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", choices=["file", "dir"], default="file")
    parser.add_argument("--mode", choices=["streamed", "memory", "auto"], default="streamed")
    parser.add_argument("--runner", choices=["thread", "dask"], default="thread")
    parser.add_argument("--no-tuning", action="store_true", help="tuning.enabled: false")
    parser.add_argument("--batch-rows", type=int, help="data.batch_rows (default: the pipeline's)")
    parser.add_argument("--cache", type=Path, default=HERE / ".data", help="the data files")
    parser.add_argument("--work", type=Path, help="keep each run's spec, store and logs here")
    parser.add_argument("--max-rss-gib", type=float, help="kill a run's tree above this")
    parser.add_argument("--timeout", type=float, help="stop a run after this many seconds")
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args(argv)
    if not 0 <= args.seed < 2**63 // CHUNK_SEEDS:
        parser.error("--seed must be a non-negative int")
    max_rss = args.max_rss_gib * GIB if args.max_rss_gib else 0.8 * (ram_gib() or 8.0) * GIB
    if not args.json:
        print(HEADER, flush=True)
    for n in args.rows:
        r = measure(n, args, max_rss)
        print(json.dumps(r) if args.json else row(r), flush=True)


if __name__ == "__main__":
    main()
