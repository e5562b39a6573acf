/*
 * fuzz_rules.c: the rule loader (YAML, the schema, the condition and
 * template language) on any bytes, and the loaded rules applied to an
 * event: nothing may crash, leak or run away, and a refused file must say
 * why with a location within the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rl_set *rules = rl_new();
	rl_errors *errs = calloc(1, sizeof *errs);
	od_event ev;
	uint64_t lines = 1;
	size_t k;
	int i;

	if (rules == NULL || errs == NULL)
		abort();
	if (!rl_load_buffer(rules, "fuzz.yaml", (const char *)data, size, errs)) {
		if (errs->n == 0 && errs->dropped == 0)
			abort();        /* refused without a reason */
		/* Lines as YAML counts them: \n, \r\n and \r end one;
		 * libyaml may place an error at the end of the stream, one
		 * line further. */
		for (k = 0; k < size; k++)
			lines += data[k] == '\n' || (data[k] == '\r' &&
			    (k + 1 == size || data[k + 1] != '\n'));
		for (i = 0; i < errs->n; i++)
			if (errs->v[i].msg[0] == '\0' ||
			    errs->v[i].line > lines + 1)
				abort();
	}
	od_event_init(&ev);
	ev.mem.requested = 2147483648LL;
	ev.mem.total = 85899345920LL;
	ev.mem.allocated = 80000000000LL;
	ev.mem.reserved_unallocated = 3000000000LL;
	ev.mem.reserved = 83000000000LL;
	rl_apply(rules, &ev, NULL);
	od_event_clear(&ev);
	rl_free(rules);
	free(errs);
	return 0;
}
