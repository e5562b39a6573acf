/*
 * context.c: the facts around an event that the rules need.
 *
 * Two sources.  Settings lines anywhere before the event (a config dump, an
 * "export PYTORCH_CUDA_ALLOC_CONF=...", a metric line with the memory in
 * use) are found by the scanner's prefilter with the anchors below, and
 * each is read when it is seen into a running od_logctx; the event gets a
 * copy of it.  The text just before the event (the history the scanner
 * keeps, up to 32 KiB) gives the traceback's frames, the phase they show
 * and the last step of a progress bar or a trainer's log.  And the
 * kernel's memcg lines give a kill that follows them its cgroup's usage
 * and limit (cx_attach).
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "regex.h"

enum {
	CX_ALLOC, CX_XLA, CX_TF, CX_BATCH, CX_ACCUM, CX_SEQ, CX_PREC, CX_CKPT,
	CX_MEM, CX_XID, CX_MEMCG, CX_GPU,
	/* Patterns read from the text before an event. */
	CX_FRAME, CX_STEP,
	CX_COUNT
};

#define KV "[\"']?\\]?\\s*[=:]\\s*[\"']?"

static const char *const cx_patterns[CX_COUNT] = {
	[CX_ALLOC] = "(?<!setting )PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF" KV
	    "([A-Za-z_]+:[A-Za-z0-9_.]+(?:,[A-Za-z_]+:[A-Za-z0-9_.]+)*)"
	    "(?! to avoid)",
	[CX_XLA] = "(XLA_PYTHON_CLIENT_[A-Z_]+)" KV "([\\w.]+)",
	[CX_TF] = "(TF_GPU_ALLOCATOR|TF_FORCE_GPU_ALLOW_GROWTH|allow_growth)"
	    KV "([\\w.]+)",
	[CX_BATCH] = "(?i)(?<![a-z])(?<!eval_)(?<!per_device_eval_)"
	    "(?:per_device_train_batch_size|train_micro_batch_size_per_gpu|"
	    "micro_batch_size|train_batch_size|batch[_ -]size)" KV "(\\d{1,9})",
	[CX_ACCUM] = "gradient_accumulation_steps" KV "(\\d{1,9})",
	[CX_SEQ] = "(?<![a-z_])(?:max_seq_length|max_seq_len|seq_length|seq_len|"
	    "sequence_length|max_length|block_size|max_model_len)" KV
	    "(\\d{1,9})",
	[CX_PREC] = "(?<![A-Za-z])(bf16|fp16)" KV "(?:True|true|1)\\b|"
	    "mixed_precision" KV "(bf16|fp16|no)|torch_dtype" KV
	    "(?:torch\\.)?(bfloat16|float16|float32)|precision" KV
	    "(bf16|16|32)(?:-mixed|-true)?\\b",
	[CX_CKPT] = "(?:gradient|activation)_checkpointing" KV
	    "(True|true|1|False|false|0)\\b",
	[CX_MEM] = "(?:max_memory_allocated|memory_allocated|max_memory_reserved"
	    "|memory_reserved|gpu_mem|mem_gb|gpu_mem_gb|max_mem)" KV
	    "([\\d.]+)\\s*(GiB|GB|MiB|MB)?",
	[CX_XID] = "NVRM: Xid \\([^)\\n]*\\): (\\d{1,4})|(uncorrectable ECC error|"
	    "Uncorrectable ECC error|ECC page retirement)",
	[CX_MEMCG] = "memory: usage (\\d{1,15})kB, limit (\\d{1,15})kB",
	/* An NVIDIA model name (nvidia-smi's table, get_device_name()):
	 * "NVIDIA A100-SXM4-80GB" gives A100, "GeForce GTX 1080 Ti" GTX
	 * 1080 Ti; rules/knowledge.yaml maps it to a compute capability. */
	[CX_GPU] = "\\b(?:(?:NVIDIA|Tesla|GeForce|Quadro) )+((?:RTX |GTX )?"
	    "[A-Z]{0,2}\\d{1,4}[A-Z]?(?: Ti| SUPER)?)(?![\\w.])",
	[CX_FRAME] = "File \"([^\"\\n]{1,300})\", line (\\d{1,9}), in "
	    "([^\\s\\n]{1,100})",
	[CX_STEP] = "\\|\\s*(\\d{1,9})/\\d{1,9} \\[|[\"']?(?:global_)?step"
	    "[\"']?\\s*[:=]\\s*(\\d{1,9})|\\b[Ss]tep\\s+(\\d{1,9})\\b|"
	    "\\b[Ii]ter(?:ation)?\\s*[:=]?\\s*(\\d{1,9})\\b",
};

