/*
 * crt.h - the terminal: curses setup and teardown, colours, keys, signals.
 *
 * Everything that touches the terminal's modes lives here (htop's CRT.c),
 * so there is one place that guarantees it is restored: crt_done() is
 * idempotent and runs on every way out - a normal quit, SIGINT/SIGTERM/
 * SIGHUP (delivered through the session's signalfd, or through
 * crt_take_signal() when no session is reading them), exit() from anywhere
 * (atexit) and fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT).
 *
 * Ctrl-C: the terminal stays in cbreak mode, not raw, so ISIG is kept and
 * Ctrl-C is a real SIGINT - the same clean stop as in batch mode (the
 * session blocks SIGINT and reads it from its signalfd), and it reaches a
 * launched command in pmutop's process group as it would without the view.
 *
 * While curses owns the terminal, stderr is captured into a memory file and
 * printed after the terminal is restored, so stray messages never garble
 * the screen and are not lost.
 */
#ifndef PMUTOP_UI_CRT_H
#define PMUTOP_UI_CRT_H

#include <stdbool.h>
#include <stddef.h>

/* Colour roles; crt_attr() maps them to colour pairs or to plain attributes. */
enum crt_role {
	CRT_NORMAL,
	CRT_HEADER_LABEL,  /* "samples", "lost", ... */
	CRT_HEADER_VALUE,
	CRT_TITLE,         /* the column titles bar */
	CRT_SELECTED,      /* the selected row */
	CRT_HOT,           /* big shares */
	CRT_WARM,
	CRT_DIM,           /* module names, secondary text */
	CRT_NOTICE,        /* "target exited", errors */
	CRT_MESSAGE,       /* "wrote ...", transient messages */
	CRT_KEY,           /* footer: the key */
	CRT_KEY_TEXT,      /* footer: what it does */
	CRT_NROLES,
};

/* The smallest screen the view draws on. */
#define CRT_MIN_COLS 20
#define CRT_MIN_LINES 8

/*
 * Without taking over the terminal: does TERM name a terminal terminfo
 * knows, with cursor addressing, and is the window at least CRT_MIN_COLS x
 * CRT_MIN_LINES? Returns 0, or -1 with the reason in why.
 */
int crt_check(char *why, size_t len);

/*
 * Take over the terminal: curses on stdin/stdout, cbreak, no echo, keypad,
 * hidden cursor, colours if has_colors() and NO_COLOR is unset; block
 * SIGINT/SIGTERM/SIGHUP (see crt_take_signal()); capture stderr; install
 * the fatal-signal handlers and the atexit hook. Returns 0, or -1 with err
 * filled (not a terminal, unknown TERM) and the terminal untouched.
 */
int crt_init(char *err, size_t errlen);

/* Give the terminal back and print what was written to stderr meanwhile. */
void crt_done(void);

bool crt_active(void);
bool crt_has_colors(void);
int crt_attr(enum crt_role role);

/* The next key (curses KEY_* codes included), or -1 when none is waiting. */
int crt_read_key(void);

/*
 * Wait up to timeout_ms for a key or for fd (when fd >= 0) to be readable.
 * A resize (SIGWINCH) ends the wait early too. Returns 0, or -1 when the
 * terminal is gone (hangup) and the view should end.
 */
int crt_wait(int fd, int timeout_ms);

/*
 * A pending SIGINT/SIGTERM/SIGHUP, consumed: its number, or 0. Only for
 * when no live session reads them from its signalfd (--load, or after the
 * session stopped), since it would steal them from the session.
 */
int crt_take_signal(void);

/* Redraw everything from scratch on the next refresh (Ctrl-L). */
void crt_force_redraw(void);

#endif
