/*
 * cli_doc.h - the documentation generated from the option table (cli.h):
 * --help, the man page and the bash completion script.
 *
 * They are printed from the same rows the parser uses, so an option cannot
 * be parsed without being documented, and the build writes pmutop.1 and the
 * completion with `pmutop --print-man` / `--print-completion` (Makefile).
 */
#ifndef PMUTOP_CLI_DOC_H
#define PMUTOP_CLI_DOC_H

#include <stdio.h>

#include "pmutop/frontend/cli.h"

/* --help (of a verb, CLI_VERB_NONE for pmutop): usage, its options by group, events, examples. */
void cli_print_help(FILE *out, enum cli_verb verb);

/* The man page pmutop.1 in roff (man(7) macros), same content as --help. */
void cli_print_man(FILE *out);

/* A bash completion script: options, their choices, event names, pids, files. */
void cli_print_completion(FILE *out);

#endif
