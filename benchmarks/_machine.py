"""What machine a benchmark ran on, and the memory of a process tree (shared by the benchmark
scripts)."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def ram_gib() -> float | None:
    """Total memory in GiB (MemTotal of /proc/meminfo), None where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return None


def tree_rss(proc) -> tuple[int, int]:
    """RSS of ``proc`` (a psutil process) and its descendants: (sum, largest)."""
    import psutil

    sizes = [0]
    for p in [proc, *proc.children(recursive=True)]:
        try:
            sizes.append(p.memory_info().rss)
        except psutil.Error:
            pass
    return sum(sizes), max(sizes)


def kill_tree(proc) -> None:
    """Kill ``proc`` (a psutil process) and its descendants, children first."""
    import psutil

    for p in [*proc.children(recursive=True), proc]:
        try:
            p.kill()
        except psutil.Error:
            pass
