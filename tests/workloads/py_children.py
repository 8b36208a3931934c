# py_children.py - Python work in multiprocessing workers.
#
# A pool of two worker processes (forked) each runs child_work for SECONDS,
# then the parent runs it for a tenth of that: most of the CPU time is
# child_work's, in processes pmutop follows as children. Prints the
# workers' results and exits.
#
# usage: /usr/bin/python3.11 py_children.py [SECONDS]
import multiprocessing
import sys
import time


def child_work(secs):
    x = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        x += 1
    return x


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print(pool.map(child_work, [secs, secs]))
    child_work(secs / 10)
