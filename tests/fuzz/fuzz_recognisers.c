/*
 * fuzz_recognisers.c: a recogniser file (rules/recognisers.yaml's format,
 * RECOGNISERS in oomdoc(1)) on any bytes: the loader, `rules check`'s run
 * of the examples, and the loaded recognisers scanning a fixed text that
 * holds messages of many stacks and lines that make a careless pattern
 * backtrack.  Nothing may crash, leak or run away (user patterns run under
 * PCRE2's limits, and a recogniser that reaches them too often is
 * stopped); a refused file must say why with a location within the file;
 * every event must lie within the text.
 *
 * An input that loads no recogniser (refused, or a file of rules alone)
 * scans the text with the same scanner every time: the PyTorch grammar,
 * the fallback, the scheduler lines and the context, with no stack's
 * recognisers.  That scanner is built once and kept (as fuzz_scan keeps
 * its own), since building one (PCRE2's compilations of every built-in
 * pattern and Vectorscan's of every anchor) was about three quarters of
 * the time an input took; an input with recognisers still gets a scanner
 * of its own, built from them, whose prefilter database the library takes
 * from its cache when an input before had the same anchors (scan.c,
 * sc_db_take), so that only a new list of anchors is compiled.  The
 * disk cache of those databases (scan_cache.h) is never named here
 * (od_scan_cache_dir), so none is kept: nearly every input has a list of
 * its own, which would write a file of some hundred KiB an input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "recog_table.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scanner without a stack's recognisers, built at the first input
 * that needs it and kept to the end of the process. */
static od_scanner *fz_plain;

/* The fixed text: a few messages, wrapped lines, and runs that a nested
 * quantifier backtracks on. */
static const char fz_text[] =
    "step 1 loss 0.25\n"
    "RuntimeError: CUDA error: out of memory\n"
    "[0] init.cc:1 NCCL WARN Failed to CUDA calloc 4096 bytes\n"
    "toylib: device allocation of 2097152 bytes failed on gpu 3\n"
    "Out of memory: Killed process 7899 (python) total-vm:26184840kB, "
    "anon-rss:15370088kB, file-rss:0kB, shmem-rss:0kB\n"
    "2024-01-01 12:00:00.000000: W tensorflow/core/common_runtime/"
    "bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying\n"
    "to allocate 2.16GiB (rounded to 2319282340)\n"
    "Limit:        15374809088\nInUse:        15133024256\n"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx!\n"
    "Killed\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rl_set *rules = rl_new();
	rl_errors *errs = calloc(1, sizeof *errs);
	uint64_t lines = 1, text_lines = 0;
	od_events *set;
	od_scanner *sc;
	od_input in = { 0 };
	od_error err;
	size_t k;
	int i;

	if (rules == NULL || errs == NULL)
		abort();
	for (k = 0; k < size; k++)
		lines += data[k] == '\n' || (data[k] == '\r' &&
		    (k + 1 == size || data[k + 1] != '\n'));
	if (!rl_load_buffer(rules, "fuzz.yaml", (const char *)data, size,
	    errs)) {
		if (errs->n == 0 && errs->dropped == 0)
			abort();        /* refused without a reason */
		for (i = 0; i < errs->n; i++)
			if (errs->v[i].msg[0] == '\0' ||
			    errs->v[i].line > lines + 1)
				abort();
	} else if (rules->recognisers != NULL) {
		/* The examples, as rules check runs them: the errors too must
		 * have a reason and a place in the file. */
		memset(errs, 0, sizeof *errs);
		if (!sk_table_check(rules->recognisers, true, errs) &&
		    errs->n == 0 && errs->dropped == 0)
			abort();
		for (i = 0; i < errs->n; i++)
			if (errs->v[i].msg[0] == '\0' ||
			    errs->v[i].line > lines + 1)
				abort();
	}
	/* The recognisers loaded (maybe none) scan the fixed text. */
	set = od_events_new();
	memset(&err, 0, sizeof err);
	if (rules->recognisers == NULL && fz_plain == NULL &&
	    (fz_plain = od_scanner_new(true, NULL, &err)) == NULL)
		abort();
	sc = set == NULL ? NULL : rules->recognisers == NULL ? fz_plain :
	    od_scanner_new(true, rules->recognisers, &err);
	if (sc != NULL) {
		for (k = 0; k < sizeof fz_text - 1; k++)
			text_lines += fz_text[k] == '\n';
		od_scan_buffer(sc, fz_text, sizeof fz_text - 1, 0, &in, set);
		for (k = 0; k < od_events_count(set); k++) {
			const od_event *ev = od_events_get(set, k);

			if (ev->line < 1 || ev->end_line < ev->line ||
			    ev->line > text_lines + 1)
				abort();
		}
	} else if (err.msg[0] == '\0') {
		abort();        /* a scanner refused without a reason */
	}
	if (sc != fz_plain)
		od_scanner_free(sc);
	od_events_free(set);
	rl_free(rules);
	free(errs);
	return 0;
}
