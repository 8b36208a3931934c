#!/usr/bin/env python3
# gen_js_project.py DIR MODULES FUNCS: a JavaScript project for esbuild to
# bundle (tests/e2e/t_go_esbuild.sh): MODULES files of FUNCS exported
# functions each, importing from one another (within blocks of 20), and
# entry.js importing all.
import sys

d, nm, nf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for m in range(nm):
    body = []
    for f in range(nf):
        body.append(
            f"export function mod{m}_fn{f}(a, b) {{ let s = 0;"
            f" for (let i = 0; i < a.length; i++) {{ if (a[i] > b) {{ s += a[i] * {f} + (b ^ i); }}"
            f" else {{ s -= Math.max(a[i], {m}); }} }}"
            f" const o = {{ k{f}: s, name: 'mod{m}_{f}', arr: [1, 2, 3, {f}].map(x => x * s) }};"
            f" return o.k{f} + o.arr.length; }}")
    # Imports within a block of 20 modules: import chains stay ~20 deep, so
    # esbuild's recursive walks over them stay far from --max-depth.
    base = m - m % 20
    deps = sorted({base + (m % 20 + j + 1) % 20 for j in range(3)} - {m})
    imps = "".join(f"import {{ mod{d}_fn{j} }} from './m{d}.js';\n" for j, d in enumerate(deps) if d < nm)
    with open(f"{d}/m{m}.js", "w") as fh:
        fh.write(imps + "\n".join(body) + "\n")
with open(f"{d}/entry.js", "w") as fh:
    fh.write("".join(f"import * as m{m} from './m{m}.js';\n" for m in range(nm)))
    fh.write("console.log(" + " + ".join(f"Object.keys(m{m}).length" for m in range(nm)) + ");\n")
