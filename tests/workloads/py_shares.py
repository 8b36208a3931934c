# py_shares.py - ten Python functions with known shares of CPU time.
#
# Ground truth: function k (A=1 ... J=10) runs k*C iterations of identical
# work per round, so of the time spent in the ten functions, function k
# gets k/55 (1+2+...+10 = 55); each name encodes its expected share
# (A_expect_1_82 = 1.82%, ..., J_expect_18_18), as in shares.c. Rounds of
# ~10-20 ms, so periodic sampling sees many. With THREADS > 1 that many
# threads run the rounds at once (the GIL lets one run at a time: the
# shares hold across them all).
#
# At the end it prints its own measure, by each thread's CPU time around
# every call (time.thread_time_ns), as "self NAME PERCENT" lines: the
# truth the profile is compared with, besides k/55.
#
# Run it with Debian's interpreter: /usr/bin/python3.11 py_shares.py SECONDS [THREADS]
import sys
import threading
import time

C = 3000


# The same loop in each (not a shared helper): the work is each function's own
# (flat) time, as in shares.c.
def A_expect_1_82():
    x = 1
    for _ in range(1 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def B_expect_3_64():
    x = 1
    for _ in range(2 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def C_expect_5_45():
    x = 1
    for _ in range(3 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def D_expect_7_27():
    x = 1
    for _ in range(4 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def E_expect_9_09():
    x = 1
    for _ in range(5 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def F_expect_10_91():
    x = 1
    for _ in range(6 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def G_expect_12_73():
    x = 1
    for _ in range(7 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def H_expect_14_55():
    x = 1
    for _ in range(8 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def I_expect_16_36():
    x = 1
    for _ in range(9 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def J_expect_18_18():
    x = 1
    for _ in range(10 * C):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


FUNCS = [A_expect_1_82, B_expect_3_64, C_expect_5_45, D_expect_7_27, E_expect_9_09,
         F_expect_10_91, G_expect_12_73, H_expect_14_55, I_expect_16_36, J_expect_18_18]
spent = {f.__name__: 0 for f in FUNCS}
lock = threading.Lock()


def rounds(deadline):
    mine = [0] * len(FUNCS)
    clock = time.thread_time_ns
    while time.monotonic() < deadline:
        for i, f in enumerate(FUNCS):
            t = clock()
            f()
            mine[i] += clock() - t
    with lock:
        for i, f in enumerate(FUNCS):
            spent[f.__name__] += mine[i]


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    print("ready", flush=True)
    deadline = time.monotonic() + secs
    if nthreads == 1:
        rounds(deadline)
    else:
        ts = [threading.Thread(target=rounds, args=(deadline,), name="worker%d" % i)
              for i in range(nthreads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    total = sum(spent.values()) or 1
    for name, ns in spent.items():
        print("self %s %.2f" % (name, 100.0 * ns / total))


main()
