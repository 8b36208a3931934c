/*
 * tui.h - the live view's entry point: `pmutop -p PID` on a terminal,
 * `--dump FILE --top`, and `--load FILE`.
 */
#ifndef PMUTOP_UI_TUI_H
#define PMUTOP_UI_TUI_H

#include <stddef.h>

struct pmutop_opts;

/*
 * Run the live view until q, SIGINT/SIGTERM/SIGHUP or an error: on a live
 * session (attach or launch), or on the saved profile o->load. The
 * terminal is restored before returning (and on every other way out).
 * With o->dump the profile is written on the way out. Prints its errors;
 * returns the process exit status (0 on a normal quit).
 */
int tui_run(const struct pmutop_opts *o);

/*
 * Can the live view draw on this terminal (TERM known to terminfo, cursor
 * addressing, at least 20x8)? Returns 0, or -1 with the reason in why
 * ("TERM=dumb cannot move the cursor"); the terminal is left untouched.
 */
int tui_terminal_check(char *why, size_t len);

#endif
