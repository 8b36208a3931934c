/*
 * pyline.h - CPython's location table (co_linetable, 3.11 and later):
 * which source line a bytecode offset is on.
 *
 * A code object keeps its positions as a compact byte table (CPython's
 * Objects/locations.md): entries of one to eight code units, each starting
 * with a byte whose top bit is set, carrying a line delta (or "no line")
 * and columns pmutop does not need. The table comes from the target's
 * memory, so it is treated as hostile: every read is bounded by the
 * table's length and a malformed table is an error, never a wild read.
 * Pure functions, no I/O: the unit test feeds it real tables.
 */
#ifndef PMUTOP_PYLINE_H
#define PMUTOP_PYLINE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The line of the code unit at byte offset addr (a multiple of 2, as
 * CPython's PyCode_Addr2Line takes it) in a code object whose location
 * table is tab[0..len) and whose co_firstlineno is firstlineno. *line is
 * set to the line, or -1 when the instruction has no line (CPython's
 * "no location" entries). addr < 0 gives firstlineno, as in CPython.
 * Returns 0, or -EINVAL when the table is malformed (an entry that does not
 * start with its marker bit, a varint running past the end, a line out of
 * int range) or ends before addr: *line is then untouched.
 */
int pyline_addr2line(const uint8_t *tab, size_t len, int firstlineno, int addr, int *line);

#endif
