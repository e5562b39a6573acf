/*
 * prefix.h: the prefixes that launchers, loggers and container runtimes
 * put in front of a program's lines.
 */
#ifndef OD_PREFIX_H
#define OD_PREFIX_H

#include "core.h"

typedef struct px_ctx px_ctx;

/* Compiles the prefix pattern (to machine code when jit). */
px_ctx *px_new(bool jit, od_error *err);
void px_free(px_ctx *p);

/*
 * Parses the prefixes at the start of line[0..len) (timestamps, [rank3]:,
 * [default0]:, srun -l "0: ", container runtime, docker compose, "> ",
 * kubectl logs --prefix's "[pod/NAME/CONTAINER] ", pdsh's "HOST: ",
 * vLLM's worker and logger, glog).  Returns the number of bytes they take;
 * *rank (rank may be NULL) is set when a prefix names a rank, and ts
 * (OD_TIMESTAMP_MAX bytes, may be NULL) to the first timestamp when it is
 * still "".
 */
size_t px_strip(px_ctx *p, const char *line, size_t len, int *rank, char *ts);

/* The labels that the prefixes of px_strip's last line named: kubectl
 * logs --prefix's pod and container, pdsh's host; owned by p, valid until
 * the next px_strip. */
const od_labels *px_labels(const px_ctx *p);

#endif
