"""Peak memory and time of the default ``LibreSearchCV`` on the development datasets.

    python benchmarks/search_memory.py [--datasets pima magic] [--n-jobs 1 2] [--json FILE]
    python benchmarks/search_memory.py --update-docs          # docs/benchmarks.md
    python benchmarks/search_memory.py --from-json FILE --update-docs

Each dataset is split 80/20 (stratified, seed 0) as a user would, and
``LibreSearchCV(positive_class=..., random_state=0, n_jobs=n).fit`` runs on the 80 % in a
fresh child process (after a tiny warm-up fit that loads numba's cached kernels, not timed).
While it runs, the RSS of the child and all its descendants (joblib's worker processes) is
summed every 50 ms: that sum's maximum is the "peak RSS" reported (pages shared between
processes count once per process, so it errs high); the largest single process's sampled RSS
is reported beside it. (``ru_maxrss`` cannot serve: a child inherits its parent's high-water
mark through fork and exec.) Every process of the tree is capped: its address space
by ``--memory-limit`` (``RLIMIT_AS``), the whole tree's sampled RSS by ``--tree-limit`` (the
tree is killed beyond it and the run reported as such), so a search that does not fit can
never push the machine into swapping. Datasets run smallest first. The fingerprint (sha256 of
the chosen parameters, every ``cv_results_`` score and rule count, and the refitted rules) is
what must not change when the search's code is optimized.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _docs import replace_marked_section
from _machine import cpu_model, kill_tree, ram_gib, tree_rss

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- search-memory:start -->", "<!-- search-memory:end -->"
MIB = 2**20


def fingerprint(search) -> str:
    """sha256 (16 hex digits) of what the search decided and scored."""
    import numpy as np

    results = search.cv_results_
    parts = [
        repr(sorted(search.best_params_.items(), key=str)),
        np.asarray(results["mean_test_score"]).round(12).tobytes().hex(),
        np.asarray(results["std_test_score"]).round(12).tobytes().hex(),
        np.asarray(results["mean_n_rules"]).tobytes().hex(),
        np.asarray(results["mean_n_atoms"]).round(12).tobytes().hex(),
        str(search.rules_),
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def estimator_params(pairs: list[str]) -> dict:
    """``NAME=VALUE`` pairs (values as Python literals) for the search's ``estimator``."""
    params = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        params[name] = ast.literal_eval(value)
    return params


def child(name: str, n_jobs: int, memory_limit: int, estimator: dict) -> None:
    """Run one search and print its figures as one JSON line (the parent measures memory)."""
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    import warnings

    import numpy as np
    from sklearn.model_selection import train_test_split

    import libre_lib
    from libre_lib import LibreClassifier, LibreSearchCV
    from libre_lib.datasets import load_dataset

    warnings.simplefilter("ignore")
    X, y, info = load_dataset(name)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    LibreClassifier(positive_class=info.positive_class, random_state=0).fit(
        X_train.iloc[:200], y_train.iloc[:200]
    )
    started = time.perf_counter()
    # names the installed LibreClassifier does not have are ignored, so that one command
    # compares two versions of the library
    known = LibreClassifier().get_params()
    base = LibreClassifier(**{k: v for k, v in estimator.items() if k in known})
    search = LibreSearchCV(
        estimator=base if estimator else None,
        positive_class=info.positive_class,
        random_state=0,
        n_jobs=n_jobs,
    )
    search.fit(X_train, y_train)
    seconds = time.perf_counter() - started
    result = {
        "dataset": name,
        "n_jobs": n_jobs,
        "rows": int(X_train.shape[0]),
        "columns": int(X_train.shape[1]),
        "positives": int(np.sum(np.asarray(y_train) == info.positive_class)),
        "grid_points": len(search.cv_results_["params"]),
        "seconds": seconds,
        "search_seconds": search.search_time_,
        "fingerprint": fingerprint(search),
        "n_rules": len(search.rules_),
        "library": str(Path(libre_lib.__file__).parent),
    }
    print("RESULT " + json.dumps(result), flush=True)


