# Excerpt of milabench's milabench/system.py (commit faf39234, MIT: see LICENSE): only what
# summary.py and report/__init__.py use, lines 1, 3-4, 15, 44-53, 70-88 and 182-226 verbatim; the rest of the module
# imports packages the report does not need.
import contextvars
import os
import sys

system_global = contextvars.ContextVar("system", default=None)


def getenv(name, expected_type):
    value = os.getenv(name)

    if value is not None:
        try:
            return expected_type(value)
        except TypeError:
            print(f"{name}={value} expected type {expected_type} got {type(value)}")
            return None
    return value


_global_options = {}

def _track_options(name, type, default, value):
    """This is just a helper so command line can display the options"""
    global _global_options

    try:
        _global_options[name] = {
            "type": type,
            "default": default,
            "value": value
        } 
    except:
        pass


def as_environment_variable(name):
    frags = name.split(".")
    return "MILABENCH_" + "_".join(map(str.upper, frags))


def select(*args):
    # This handles the case where 0 is right value and None is not
    prev = []

    for val in args:
        if val is not None:
            prev.append(val)

        if val:
            return val
    
    if prev:
        return prev[0]

    return None


def option(name, etype, default=None):
    options = dict()
    system = system_global.get()
    if system:
        options = system.get("options", dict())

    frags = name.split(".")
    env_name = as_environment_variable(name)
    env_value = getenv(env_name, etype)

    lookup = options
    for frag in frags[:-1]:
        lookup = lookup.get(frag, dict())

    system_value = lookup.get(frags[-1], None)
    final_value = select(env_value, system_value, default)

    _track_options(name, etype, default, final_value)

    if final_value is None:
        return None
    try:
        value = etype(final_value)
        lookup[frags[-1]] = value
        return value
    except ValueError:
        print(f"{name}={value} expected type {etype} got {type(value)}")
        return None
