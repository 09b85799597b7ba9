"""Reads a giving run folder with milabench's own report code (the copy in ./milabench) and
prints, as one JSON object, what milabench makes of it: its summary (`make_summary`) and the
Breakdown rows and Scores of its report (`make_report`), without weights and with the weights
given as a JSON file.

Usage: python milabench_report.py RUN_DIR [WEIGHTS.json]

Called by suite/tests/milabench_report.rs; giving's code, not milabench's.
"""

import io
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "milabench"))

from milabench.report import make_report  # noqa: E402
from milabench.summary import make_summary  # noqa: E402


def read_reports(folder):
    """What milabench's `common._read_reports` does: every `*.data` file, one JSON per line."""
    reports = {}
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".data"):
                path = os.path.join(parent, name)
                with open(path) as f:
                    reports[path] = [json.loads(line) for line in f if line.strip()]
    return reports


def clean(x):
    """numpy scalars as Python numbers, NaN as None (JSON has no NaN)."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def report(summary, weights):
    stream = io.StringIO()
    df = make_report(summary, weights=weights, stream=stream)
    text = stream.getvalue()
    rows = {name: dict(row) for name, row in df.iterrows()}
    failure = re.search(r"Failure rate:\s*(-?[\d.]+)%", text)
    score = re.search(r"Score:\s*(-?[\d.]+|nan)", text)
    return {
        "rows": rows,
        "failure_rate_pct": float(failure.group(1)) if failure else None,
        "score": float(score.group(1)) if score else None,
        "text": text,
    }


def main():
    run = sys.argv[1]
    weights = {}
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            weights = json.load(f)
    # make_summary changes what it is given: each report is made from a fresh one.
    summary = make_summary(read_reports(run))
    out = {
        "summary": summary,
        "report": report(make_summary(read_reports(run)), {}),
        "weighted": report(make_summary(read_reports(run)), weights),
    }
    print(json.dumps(clean(out)))


if __name__ == "__main__":
    main()
