"""flamebench.py - the flame graph page on big profiles (bench.py section 5).

A synthetic pprof profile with N distinct stacks (a random call tree over
2,000 function names, depth 4-40, seeded: the same bytes every run) is
turned into a page with `pmutop --load P --dump P.html`, which is then opened
in Debian's chromium (headless, tests/web/check_flame.js). Measured per run:
pmutop's conversion time, the page's size, first paint and "ready" (the
chart drawn, performance.now() in the page), one full redraw, and a zoom
into the widest frame two levels up. N = 1,000 and 100,000 side by side, so
the 100k figures read as multiples of the small page's on the same machine.

Writing pprof by hand (protobuf wire format, gzip) keeps bench/ on the
standard library.
"""

import gzip
import json
import os
import random
import subprocess
import time


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    return _varint(num << 3 | wire) + payload


def _vint(num, n):
    return _field(num, 0, _varint(n))


def _bytes(num, b):
    return _field(num, 2, _varint(len(b)) + b)


def _packed(num, values):
    return _bytes(num, b"".join(_varint(v) for v in values))


def synth_profile(path, nstacks, seed=1, nfuncs=2000):
    """Write a gzip pprof profile with nstacks distinct stacks; returns the count."""
    rnd = random.Random(seed)
    strings = ["", "samples", "count", "cpu", "nanoseconds"]
    index = {s: i for i, s in enumerate(strings)}

    def s_id(s):
        if s not in index:
            index[s] = len(strings)
            strings.append(s)
        return index[s]

    names = ["fn_%04d_%s" % (i, rnd.choice(["parse", "scan", "hash", "copy", "sort",
                                            "lookup", "encode", "alloc"])) for i in range(nfuncs)]
    # A few roots and a skewed fan-out, as real programs have.
    stacks = set()
    while len(stacks) < nstacks:
        depth = rnd.randint(4, 40)
        st = [rnd.randrange(4)]
        for _ in range(depth - 1):
            prev = st[-1]
            st.append((prev * 31 + rnd.choice((1, 1, 1, 2, 3, 5, 8, rnd.randrange(nfuncs))))
                      % nfuncs)
        stacks.add(tuple(st))
    msg = bytearray()
    msg += _bytes(1, _vint(1, s_id("samples")) + _vint(2, s_id("count")))
    msg += _bytes(1, _vint(1, s_id("cpu")) + _vint(2, s_id("nanoseconds")))
    for st in sorted(stacks):
        n = rnd.randint(1, 20)
        locs = [f + 1 for f in reversed(st)]  # leaf first; location id = function id
        msg += _bytes(2, _packed(1, locs) + _packed(2, [n, n * 10000000]))
    for f in range(nfuncs):
        msg += _bytes(4, _vint(1, f + 1) + _vint(3, 0x400000 + 16 * f) +
                      _bytes(4, _vint(1, f + 1) + _vint(2, 10 + f)))
        msg += _bytes(5, _vint(1, f + 1) + _vint(2, s_id(names[f])) +
                      _vint(4, s_id("/src/synth/file_%d.c" % (f % 50))))
    pending = bytearray()
    for s in strings:
        pending += _bytes(6, s.encode())
    msg += pending
    msg += _vint(10, 10 * 1000000000)
    msg += _bytes(11, _vint(1, s_id("cpu")) + _vint(2, s_id("nanoseconds")))
    msg += _vint(12, 10000000)
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(bytes(msg))
    return len(stacks)


def open_page(checker, page, timeout=300):
    """check_flame.js on a page: (dict of its JSON, None) or (None, error)."""
    p = subprocess.run(["node", checker, "file://" + page, "--zoom", "*"],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["status %d" % p.returncode])[-1]
    return json.loads(p.stdout), None


def measure(pmutop, checker, work, nstacks, runs):
    """Per run: convert_s, bytes, fcp_ms, ready_ms, draw_ms, zoom_ms, nodes, skipped."""
    prof = os.path.join(work, "synth-%d.pb.gz" % nstacks)
    page = os.path.join(work, "synth-%d.html" % nstacks)
    synth_profile(prof, nstacks)
    out = []
    for _ in range(runs):
        t = time.monotonic()
        p = subprocess.run([pmutop, "-q", "--load", prof, "--dump", page],
                           capture_output=True, text=True, timeout=300)
        conv = time.monotonic() - t
        if p.returncode != 0:
            raise RuntimeError("pmutop --load %s --dump %s: %s" % (prof, page, p.stderr.strip()))
        res, err = open_page(checker, page)
        if err:
            raise RuntimeError("chromium on %s: %s" % (page, err))
        st = res["state"]
        out.append(dict(convert_s=conv, bytes=os.path.getsize(page),
                        fcp_ms=res["paint"].get("first-contentful-paint"),
                        ready_ms=st["readyMs"], draw_ms=st["drawMs"],
                        zoom_ms=res["zoom"]["state"]["drawMs"], nodes=st["nodes"],
                        skipped=st["skippedFrames"], gzip_bytes=os.path.getsize(prof)))
    return out
