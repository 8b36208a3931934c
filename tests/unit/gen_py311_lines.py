#!/usr/bin/python3.11
# gen_py311_lines.py - the truth for test_pyline: real CPython 3.11 code
# objects' location tables (co_linetable) with the line of every code unit
# as the interpreter itself computes it (co_lines()).
#
# Run by /usr/bin/python3.11 (Debian's), it writes, per code object:
#   code QUALNAME FIRSTLINENO NBYTES LINETABLE_HEX
#   lines LINE_OF_UNIT_0 LINE_OF_UNIT_1 ...     (-1: no line)
# test_pyline decodes each table with pyline_addr2line() and compares.
# The committed tests/unit/data/py311_lines.txt is this script's output;
# rerun it to refresh: /usr/bin/python3.11 tests/unit/gen_py311_lines.py >tests/unit/data/py311_lines.txt
import sys, types, dis, json.decoder, textwrap

assert sys.version_info[:2] == (3, 11), sys.version

SRC = textwrap.dedent('''
def simple(a, b):
    return a + b

def branches(x):
    if x > 10:
        y = x * 2
    elif x < -10:
        y = -x
    else:
        y = 0
    for i in range(3):
        y += i
    return y

class K:
    def method(self):
        try:
            return [v * 2 for v in range(10)
                    if v % 3]
        except ValueError as e:
            raise RuntimeError("x") from e
        finally:
            pass

def far_jump():
    a = 1
''' + '\n' * 300 + '''
    b = 2
    return (a,
            b,
            lambda q: q + a)

async def coro(n):
    await asyncio.sleep(n)

def gen(n):
    yield from range(n)
''')

def all_codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from all_codes(c)

def dump(co):
    n = len(co.co_code) // 2
    lines = [-1] * n
    for start, end, line in co.co_lines():
        for u in range(start // 2, end // 2):
            lines[u] = -1 if line is None else line
    print("code", co.co_qualname.replace(" ", "_"), co.co_firstlineno, len(co.co_code),
          co.co_linetable.hex())
    print("lines", *lines)

codes = list(all_codes(compile(SRC, "<gen>", "exec")))
# Real library code too: a large module's functions of every shape.
for mod in (json.decoder, dis):
    for co in all_codes(compile(open(mod.__file__).read(), mod.__file__, "exec")):
        codes.append(co)
for co in codes:
    dump(co)
