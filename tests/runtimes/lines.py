# The line of every instruction of the standard library's code objects as
# the interpreter itself maps them, for tests/py-lines: one code object a
# line, "first_line table_bytes table_hex offset:line ..." (offsets in code
# units, -1 for none). 3.10 on: co_lines(); 3.9: dis.findlinestarts().
import dis
import os
import sys
import types


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def lines(co):
    n = len(co.co_code)
    if sys.version_info >= (3, 10):
        at = {}
        for start, end, line in co.co_lines():
            for a in range(start, end, 2):
                at[a] = -1 if line is None else line
        return [(a // 2, at.get(a, -1)) for a in range(0, n, 2)]
    starts = dict(dis.findlinestarts(co))
    out, line = [], co.co_firstlineno
    for a in range(0, n, 2):
        line = starts.get(a, line)
        out.append((a // 2, line))
    return out


lib = os.path.dirname(os.__file__)
for name in sorted(os.listdir(lib)):
    if not name.endswith(".py"):
        continue
    try:
        with open(os.path.join(lib, name), encoding="utf-8") as f:
            top = compile(f.read(), name, "exec")
    except (SyntaxError, UnicodeDecodeError, ValueError):
        continue
    for co in codes(top):
        table = co.co_lnotab if sys.version_info < (3, 10) else co.co_linetable
        print(co.co_firstlineno, len(table), table.hex() or "-",
              " ".join("%d:%d" % p for p in lines(co)))
