"""Thin Prefect tasks: each reads its inputs from the artifact store, calls libre_lib, and
writes one Parquet artifact. Tasks exchange small references, never DataFrames."""
