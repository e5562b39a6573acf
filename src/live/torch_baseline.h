/*
 * torch_baseline.h: the second baseline of the context_cost probe, an
 * empty PyTorch process.  A child runs `import torch; torch.cuda.init()`
 * on the GPU probed (CUDA_VISIBLE_DEVICES set to its UUID), makes its
 * context with torch.cuda.mem_get_info(), prints one line with that
 * reading and waits; the caller measures what it costs while it waits
 * (probe_run.c), and tb_run then ends it.
 *
 * The line, a protocol of its own so that a stand-in interpreter can
 * print it in tests:
 *
 *   oomdoc-torch-baseline 1 pid=N torch=V cuda=V free=BYTES total=BYTES
 *       loading=VALUE
 *   oomdoc-torch-baseline 1 error=no-torch|no-cuda
 *
 * (free and total from the child's cudaMemGetInfo once its context
 * exists; loading is its CUDA_MODULE_LOADING, or "unset").
 *
 * Ownership: nothing is allocated that outlives a call.
 */
#ifndef OD_TORCH_BASELINE_H
#define OD_TORCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TB_TIMEOUT 120.0        /* seconds for the child's line */
#define TB_EXIT_WAIT 10.0       /* seconds for it to exit once told */

typedef struct {
	bool ok;                /* the child printed a reading */
	int64_t pid;
	int64_t free_b, total;  /* its cudaMemGetInfo, with its context */
	char torch[32], cuda[32], loading[32];
	char note[240];         /* why there is no reading */
} tb_reading;

/*
 * Parses the child's line into out; false, with out->note saying why,
 * when it is not one (a stand-in's nonsense included) or reports an
 * error.
 */
bool tb_parse(const char *line, tb_reading *out);

/*
 * Runs python (a name looked up in PATH, or a path) with the script, on
 * the GPU of uuid, waits for its line, calls during(arg, reading) while
 * the child holds its context, and ends the child (its standard input
 * closed, then SIGKILL after TB_EXIT_WAIT).  False with out->note when
 * there was no reading (during is then not called).  A stop request
 * (dv_stopped) ends the wait.
 */
bool tb_run(const char *python, const char *uuid,
    void (*during)(void *arg, const tb_reading *r), void *arg,
    tb_reading *out);

#endif
