/*
 * term_text.h - target-controlled text made safe for a terminal.
 *
 * Symbol names, thread names, command lines and file paths come from the
 * target (its ELF files, prctl(PR_SET_NAME), argv): an escape sequence in
 * one of them, printed raw, can retitle the window, move the cursor, hide
 * lines or worse on some terminals. Every writer that prints such text for
 * a terminal goes through here (folded.c and the JSON writers escape in
 * their own formats).
 */
#ifndef PMUTOP_TERM_TEXT_H
#define PMUTOP_TERM_TEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * s into buf (at most len bytes, always terminated) with every control
 * character (C0, DEL, and C1 as UTF-8 or raw bytes) written as \xNN and a
 * backslash as "\\". Returns buf.
 */
const char *term_text(const char *s, char *buf, size_t len);

/* fputs(s, out) with term_text()'s escaping, without a length limit. */
void term_fputs(const char *s, FILE *out);

#endif
