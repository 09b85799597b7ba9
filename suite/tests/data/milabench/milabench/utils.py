# Excerpt of milabench's milabench/utils.py (commit faf39234, MIT: see LICENSE): only what
# summary.py and report/__init__.py use, lines 7-8, 11 and 64-83 verbatim; the rest of the module
# imports packages the report does not need.
import sys
import traceback
from functools import wraps


def error_guard(default_return):
    def deco(fn):
        @wraps(fn)
        def wrapped(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                print("=" * 80, file=sys.stderr)
                print("A non-fatal error happened", file=sys.stderr)
                print("=" * 80, file=sys.stderr)
                traceback.print_exc()
                return (
                    default_return(*args, **kwargs)
                    if callable(default_return)
                    else default_return
                )

        return wrapped

    return deco
