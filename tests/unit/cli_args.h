/*
 * cli_args.h - parse a command line given as C strings, for the unit tests
 * of the option parser and the modes built on it.
 *
 * parse(&opts, "-p", "1", ..., NULL) runs cli_parse() on "pmutop" followed
 * by the arguments; help/version text goes to /dev/null and the error
 * message is left in cli_err.
 */
#ifndef PMUTOP_TEST_CLI_ARGS_H
#define PMUTOP_TEST_CLI_ARGS_H

#include <stdarg.h>
#include <stdio.h>

#include "pmutop/frontend/cli.h"

static char cli_err[512];

static inline int parse(struct pmutop_opts *o, ...)
{
	static char *argv[64];
	FILE *devnull = fopen("/dev/null", "w");
	va_list ap;
	int argc = 0, r;

	argv[argc++] = "pmutop";
	va_start(ap, o);
	for (char *a; argc < 63 && (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	cli_err[0] = 0;
	r = cli_parse(argc, argv, o, devnull, cli_err, sizeof(cli_err));
	if (devnull)
		fclose(devnull);
	return r;
}

#endif
