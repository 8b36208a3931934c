#!/usr/bin/env python3
"""churn_service.py - a service-like Python target for pmutop's long-run bench.

Random-depth recursion, a pool of four worker threads renewed every 1-5 s,
large dicts built and freed: what issue 23 measured pmutop on. Runs until
killed (or for argv[1] seconds).
"""
import random
import sys
import threading
import time


def leaf(n):
    d = {i: str(i) for i in range(200 + n)}
    return sum(len(v) for v in d.values())


def recurse(depth):
    if depth <= 0:
        return leaf(random.randrange(100))
    if random.random() < 0.5:
        return recurse(depth - 1) + 1
    return branch(depth - 1) + 2


def branch(depth):
    return recurse(depth)


def worker(stop):
    while not stop.is_set():
        recurse(random.randrange(1, 60))


def main():
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    t0 = time.time()
    while not limit or time.time() - t0 < limit:
        stop = threading.Event()
        pool = [threading.Thread(target=worker, args=(stop,), name="worker")
                for _ in range(4)]
        for t in pool:
            t.start()
        time.sleep(random.uniform(1, 5))
        stop.set()
        for t in pool:
            t.join()


if __name__ == "__main__":
    main()
