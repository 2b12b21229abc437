"""The fifth round's study (docs/benchmarks.md): benchmarks/cv.py with the out-of-fold abstain margin set.

    python benchmarks/abstain_study.py SE DATASETS...
"""
import sys
import libre_lib.estimator as E
E.ABSTAIN_STANDARD_ERRORS = float(sys.argv[1])
sys.argv = ["cv.py", "--datasets", *sys.argv[2:]]
sys.path.insert(0, "benchmarks")
import runpy
runpy.run_path("benchmarks/cv.py", run_name="__main__")
