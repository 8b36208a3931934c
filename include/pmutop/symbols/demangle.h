/*
 * demangle.h - C++ and Rust symbol names as people read them.
 *
 * A thin wrapper over libiberty's cplus_demangle (Debian libiberty-dev, the
 * demangler binutils and gdb use): Itanium C++ ABI names (_Z...), Rust
 * legacy (_ZN...17h<hash>E) and Rust v0 (_R...). Not hand-written.
 */
#ifndef PMUTOP_DEMANGLE_H
#define PMUTOP_DEMANGLE_H

/*
 * The demangled form of sym as a malloc'd string (the caller frees), or NULL
 * when sym is not a mangled name (C, Go, already demangled) or on ENOMEM.
 * Parameters are kept ("ns::f(int)"), Rust hashes dropped. Thread-safe.
 */
char *demangle(const char *sym);

#endif