/*
 * The anchors of settings lines.  Those marked true occur on every metric
 * line of some logs (a "gpu_mem_gb" column, a "seq_len" field): the
 * scanner reads such a line at most once in CX_SAMPLE_BYTES of input,
 * which keeps the first value, one within 64 KiB of the event, and the
 * trend of memory readings, at a cost that does not grow with their count.
 */
static const cx_anchor cx_anchor_list[] = {
	{ "PYTORCH_CUDA_ALLOC_CONF", CX_ALLOC, false },
	{ "PYTORCH_HIP_ALLOC_CONF", CX_ALLOC, false },
	{ "PYTORCH_ALLOC_CONF", CX_ALLOC, false },
	{ "XLA_PYTHON_CLIENT_", CX_XLA, false },
	{ "TF_GPU_ALLOCATOR", CX_TF, false },
	{ "TF_FORCE_GPU_ALLOW_GROWTH", CX_TF, false },
	{ "batch_size", CX_BATCH, true },
	{ "batch size", CX_BATCH, true },
	{ "gradient_accumulation_steps", CX_ACCUM, true },
	{ "seq_len", CX_SEQ, true },
	{ "seq_length", CX_SEQ, true },
	{ "max_length", CX_SEQ, true },
	{ "block_size", CX_SEQ, true },
	{ "max_model_len", CX_SEQ, true },
	{ "bf16", CX_PREC, true },
	{ "fp16", CX_PREC, true },
	{ "mixed_precision", CX_PREC, true },
	{ "torch_dtype", CX_PREC, true },
	{ "_checkpointing", CX_CKPT, true },
	{ "memory_allocated", CX_MEM, true },
	{ "memory_reserved", CX_MEM, true },
	{ "gpu_mem", CX_MEM, true },
	{ "mem_gb", CX_MEM, true },
	{ "NVRM: Xid", CX_XID, false },
	{ "memory: usage", CX_MEMCG, false },
	{ "ncorrectable ECC", CX_XID, false },
	{ "ECC page retirement", CX_XID, false },
	{ "NVIDIA ", CX_GPU, true },
	{ "Tesla ", CX_GPU, true },
	{ "GeForce ", CX_GPU, true },
	{ NULL, 0, false },
};

struct cx_ctx {
	rx_code *re[CX_COUNT];
	rx_match *m;
};

cx_ctx *
cx_new(bool jit, od_error *err)
{
	cx_ctx *c = calloc(1, sizeof *c);
	int i;

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < CX_COUNT; i++) {
		c->re[i] = rx_compile(cx_patterns[i], 0, jit, "context.c",
		    (uint64_t)i + 1, err);
		if (c->re[i] == NULL) {
			cx_free(c);
			return NULL;
		}
	}
	if ((c->m = rx_match_new(err)) == NULL) {
		cx_free(c);
		return NULL;
	}
	return c;
}

void
cx_free(cx_ctx *c)
{
	int i;

	if (c == NULL)
		return;
	for (i = 0; i < CX_COUNT; i++)
		rx_code_free(c->re[i]);
	rx_match_free(c->m);
	free(c);
}

const cx_anchor *
cx_anchors(void)
{
	return cx_anchor_list;
}

void
cx_reset(od_logctx *st)
{
	memset(st, 0, sizeof *st);
	st->batch_size = st->accum_steps = st->seq_len = -1;
	st->grad_ckpt = -1;
	st->mem_first = st->mem_last = st->mem_max = -1;
	st->xid = -1;
	st->memcg_usage = st->memcg_limit = -1;
}

static bool
cx_match(cx_ctx *c, int re, const char *s, size_t len, size_t at)
{
	return rx_find(c->m, c->re[re], s, len, at);
}

/* Group g of the last match as a string, or NULL. */
static const char *
cx_group(cx_ctx *c, const char *s, int g, size_t *n)
{
	size_t start;

	if (!rx_group(c->m, g, &start, n))
		return NULL;
	return s + start;
}

/* Adds "NAME=value" to a list of settings, replacing NAME's old value. */
static void
cx_setting(char *list, size_t cap, const char *name, size_t nlen,
    const char *val, size_t vlen)
{
	char item[160], rest[160];
	char *p;

	if (nlen + vlen + 2 > sizeof item)
		return;
	memcpy(item, name, nlen);
	item[nlen] = '=';
	memcpy(item + nlen + 1, val, vlen);
	item[nlen + 1 + vlen] = '\0';
	/* Drop an earlier value of the same name ("NAME=" at a word start). */
	for (p = list; (p = strstr(p, "=")) != NULL; p++) {
		char *start = p;

		while (start > list && start[-1] != ' ')
			start--;
		if ((size_t)(p - start) == nlen &&
		    memcmp(start, item, nlen) == 0) {
			char *end = strchr(p, ' ');

			rx_copy_text(rest, sizeof rest, end != NULL ? end + 1 : "",
			    end != NULL ? strlen(end + 1) : 0);
			*start = '\0';
			strncat(list, rest, cap - strlen(list) - 1);
			break;
		}
	}
	if (strlen(list) + strlen(item) + 2 > cap)
		return;
	if (list[0] != '\0' && list[strlen(list) - 1] != ' ')
		strcat(list, " ");
	strcat(list, item);
}