def run_one(name: str, n_jobs: int, args) -> dict:
    """One search in a child process, its process tree's RSS sampled every 50 ms."""
    import psutil

    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, str(n_jobs)]
    cmd += ["--memory-limit", str(args.memory_limit), "--estimator", *args.estimator]
    tree_limit, timeout = args.tree_limit, args.timeout
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child_proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        proc = psutil.Process(child_proc.pid)
        peak, largest, status = 0, 0, "ok"
        while True:
            pid, _, _ = os.wait4(child_proc.pid, os.WNOHANG)
            if pid:
                break
            total, single = tree_rss(proc)
            peak, largest = max(peak, total), max(largest, single)
            if peak > tree_limit:
                status = f"killed above {tree_limit / 2**30:.0f} GiB"
                kill_tree(proc)
            elif time.perf_counter() - started > timeout:
                status = f"stopped after {timeout:.0f} s"
                kill_tree(proc)
            time.sleep(0.05)
        child_proc.returncode = 0  # reaped by wait4 above
        out.seek(0)
        err.seek(0)
        lines = [line for line in out.read().splitlines() if line.startswith("RESULT ")]
        error = err.read().strip().splitlines()
    result = {"dataset": name, "n_jobs": n_jobs, "status": status}
    if lines:
        result.update(json.loads(lines[-1][len("RESULT ") :]))
    elif status == "ok":
        result["status"] = "failed: " + (error or ["no output"])[-1][:200]
    result["elapsed"] = time.perf_counter() - started
    result["peak_rss_mb"] = peak / MIB
    result["max_process_rss_mb"] = largest / MIB
    return result


def machine() -> str:
    import numpy as np
    import sklearn

    gib = ram_gib()
    mem = "" if gib is None else f", {gib:.1f} GiB RAM"
    return (
        f"`nproc` {os.cpu_count()}, {cpu_model()}{mem}; Python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}"
    )


def table(results: list[dict]) -> str:
    lines = [
        "| dataset | training rows | columns | positives | grid points | n_jobs | fit s "
        "| peak RSS MiB (tree) | largest process MiB | rules | fingerprint |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if r["status"] != "ok":
            lines.append(
                f"| {r['dataset']} | {r.get('rows', '')} | {r.get('columns', '')} | | | "
                f"{r['n_jobs']} | {r['status']} ({r['elapsed']:.0f} s) | "
                f"{r['peak_rss_mb']:,.0f} | {r['max_process_rss_mb']:,.0f} | | |"
            )
            continue
        lines.append(
            f"| {r['dataset']} | {r['rows']:,} | {r['columns']} | {r['positives']:,} | "
            f"{r['grid_points']:,} | {r['n_jobs']} | {r['seconds']:.1f} | "
            f"{r['peak_rss_mb']:,.0f} | {r['max_process_rss_mb']:,.0f} | {r['n_rules']} | "
            f"`{r['fingerprint']}` |"
        )
    return "\n".join(lines)


def update_docs(section: str) -> None:
    """Replace only our marked section of docs/benchmarks.md (others write other sections)."""
    replace_marked_section(DOCS, START, END, section)


def dataset_order(names: list[str]) -> list[str]:
    """``names`` smallest first (rows x columns), so the large ones run last."""
    from libre_lib.datasets import load_dataset

    size = {name: load_dataset(name)[0].size for name in names}
    return sorted(names, key=lambda name: size[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", help="default: every development dataset")
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--memory-limit", type=int, default=6 * 10**9, help="address space per process, bytes"
    )
    parser.add_argument(
        "--tree-limit", type=int, default=6 * 2**30, help="RSS of the process tree, bytes"
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per search")
    parser.add_argument(
        "--estimator",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        help="LibreClassifier parameters the search does not tune (default: its defaults)",
    )
    parser.add_argument("--json", type=Path, help="append each result to this JSON-lines file")
    parser.add_argument("--from-json", type=Path, help="render saved results instead of running")
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("DATASET", "N_JOBS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(
            args.child[0], int(args.child[1]), args.memory_limit, estimator_params(args.estimator)
        )
        return

    if args.from_json:
        results = [json.loads(line) for line in args.from_json.read_text().splitlines() if line]
    else:
        from libre_lib.datasets import dataset_names

        results = []
        for name in dataset_order(args.datasets or dataset_names()):
            for n_jobs in args.n_jobs:
                result = run_one(name, n_jobs, args)
                results.append(result)
                print(json.dumps(result), flush=True)
                if args.json:
                    with args.json.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(result) + "\n")
    if args.from_json:
        command = "python benchmarks/search_memory.py --json FILE`, rendered by `--from-json FILE"
    else:
        command = "python benchmarks/search_memory.py " + " ".join(
            a for a in sys.argv[1:] if a != "--update-docs"
        )
    section = "\n".join(
        [
            f"Machine: {machine()}.",
            "",
            f"Command: `{command.strip()}` ({time.strftime('%Y-%m-%d')}).",
            "",
            table(results),
        ]
    )
    print(section)
    if args.update_docs:
        update_docs(section)


if __name__ == "__main__":
    main()
