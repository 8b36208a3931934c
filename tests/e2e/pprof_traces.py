# pprof_traces.py - read `go tool pprof -traces` output as (weight, frames)
# pairs, leaf first, for the e2e tests' Python checks (t_go_stacks,
# t_go_esbuild). Label lines (comm:, pid:, thread:, tid:, ...) are skipped;
# weights are in seconds for time units, as printed otherwise.
import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, None: 1}


def weight(s):
    m = re.match(r"([0-9.]+)(ns|us|ms|s)?$", s)
    return float(m.group(1)) * _UNITS[m.group(2)]


def frame(text):
    """A frame's function name (the first word), without Go's .abi0 suffix."""
    f = text.split()[0]
    return f[:-5] if f.endswith(".abi0") else f


def stacks(path):
    out, cur = [], None
    for line in open(path):
        if line.startswith("-----------+"):
            if cur and cur[1]:
                out.append(cur)
            cur = None
            continue
        m = re.match(r"^\s+([0-9.]+(?:ns|us|ms|s)?)\s+(\S.*)$", line)
        if m and cur is None:
            cur = [weight(m.group(1)), [frame(m.group(2))]]
        elif cur is not None and line.strip() and not line.split()[0].endswith(":"):
            cur[1].append(frame(line.strip()))
    if cur and cur[1]:
        out.append(cur)
    return out