void
cx_line(cx_ctx *c, int what, const char *line, size_t len, uint64_t lineno,
    od_logctx *st)
{
	const char *g, *g2;
	size_t n = 0, n2 = 0;
	int64_t v;

	if (what < 0 || what >= CX_FRAME || !cx_match(c, what, line, len, 0))
		return;
	g = cx_group(c, line, 1, &n);
	g2 = cx_group(c, line, 2, &n2);
	switch (what) {
	case CX_ALLOC:
		if (g != NULL)
			rx_copy_text(st->alloc_conf, sizeof st->alloc_conf, g, n);
		break;
	case CX_XLA:
		if (g != NULL && g2 != NULL)
			cx_setting(st->xla_conf, sizeof st->xla_conf, g, n, g2,
			    n2);
		break;
	case CX_TF:
		if (g != NULL && g2 != NULL)
			cx_setting(st->tf_allocator, sizeof st->tf_allocator, g,
			    n, g2, n2);
		break;
	case CX_BATCH:
		if (g != NULL)
			st->batch_size = rx_int(c->m, line, 1, -1);
		break;
	case CX_ACCUM:
		if (g != NULL)
			st->accum_steps = rx_int(c->m, line, 1, -1);
		break;
	case CX_SEQ:
		if (g != NULL)
			st->seq_len = rx_int(c->m, line, 1, -1);
		break;
	case CX_PREC: {
		int k;

		for (k = 1; k <= 4; k++)
			if ((g = cx_group(c, line, k, &n)) != NULL)
				break;
		if (g == NULL)
			return;
		if ((n == 4 && memcmp(g, "bf16", 4) == 0) ||
		    (n == 8 && memcmp(g, "bfloat16", 8) == 0))
			strcpy(st->precision, "bf16");
		else if ((n == 4 && memcmp(g, "fp16", 4) == 0) ||
		    (n == 7 && memcmp(g, "float16", 7) == 0) ||
		    (n == 2 && memcmp(g, "16", 2) == 0))
			strcpy(st->precision, "fp16");
		else
			strcpy(st->precision, "fp32");
		break;
	}
	case CX_CKPT:
		if (g != NULL)
			st->grad_ckpt = g[0] == 'T' || g[0] == 't' || g[0] == '1';
		break;
	case CX_MEM: {
		char text[48];

		if (g == NULL || g2 == NULL || n + n2 + 1 >= sizeof text)
			return;
		memcpy(text, g, n);
		memcpy(text + n, g2, n2);
		/* "GB" in a metric line is the binary unit nearly always:
		 * the frameworks divide by 1024**3. */
		if (n2 == 2) {
			memcpy(text + n, g2[0] == 'G' ? "GiB" : "MiB", 3);
			n2 = 3;
		}
		if (!od_size_parse_text(text, n + n2, &v))
			return;
		if (st->nreadings++ == 0)
			st->mem_first = v;
		st->mem_last = v;
		if (v > st->mem_max)
			st->mem_max = v;
		break;
	}
	case CX_MEMCG:
		if (g != NULL && g2 != NULL) {
			st->memcg_usage = rx_int(c->m, line, 1, -1) * 1024;
			st->memcg_limit = rx_int(c->m, line, 2, -1) * 1024;
			st->memcg_line = lineno;
		}
		break;
	case CX_XID:
		if (g != NULL)
			st->xid = rx_int(c->m, line, 1, -1);
		else
			st->ecc = true;
		break;
	case CX_GPU:
		if (g != NULL)
			rx_copy_text(st->gpu_model, sizeof st->gpu_model, g, n);
		break;
	default:
		break;
	}
}

void
cx_attach(const od_logctx *state, od_event *ev)
{
	ev->ctx = *state;
	/* The kernel prints the cgroup's usage and limit just before it
	 * names the process it kills (Linux's mm/memcontrol.c,
	 * mem_cgroup_print_oom_meminfo). */
	if (ev->kind == OD_KIND_HOST_OOM_KILLER && ev->host.limit < 0 &&
	    state->memcg_limit >= 0 &&
	    state->memcg_line + CX_MEMCG_LINES >= ev->line) {
		ev->host.limit = state->memcg_limit;
		ev->host.usage = state->memcg_usage;
	}
}

