# py_stacks.py - Python threads parked in known places, for `pmutop --stacks`.
#
# Each thread waits (or spins) in a function whose name says where it is,
# on a line marked with a comment "# PARK name": the test reads the line
# numbers from those markers and expects every thread at its line, its
# caller below it at the line marked "# CALL name", innermost first:
#   "sleeper": Parker.sleep_here <- Parker.run <- Thread.run ...   (time.sleep)
#   "locker":  wait_on_lock <- locker_main <- Thread.run ...        (Lock.acquire)
#   "spinner": spin_here <- spinner_main <- Thread.run ...          (busy)
#   main:      main_wait <- main <- <module>                        (Event.wait)
# Prints "ready" once all are in place; exits after SECONDS (default 60).
#
# usage: /usr/bin/python3.11 py_stacks.py [SECONDS]
import sys
import threading
import time

lock = threading.Lock()
lock.acquire()
ready = threading.Barrier(4)
done = threading.Event()
stop = [False]


class Parker:
    def sleep_here(self):
        ready.wait()
        while not done.is_set():
            time.sleep(0.5)  # PARK sleeper

    def run(self):
        self.sleep_here()  # CALL sleeper


def wait_on_lock():
    ready.wait()
    lock.acquire()  # PARK locker


def locker_main():
    wait_on_lock()  # CALL locker


def spin_here():
    ready.wait()
    x = 0
    while not stop[0]: x += 1  # PARK spinner


def spinner_main():
    spin_here()  # CALL spinner


def main_wait(secs):
    ready.wait()
    print("ready", flush=True)
    done.wait(secs)  # PARK main


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    threads = [threading.Thread(target=Parker().run, name="sleeper", daemon=True),
               threading.Thread(target=locker_main, name="locker", daemon=True),
               threading.Thread(target=spinner_main, name="spinner", daemon=True)]
    for t in threads:
        t.start()
    main_wait(secs)  # CALL main
    stop[0] = True
    done.set()
    lock.release()


main()
