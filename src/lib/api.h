/*
 * api.h: what the files of the public interface (api.c, api_event.c,
 * api_rules.c) share.
 */
#ifndef OD_API_H
#define OD_API_H

#include "core.h"

/* Copies a core error into the public one (out may be NULL). */
void api_error(oomdoc_error *out, const od_error *e);

#endif
