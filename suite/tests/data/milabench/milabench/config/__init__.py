# Excerpt of milabench's milabench/config/__init__.py (commit faf39234, MIT: see LICENSE): only what
# summary.py and report/__init__.py use, lines 1, 11, 22-23 and 204-207 verbatim; the rest of the module
# imports packages the report does not need.
import contextvars

config_global = contextvars.ContextVar("config", default=None)


def get_config_global():
    return _filter_config(config_global.get())


def _filter_config(config, filter= lambda dfn: not (dfn["name"].startswith("_") or dfn["name"] == "*")):
    return {
        name: defn for name, defn in config.items() if filter(defn)
    }
