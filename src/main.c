/*
 * main.c - pmutop's entry point: parse the command line, run, exit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pmutop/cli.h"
#include "pmutop/events.h"
#include "pmutop/record.h"

int main(int argc, char **argv)
{
	struct pmutop_opts opts;
	char err[512];
	int rc;

	rc = cli_parse(argc, argv, &opts, stdout, err, sizeof(err));
	if (rc > 0)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	if (opts.list_events) {
		events_list(stdout, opts.kernel);
		return 0;
	}
	return record_run(&opts);
}
