/*
 * cli_habits.h - answers for what perf and py-spy users type and pmutop does
 * not take: options of theirs, mistyped options, and perf's other commands.
 *
 * Each answer is one line naming pmutop's nearest option and what differs,
 * so a habit costs a line instead of a search through --help. Pure: no I/O.
 */
#ifndef PMUTOP_CLI_HABITS_H
#define PMUTOP_CLI_HABITS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Why the option opt (as typed: "-K", "--idle", "--durtion=5") is not taken
 * and what to use instead, into err: a perf/py-spy equivalent, else the
 * nearest of pmutop's options ("did you mean --duration?"), else a pointer
 * to --help.
 */
void cli_habits_unknown_option(const char *opt, char *err, size_t errlen);

/*
 * When word, the first word of a command line, is a perf command pmutop
 * answers instead of launching (stat, report, list, ...), fill err with the
 * pointer (and how to launch a program of that name) and return true.
 */
bool cli_habits_command_word(const char *word, char *err, size_t errlen);

#endif
