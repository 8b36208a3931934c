/*
 * duration.h - the one parser of every duration pmutop takes on its command
 * line (--duration, --dump-every, --refresh, --debuginfo-wait,
 * --http-max-seconds): "500ms", "5s", "2m", "1h" as Go, systemd and
 * timeout(1) users type them, Go's sums of those ("1m30s"), or a bare
 * number of seconds ("10", "2.5") as pmutop always took. The HTTP
 * endpoint's ?seconds= stays a plain number, as Go's endpoint has it.
 */
#ifndef PMUTOP_DURATION_H
#define PMUTOP_DURATION_H

/* The accepted forms, for error messages and help text. */
#define DURATION_FORMS "500ms, 5s, 2m, 1h, 1m30s, or a bare number of seconds such as 2.5"

/*
 * Parses s as a duration into *seconds (>= 0). A component is a decimal
 * number (digits, optionally a '.' and more digits; no sign, exponent or
 * spaces) followed by a unit: ms, s, m or h; several components add up.
 * A bare number without a unit is seconds, and only alone.
 * Returns 0, or -EINVAL when s is not such a duration (empty, a sign, an
 * unknown unit such as "5q", trailing text) or its value is not finite;
 * *seconds is untouched then. Zero is a valid duration here: each option
 * checks its own range.
 */
int duration_parse(const char *s, double *seconds);

#endif
