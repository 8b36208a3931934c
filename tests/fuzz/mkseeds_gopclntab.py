# tests/fuzz/mkseeds_gopclntab.py OUTDIR - small synthetic .gopclntab seeds for fuzz_gopclntab:
# Go 1.16, 1.18 and 1.20 layouts (three functions, one inlined call, a
# firstmoduledata stand-in), each also cut short, and a Go 1.15 magic.
import struct, sys, os
out = sys.argv[1]
def uv(v):
    b = b""
    while True:
        c = v & 0x7f; v >>= 7
        if v: b += bytes([c | 0x80])
        else: return b + bytes([c])
def zz(d): return (d << 1) ^ (d >> 31) if d >= 0 else ((-d - 1) << 1) | 1
def pctab(pairs):  # [(value, pcdelta)] ; start value -1
    b = b""; prev = -1
    for v, d in pairs:
        b += uv(zz(v - prev)) + uv(d); prev = v
    return b + b"\0"
def build(ver):
    VADDR, TEXT = 0x500000, 0x401000
    names = b"\0main.leaf\0main.main\0runtime.goexit\0main.inl\0"
    nameoff = {"main.leaf": 1, "main.main": 11, "runtime.goexit": 21, "main.inl": 36}
    filetab = b"\0/src/main.go\0"
    cutab = struct.pack("<I", 1)
    pc = b"\0"  # offset 0 unused
    tabs = {}
    def addtab(name, t):
        nonlocal pc
        tabs[name] = len(pc); pc += t
    addtab("sp0", pctab([(0, 32)]))
    addtab("sp", pctab([(0, 4), (24, 20), (0, 8)]))
    addtab("file", pctab([(0, 32)]))
    addtab("ln", pctab([(10, 8), (11, 8), (12, 16)]))
    addtab("inl", pctab([(-1, 8), (0, 8), (-1, 16)]))
    funcs = [("main.leaf", 0x0, "sp0", 0), ("main.main", 0x40, "sp", 1), ("runtime.goexit", 0x80, "sp0", 0)]
    hdr_n = 7 if ver == 116 else 8
    ptr = 8
    hdrsize = 8 + hdr_n * ptr
    funcname_off = hdrsize
    cu_off = funcname_off + len(names)
    file_off = cu_off + len(cutab)
    pc_off = file_off + len(filetab)
    pcln_off = pc_off + len(pc)
    pcln_off = (pcln_off + 7) & ~7
    nf = len(funcs)
    ftab_size = 8 if ver >= 118 else 16
    recs = b""; ftab = b""
    fsz = 44 if ver in (116, 120) else 40
    inl_vaddr = None
    body_off = (nf + 1) * ftab_size
    for name, entry, sp, withinl in funcs:
        foff = body_off + len(recs)
        if ver >= 118: ftab += struct.pack("<II", entry, foff)
        else: ftab += struct.pack("<QQ", TEXT + entry, foff)
        npcdata = 3 if withinl else 0
        nfuncdata = 4 if withinl else 0
        if ver >= 118:
            r = struct.pack("<IiiIIIIII", entry, nameoff[name], 0, 0, tabs[sp], tabs["file"], tabs["ln"], npcdata, 0)
            if ver >= 120: r += struct.pack("<i", 10)
            r += bytes([0, 1 if name == "runtime.goexit" else 0, 0, nfuncdata])
        else:
            r = struct.pack("<QiiIIIIII", TEXT + entry, nameoff[name], 0, 0, tabs[sp], tabs["file"], tabs["ln"], npcdata, 0)
            r += bytes([2 if name == "runtime.goexit" else 0, 0, 0, nfuncdata])
        assert len(r) == fsz, (len(r), fsz)
        if withinl:
            r += struct.pack("<III", 0, 0, tabs["inl"])
            if ver >= 118:
                r += struct.pack("<IIII", 0xffffffff, 0xffffffff, 0xffffffff, 0)  # gofunc + 0
            else:
                r += b"\0" * ((-len(r)) % 8)
                inl_vaddr_slot = len(recs) + len(r) + 3 * 8
                r += struct.pack("<QQQQ", 0, 0, 0, 0)  # patched below
        recs += r
    end = struct.pack("<II", 0xc0, 0) if ver >= 118 else struct.pack("<QQ", TEXT + 0xc0, 0)
    ftab = ftab[:nf * ftab_size] + end
    body = ftab + recs
    # inline tree after the body
    tree_off = pcln_off + len(body)
    if ver >= 120: tree = struct.pack("<BxxxiiI", 0, nameoff["main.inl"], 4, 10)
    else: tree = struct.pack("<hBxiiii", -1, 0, 0, 10, nameoff["main.inl"], 4)
    hdr = struct.pack("<IBBBB", {116: 0xfffffffa, 118: 0xfffffff0, 120: 0xfffffff1}[ver], 0, 0, 1, 8)
    fields = [nf, 1] + ([TEXT] if ver >= 118 else []) + [funcname_off, cu_off, file_off, pc_off, pcln_off]
    hdr += b"".join(struct.pack("<Q", x) for x in fields)
    blob = bytearray(hdr + names + cutab + filetab + pc)
    blob += b"\0" * (pcln_off - len(blob))
    blob += body + tree
    tree_vaddr = VADDR + tree_off
    if ver < 118:
        # funcdata[3] of main.main = the tree's address
        i = blob.find(struct.pack("<QQQQ", 0, 0, 0, 0), pcln_off)
        blob[i + 24:i + 32] = struct.pack("<Q", tree_vaddr)
    else:
        # a firstmoduledata stand-in so that gofunc can be found: gofunc = tree
        md = [VADDR, VADDR + funcname_off] + [0] * 39
        slot = 40 if ver >= 120 else 38
        md[slot - 1] = VADDR; md[slot] = tree_vaddr
        blob += b"".join(struct.pack("<Q", x) for x in md)
        i = blob.find(struct.pack("<IIII", 0xffffffff, 0xffffffff, 0xffffffff, 0), pcln_off)
        blob[i + 12:i + 16] = struct.pack("<I", 0)
    return bytes(blob)
for ver in (116, 118, 120):
    b = build(ver)
    open(os.path.join(out, "seed-go%d" % ver), "wb").write(b)
    open(os.path.join(out, "seed-go%d-truncated" % ver), "wb").write(b[: len(b) * 2 // 3])
b = bytearray(build(118)); b[0:4] = struct.pack("<I", 0xfffffffb)
open(os.path.join(out, "seed-go115-magic"), "wb").write(bytes(b))
