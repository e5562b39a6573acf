/*
 * api.h: what the files of the public interface (api.c, api_event.c,
 * api_rules.c) share.
 */
#ifndef OD_API_H
#define OD_API_H

#include "core.h"

/* Copies a core error into the public one (out may be NULL). */
void api_error(oomdoc_error *out, const od_error *e);

/* The recognisers the rules loaded (recog_table.h), or NULL (api_rules.c). */
const struct sk_table *api_recognisers(const oomdoc_rules *r);

#endif
