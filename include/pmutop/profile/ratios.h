/*
 * ratios.h - derived per-function ratios of a multi-event run: IPC
 * (instructions / cycles), the cache miss rate (cacheMisses /
 * cacheReferences) and the branch miss rate (branchMisses / branches).
 *
 * Pure functions over event names and per-event counts, so the live view
 * and the text table show the same columns and tests can check them
 * without a profile. The counts given are estimates (samples x period,
 * scaled for multiplexing), so every ratio is an estimate too: its label
 * ends in "~" to say so.
 */
#ifndef PMUTOP_UI_RATIOS_H
#define PMUTOP_UI_RATIOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RATIOS_MAX 3

struct ratio {
	const char *label;    /* "IPC~", "miss%~", "br-miss%~" (static strings) */
	unsigned num, den;    /* event indices into the run's events */
	bool percent;         /* shown as 100 * num / den with a "%" */
};

/*
 * The pairs present among the run's events names[0..n), in the order IPC,
 * miss%, br-miss%. pmutop's names and perf's spellings are accepted
 * (cycles / cpu-cycles, cacheMisses / cache-misses, branches /
 * branch-instructions, ..., case-insensitive), and a final modifier group
 * (":u", ":k", ":pp", ...) is ignored except that both events of a pair
 * must count the same privilege levels (cycles:u pairs with instructions:u,
 * not with instructions). The first matching event of each kind is used.
 * NULL names are skipped. Returns how many ratios were written to out
 * (at most RATIOS_MAX).
 */
size_t ratios_find(const char *const *names, size_t n, struct ratio out[RATIOS_MAX]);

/*
 * The value of r over per-event counts (flat[k] is event k's estimate):
 * num / den, times 100 for a percentage. false (and *v = 0) when the
 * denominator is 0: there is nothing to divide.
 */
bool ratio_value(const struct ratio *r, const uint64_t *flat, double *v);

/* r's value as text: "1.23", "4.5%", or "-" when the denominator is 0. */
const char *ratio_format(const struct ratio *r, const uint64_t *flat, char *buf, size_t len);

#endif