/* Whether a traceback frame's file belongs to a library, not the user. */
static bool
cx_library_file(const char *f)
{
	static const char *const marks[] = {
		"site-packages", "dist-packages", "/lib/python", "<frozen",
		"/torch/", "/usr/lib/", "\\Lib\\", "<string>",
	};
	size_t i;

	for (i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (strstr(f, marks[i]) != NULL)
			return true;
	return false;
}

/* The phase the frames show; the order of the checks is their weight. */
static void
cx_phase(od_event *ev)
{
	static const struct {
		const char *phase;
		const char *marks[6];
	} phases[] = {
		{ "backward", { "backward", "run_backward", "autograd", NULL } },
		{ "optimizer", { "optimizer.step", "optim/", "_single_tensor_",
		    "_multi_tensor_", "zero_grad", NULL } },
		{ "generation", { "generate", "sample(", "decode", NULL } },
		{ "evaluation", { "evaluat", "validation", "predict",
		    "eval_loop", "inference", NULL } },
		{ "forward", { "forward", "_call_impl", "__call__", "model(",
		    NULL } },
	};
	size_t p;
	int i, k;

	for (p = 0; p < sizeof phases / sizeof phases[0]; p++) {
		for (i = 0; i < ev->nframes; i++) {
			const od_frame *f = &ev->frames[i];

			for (k = 0; phases[p].marks[k] != NULL; k++) {
				const char *m = phases[p].marks[k];

				if (strstr(f->func, m) != NULL ||
				    strstr(f->code, m) != NULL ||
				    (strchr(m, '/') != NULL &&
				    strstr(f->file, m) != NULL)) {
					strcpy(ev->phase, phases[p].phase);
					return;
				}
			}
		}
	}
}

/* Finds the last occurrence of needle in hay[0..n). */
static const char *
cx_last(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	const char *p = hay, *last = NULL, *q;

	while (n >= k && (q = memmem(p, n, needle, k)) != NULL) {
		last = q;
		n -= (size_t)(q - p) + 1;
		p = q + 1;
	}
	return last;
}

void
cx_before(cx_ctx *c, const char *buf, size_t len, od_event *ev)
{
	const char *tb = cx_last(buf, len, "Traceback (most recent call last)");
	od_frame user;
	size_t at;
	int64_t step = -1;
	bool have_user = false;

	/* The frames of the last traceback before the event. */
	ev->nframes = 0;
	if (tb != NULL) {
		const char *end = buf + len;

		at = (size_t)(tb - buf);
		while (cx_match(c, CX_FRAME, buf, len, at)) {
			size_t ms = rx_start(c->m), me = rx_end(c->m), indent;
			od_frame *f;
			const char *nl, *code, *ce;

			/* Keep the innermost frames: drop the oldest. */
			if (ev->nframes == OD_FRAMES_MAX) {
				memmove(ev->frames, ev->frames + 1,
				    (OD_FRAMES_MAX - 1) * sizeof ev->frames[0]);
				ev->nframes--;
			}
			f = &ev->frames[ev->nframes++];
			(void)rx_copy(c->m, buf, 1, f->file, sizeof f->file);
			f->line = rx_int(c->m, buf, 2, 0);
			(void)rx_copy(c->m, buf, 3, f->func, sizeof f->func);
			f->user = !cx_library_file(f->file);
			/* The source line follows, at the same prefix. */
			f->code[0] = '\0';
			indent = ms;
			while (indent > 0 && buf[indent - 1] != '\n')
				indent--;
			indent = ms - indent;
			nl = memchr(buf + me, '\n', len - me);
			at = me;
			if (nl != NULL && (size_t)(end - nl) > indent + 1) {
				code = nl + 1 + indent;
				ce = memchr(code, '\n', (size_t)(end - code));
				if (ce == NULL)
					ce = end;
				while (code < ce && (*code == ' ' || *code == '\t'))
					code++;
				if (code < ce && strncmp(code, "File \"", 6) != 0)
					rx_copy_text(f->code, sizeof f->code, code,
					    (size_t)(ce - code));
			}
			if (f->user) {
				user = *f;
				have_user = true;
			}
		}
		/* The user's failing frame matters most: keep it. */
		if (have_user) {
			int i;

			for (i = 0; i < ev->nframes && !ev->frames[i].user; i++)
				;
			if (i == ev->nframes)
				ev->frames[0] = user;
		}
		cx_phase(ev);
	}
	/* The last step the log gave before the event. */
	at = 0;
	while (cx_match(c, CX_STEP, buf, len, at)) {
		int64_t v = -1;
		int k;

		/* One of the four alternatives' groups took part. */
		for (k = 1; k <= 4 && v < 0; k++)
			v = rx_int(c->m, buf, k, -1);
		if (v >= 0)
			step = v;
		at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
	}
	ev->step = step;
}
