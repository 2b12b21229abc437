"""Thin Prefect tasks: each reads its inputs from the artifact store, calls one stage of
``libre_lib.ops.stages`` (the scoring tasks: of ``libre_lib.ops.scoring``) and writes one
artifact. Tasks exchange small values (stage references, the rule report), never the data; they
never import the flows."""
