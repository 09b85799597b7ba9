"""Prints, one JSON object a line, every process milabench would start for a configuration.

milabench at commit faf39234 has no `milabench dry` command, so this calls the code its
`run` command calls (`_get_multipack`, `make_execution_plan`, `Command.commands()`), with the
GPUs described instead of detected. Written for giving's tests (not part of milabench).

Usage: python dry.py CONFIG SYSTEM NGPU BASE
"""

import json
import os
import sys

config, system, ngpu, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# milabench prints warnings to stdout: the plan alone goes there.
out, sys.stdout = sys.stdout, sys.stderr
os.environ["MILABENCH_GPU_ARCH"] = "cuda"
os.environ["MILABENCH_BASE"] = base
# Planning only: the voirconf files VoirCommand writes go to a scratch folder.
os.environ["MILABENCH_DIR_EXTRA"] = os.path.join(base, "extra")

import nox.sessions
import voir.instruments.gpu as voirgpu

# Planning creates no virtual environment (and milabench's nox call predates this nox).
nox.sessions.SessionRunner._create_venv = lambda self: None

GPUS = {
    "arch": "cuda",
    "gpus": {
        str(i): {
            "device": i,
            "selection_variable": "CUDA_VISIBLE_DEVICES",
            "memory": {"used": 0, "total": 81920},
            "product": "NVIDIA H100 80GB HBM3",
        }
        for i in range(ngpu)
    },
}


def get_gpu_info(*args, **kwargs):
    return GPUS


import milabench.commands as commands
import milabench.multi as multi
import milabench.sizer as sizer
import milabench.system as msystem

for module in (voirgpu, commands, multi, sizer, msystem):
    module.get_gpu_info = get_gpu_info
msystem.get_gpu_capacity = lambda *a, **k: 81920
msystem.get_gpu_count = lambda *a, **k: ngpu

from milabench.common import CommonArguments, _get_multipack

args = CommonArguments(config=config, system=system, base=base)
mp = _get_multipack(args, run_name="dry")
for name, pack in mp.packs.items():
    os.makedirs(pack.dirs.extra, exist_ok=True)
    pack.phase = "run"
    plan = multi.make_execution_plan(pack)
    for p, argv, options in plan.commands():
        env = {k: str(v) for k, v in p.make_env().items() if k != "MILABENCH_CONFIG"}
        env.update({k: str(v) for k, v in p.config.get("env", {}).items()})
        if options.get("use_stdout"):
            env["MILABENCH_USE_STDOUT"] = "1"
        print(json.dumps({
            "bench": name,
            "tag": ".".join(p.config["tag"]),
            # What the executor runs: the placeholders resolved as `execute` resolves them.
            "argv": [str(a) for a in sizer.resolve_argv(p, argv)],
            "env": env,
        }), file=out)
