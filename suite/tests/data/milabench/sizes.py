"""Prints, as JSON, the batch size milabench's sizer (`Sizer.auto_size`) gives every benchmark
of a scaling table for a few GPU memories, multiples and powers. Written for giving's tests.

Usage: python sizes.py SCALING.yaml
"""

import json
import sys

import yaml
from milabench.sizer import Sizer
from milabench.system import SizerOptions

class Pack:
    """What `auto_size` reads of a benchmark: its config's name."""

    def __init__(self, name):
        self.config = {"name": name}


table = sys.argv[1]
names = [k for k, v in yaml.safe_load(open(table)).items() if isinstance(v, dict)]
out = []
for capacity in ["81920 MiB", "40Go", "24 GiB"]:
    for multiple, power in [(8, None), (None, None), (None, 2)]:
        options = SizerOptions(auto=1, multiple=multiple, power=power)
        sizer = Sizer(sizer=options, config=table)
        for name in names:
            out.append([name, capacity, multiple, power, sizer.auto_size(Pack(name), capacity)])
json.dump(out, sys.stdout)
print()
