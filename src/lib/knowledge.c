/*
 * knowledge.c: loading and asking the knowledge table (rules/knowledge.yaml).
 *
 * The file is a mapping with one key, "knowledge", whose value is a list of
 * entries, each a mapping of plain values:
 *
 *   what: option              layout, hint, variable, broken, option,
 *                             feature, command, role or gpu
 *   name: max_split_size_mb   what the entry is about
 *   vendor: nvidia            optional: nvidia, amd, intel or apple
 *   var: PYTORCH_ALLOC_CONF   broken: the variable that fails
 *   since: "1.10"             the first release (MAJOR.MINOR)
 *   until: "2.8"              optional: the last release
 *   min: 21                   option: the smallest value accepted
 *   value: "..."              feature, command, role: the value; gpu:
 *                             the compute capability ("8.0")
 *   phase: forward            role: the phase that decides it
 *   framework: tensorflow     feature: whose releases since counts
 *                             (pytorch, tensorflow, vllm, sglang)
 *                             (pytorch, the default, or tensorflow)
 *   source: "file, release"   required: where it comes from upstream
 *
 * rules_load.c hands this loader the parsed document (aliases and depth
 * already refused); the rule loader's errors carry file, line and column.
 * Every question takes the release range a message proves (kn_release)
 * and answers only what holds in every release of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge.h"
#include "yaml_util.h"

#define KN_MAX 256              /* entries of all knowledge files */

typedef enum {
	KN_LAYOUT, KN_HINT, KN_VARIABLE, KN_BROKEN, KN_OPTION, KN_FEATURE,
	KN_COMMAND, KN_ROLE, KN_GPU, KN_WHAT_COUNT
} kn_what;

static const char *const kn_whats[KN_WHAT_COUNT] = {
	[KN_LAYOUT] = "layout", [KN_HINT] = "hint",
	[KN_VARIABLE] = "variable", [KN_BROKEN] = "broken",
	[KN_OPTION] = "option", [KN_FEATURE] = "feature",
	[KN_COMMAND] = "command", [KN_ROLE] = "role", [KN_GPU] = "gpu",
};

static const char *const kn_vendors[] = {
	"nvidia", "amd", "intel", "apple", NULL,
};

/* One entry; the strings are owned by the table. */
typedef struct {
	kn_what what;
	char *name, *vendor, *var, *value, *phase, *source;
	char *framework;        /* feature: whose release; NULL: PyTorch */
	int since, until;       /* releases; until KN_OPEN when not given */
	int64_t min;            /* -1 when not given */
} kn_entry;

struct kn_table {
	kn_entry v[KN_MAX];
	int n;
};

kn_table *
kn_new(void)
{
	return calloc(1, sizeof(kn_table));
}

static void
kn_entry_free(kn_entry *e)
{
	free(e->name);
	free(e->vendor);
	free(e->var);
	free(e->value);
	free(e->phase);
	free(e->source);
	free(e->framework);
}

void
kn_free(kn_table *t)
{
	int i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		kn_entry_free(&t->v[i]);
	free(t);
}

int
kn_count(const kn_table *t)
{
	return t != NULL ? t->n : 0;
}

/* Parses "MAJOR.MINOR" into MAJOR * 100 + MINOR; -1 when it is not one. */
static int
kn_parse_release(const char *s)
{
	char *end;
	long major, minor;

	major = strtol(s, &end, 10);
	if (end == s || *end != '.' || major < 0 || major > 99)
		return -1;
	s = end + 1;
	minor = strtol(s, &end, 10);
	if (end == s || *end != '\0' || minor < 0 || minor > 99)
		return -1;
	return (int)(major * 100 + minor);
}

void
kn_release_text(int release, char *buf, size_t cap)
{
	snprintf(buf, cap, "%d.%d", release / 100, release % 100);
}

static bool
kn_in(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Reads one entry; false (with errors) when it is not valid. */
static bool
kn_entry_load(yu_ctx *c, yaml_node_t *n, kn_entry *e)
{
	static const char *const keys[] = {
		"what", "name", "vendor", "var", "since", "until", "min",
		"value", "phase", "source", "framework", NULL,
	};
	yaml_node_pair_t *p;
	int before = c->nerr, i;

	memset(e, 0, sizeof *e);
	e->what = KN_WHAT_COUNT;
	e->since = -1;
	e->until = KN_OPEN;
	e->min = -1;
	if (n == NULL || n->type != YAML_MAPPING_NODE) {
		yu_err(c, n, "a knowledge entry must be a mapping "
		    "(what, name, since, source, ...)");
		return false;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *kn = yu_node(c, p->key), *vn = yu_node(c, p->value);
		const char *k = yu_text(kn), *v = yu_text(vn);
		char **slot = NULL;
		char *end;

		if (k == NULL || v == NULL) {
			yu_err(c, kn, "a knowledge entry holds plain values only");
			continue;
		}
		if (!kn_in(k, keys)) {
			yu_err(c, kn, "unknown key '%s' in a knowledge "
			    "entry (expected what, name, vendor, var, since, "
			    "until, min, value, phase, source, framework)", k);
			continue;
		}
		if (strcmp(k, "what") == 0) {
			for (i = 0; i < KN_WHAT_COUNT; i++)
				if (strcmp(v, kn_whats[i]) == 0)
					e->what = (kn_what)i;
			if (e->what == KN_WHAT_COUNT)
				yu_err(c, vn, "unknown what '%s' (expected "
				    "layout, hint, variable, broken, option, "
				    "feature, command, role or gpu)", v);
			continue;
		}
		if (strcmp(k, "since") == 0 || strcmp(k, "until") == 0) {
			int r = kn_parse_release(v);

			/* A plain 1.10 is the number 1.1 to other YAML readers
			 * (tests/check_fixes.py among them). */
			if (vn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
				yu_err(c, vn, "quote the release '%s' (a "
				    "plain 1.10 reads as the number 1.1)", v);
			else if (r < 0)
				yu_err(c, vn, "'%s' is not a release "
				    "(MAJOR.MINOR, quoted)", v);
			else if (k[0] == 's')
				e->since = r;
			else
				e->until = r;
			continue;
		}
		if (strcmp(k, "min") == 0) {
			long long m = strtoll(v, &end, 10);

			if (end == v || *end != '\0' || m < 0)
				yu_err(c, vn, "min must be a whole number, "
				    "not '%s'", v);
			else
				e->min = m;
			continue;
		}
		if (strcmp(k, "framework") == 0 &&
		    strcmp(v, "tensorflow") != 0 && strcmp(v, "pytorch") != 0 &&
		    strcmp(v, "vllm") != 0 && strcmp(v, "sglang") != 0 &&
		    strcmp(v, "tgi") != 0) {
			yu_err(c, vn, "unknown framework '%s' (expected "
			    "pytorch, tensorflow, vllm, sglang or tgi)", v);
			continue;
		}
		if (strcmp(k, "vendor") == 0 && !kn_in(v, kn_vendors)) {
			yu_err(c, vn, "unknown vendor '%s' (expected "
			    "nvidia, amd, intel or apple)", v);
			continue;
		}
		slot = strcmp(k, "name") == 0 ? &e->name :
		    strcmp(k, "vendor") == 0 ? &e->vendor :
		    strcmp(k, "var") == 0 ? &e->var :
		    strcmp(k, "value") == 0 ? &e->value :
		    strcmp(k, "phase") == 0 ? &e->phase :
		    strcmp(k, "framework") == 0 ? &e->framework : &e->source;
		if (*slot != NULL) {
			yu_err(c, kn, "key '%s' is given twice", k);
			continue;
		}
		*slot = yu_strdup(c, vn, v);
	}
	if (e->what == KN_WHAT_COUNT)
		yu_err(c, n, "a knowledge entry needs a what");
	if (e->name == NULL)
		yu_err(c, n, "a knowledge entry needs a name");
	if (e->source == NULL || e->source[0] == '\0')
		yu_err(c, n, "a knowledge entry needs its source "
		    "(upstream file and release)");
	if ((e->what == KN_LAYOUT || e->what == KN_HINT ||
	    e->what == KN_VARIABLE || e->what == KN_BROKEN ||
	    e->what == KN_OPTION || (e->what == KN_FEATURE &&
	    e->value == NULL)) && e->since < 0)
		yu_err(c, n, "this entry needs since (the first "
		    "release)");
	if (e->since >= 0 && e->until < e->since)
		yu_err(c, n, "until is before since");
	if ((e->what == KN_VARIABLE || e->what == KN_BROKEN ||
	    e->what == KN_COMMAND) && e->vendor == NULL)
		yu_err(c, n, "this entry needs a vendor");
	if (e->what == KN_BROKEN && e->var == NULL)
		yu_err(c, n, "a broken entry needs var (the "
		    "variable that fails)");
	if (e->what == KN_GPU && (e->value == NULL ||
	    kn_parse_release(e->value) < 0))
		yu_err(c, n, "a gpu entry needs its compute capability "
		    "as value (\"8.0\")");
	if (e->framework != NULL && (e->what != KN_FEATURE || e->since < 0))
		yu_err(c, n, "framework is for a feature with since");
	if (e->what == KN_COMMAND && e->value == NULL)
		yu_err(c, n, "a command entry needs a value");
	if (e->what == KN_ROLE && (e->value == NULL) == (e->phase == NULL))
		yu_err(c, n, "a role entry needs a value or a "
		    "phase, not both");
	if (e->what == KN_ROLE && e->name != NULL &&
	    strcmp(e->name, "activation") != 0 &&
	    strcmp(e->name, "parameter") != 0)
		yu_err(c, n, "a role is activation or parameter");
	if (c->nerr > before) {
		kn_entry_free(e);
		return false;
	}
	return true;
}

bool
kn_load(kn_table *t, const char *path, yaml_document_t *doc,
    yaml_node_t *list, rl_errors *errs)
{
	yu_ctx c = { .file = path, .doc = doc, .errs = errs };
	kn_entry *entries;
	yaml_node_item_t *it;
	int n = 0, i;
	bool ok = true;

	if (list == NULL || list->type != YAML_SEQUENCE_NODE) {
		yu_err(&c, list, "knowledge must be a list of "
		    "entries");
		return false;
	}
	entries = calloc(KN_MAX, sizeof *entries);
	if (entries == NULL) {
		yu_err(&c, list, "out of memory");
		return false;
	}
	for (it = list->data.sequence.items.start;
	    it < list->data.sequence.items.top; it++) {
		yaml_node_t *e = yu_node(&c, *it);

		if (t->n + n == KN_MAX) {
			yu_err(&c, e, "at most %d knowledge entries",
			    KN_MAX);
			ok = false;
			break;
		}
		if (kn_entry_load(&c, e, &entries[n]))
			n++;
		else
			ok = false;
	}
	if (!ok) {
		for (i = 0; i < n; i++)
			kn_entry_free(&entries[i]);
	} else {
		memcpy(&t->v[t->n], entries, (size_t)n * sizeof *entries);
		t->n += n;
	}
	free(entries);
	return ok;
}

/* The entry of what and name, or NULL. */
static const kn_entry *
kn_find(const kn_table *t, kn_what what, const char *name)
{
	int i;

	for (i = 0; t != NULL && name != NULL && i < t->n; i++)
		if (t->v[i].what == what && strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

const char *
kn_vendor(const od_event *ev)
{
	switch (ev->kind) {
	case OD_KIND_HIP:
		return "amd";
	case OD_KIND_XPU:
		return "intel";
	case OD_KIND_MPS:
	case OD_KIND_METAL:
		return "apple";
	case OD_KIND_NPU:
		return "huawei";
	case OD_KIND_SYCL:
		/* Level Zero is Intel's; the SYCL runtime names the back end
		 * it ran on (recognisers.yaml, sycl-ur-out-of-device-memory),
		 * and an unnamed one may be any vendor's. */
		return strcmp(ev->error, "level_zero") == 0 ||
		    strcmp(ev->error, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY") ==
		    0 ? "intel" : NULL;
	case OD_KIND_CUDA_CACHING_ALLOCATOR:
	case OD_KIND_CUDA_RAW:
	case OD_KIND_CUBLAS:
	case OD_KIND_CUDNN:
	case OD_KIND_NCCL:
		return "nvidia";
	case OD_KIND_TF:
		/* TensorFlow's ROCm build names HIP's errors in its driver
		 * messages (tensorflow/stream_executor/rocm/rocm_driver.cc:
		 * "failed to allocate ... from device: hipError_t(1002)"); its
		 * ToString prints the errors it knows by name,
		 * "HIP_ERROR_OutOfMemory" (tensorflow/compiler/xla/
		 * stream_executor/rocm/rocm_driver.cc, OSTREAM_ROCM_ERROR). */
		return ev->message != NULL && (strstr(ev->message, "hipError") !=
		    NULL || strstr(ev->message, "HIP_ERROR_") != NULL) ? "amd" :
		    NULL;
	case OD_KIND_XLA:
		/* XLA:TPU's messages, as the recognisers name their printer. */
		return ev->framework != NULL &&
		    strcmp(ev->framework, "libtpu") == 0 ? "google" : NULL;
	default:
		return NULL;
	}
}

static bool
kn_vendor_is(const kn_entry *e, const char *vendor)
{
	return e->vendor == NULL || (vendor != NULL &&
	    strcmp(e->vendor, vendor) == 0);
}

bool
kn_release(const kn_table *t, const od_event *ev, kn_range *r)
{
	const kn_entry *l, *h;

	/* torch_npu's layouts (recog_pytorch.c) came and went with its own
	 * releases: they say nothing of PyTorch's. */
	if (t == NULL || ev->framework == NULL ||
	    strcmp(ev->framework, "pytorch") != 0 || ev->kind == OD_KIND_NPU)
		return false;
	l = kn_find(t, KN_LAYOUT, od_layout_name(ev->layout));
	if (l == NULL)
		return false;
	r->min = l->since;
	r->max = l->until;
	/* The hint narrows the range; a hint that contradicts the layout (a
	 * build the table does not know) leaves the layout's range. */
	h = kn_find(t, KN_HINT, od_hint_name(ev->hint));
	if (h != NULL) {
		int lo = h->since > r->min ? h->since : r->min;
		int hi = h->until < r->max ? h->until : r->max;

		if (lo <= hi) {
			r->min = lo;
			r->max = hi;
		}
	}
	return true;
}

/*
 * Whether the entries of what and name for vendor cover every release of
 * r (1), none of them (0), or some (-1).  When entries cover every
 * release, *lowest is the largest of their minimum values (the smallest
 * value every release accepts), -1 when none gives one.
 */
static int
kn_cover(const kn_table *t, kn_what what, const char *name,
    const char *vendor, kn_range r, int64_t *lowest)
{
	int rel, covered = 0, total = 0;
	int64_t low = -1;
	bool unbounded_min = false;
	int i;

	/* Walk the releases of the range; an open range ends at the last
	 * bound the table names (every later release is like that one). */
	int hi = r.max;

	if (hi == KN_OPEN) {
		hi = r.min;
		for (i = 0; i < t->n; i++) {
			if (t->v[i].since > hi)
				hi = t->v[i].since;
			if (t->v[i].until != KN_OPEN && t->v[i].until + 1 > hi)
				hi = t->v[i].until + 1;
		}
	}
	for (rel = r.min; rel <= hi; rel++) {
		const kn_entry *hit = NULL;

		if (rel % 100 > 30) {   /* no minor release beyond .30 */
			rel = (rel / 100 + 1) * 100 - 1;
			continue;
		}
		total++;
		for (i = 0; i < t->n && hit == NULL; i++) {
			const kn_entry *e = &t->v[i];

			if (e->what == what && strcmp(e->name, name) == 0 &&
			    kn_vendor_is(e, vendor) && e->since <= rel &&
			    rel <= e->until)
				hit = e;
		}
		if (hit == NULL)
			continue;
		covered++;
		if (hit->min < 0)
			unbounded_min = true;
		else if (hit->min > low)
			low = hit->min;
	}
	if (lowest != NULL)
		*lowest = covered == total && !unbounded_min ? low : -1;
	return covered == total ? 1 : covered == 0 ? 0 : -1;
}

/* Whether a broken entry says var fails in some release of r. */
static bool
kn_broken(const kn_table *t, const char *var, const char *vendor, kn_range r)
{
	int i;

	for (i = 0; i < t->n; i++) {
		const kn_entry *e = &t->v[i];

		if (e->what == KN_BROKEN && strcmp(e->var, var) == 0 &&
		    kn_vendor_is(e, vendor) && e->since <= r.max &&
		    r.min <= e->until)
			return true;
	}
	return false;
}

const char *
kn_alloc_var(const kn_table *t, const od_event *ev)
{
	const char *vendor = kn_vendor(ev);
	kn_range r;
	int i;

	if (vendor == NULL || !kn_release(t, ev, &r))
		return NULL;
	for (i = 0; i < t->n; i++) {
		const kn_entry *e = &t->v[i];

		if (e->what != KN_VARIABLE || !kn_vendor_is(e, vendor) ||
		    kn_broken(t, e->name, vendor, r))
			continue;
		if (kn_cover(t, KN_VARIABLE, e->name, vendor, r, NULL) == 1)
			return e->name;
	}
	return NULL;
}

int
kn_option(const kn_table *t, const od_event *ev, const char *option)
{
	const char *vendor = kn_vendor(ev);
	kn_range r;

	if (vendor == NULL || !kn_release(t, ev, &r))
		return -1;
	/* No variable to set it with: the option is not there to use. */
	if (kn_alloc_var(t, ev) == NULL)
		return kn_cover(t, KN_VARIABLE, "PYTORCH_CUDA_ALLOC_CONF",
		    vendor, r, NULL) == 0 && strcmp(vendor, "nvidia") == 0 ?
		    0 : -1;
	return kn_cover(t, KN_OPTION, option, vendor, r, NULL);
}

int64_t
kn_option_min(const kn_table *t, const od_event *ev, const char *option)
{
	const char *vendor = kn_vendor(ev);
	int64_t low = -1;
	kn_range r;

	if (vendor == NULL || !kn_release(t, ev, &r) ||
	    kn_alloc_var(t, ev) == NULL ||
	    kn_cover(t, KN_OPTION, option, vendor, r, &low) != 1)
		return -1;
	return low;
}

const char *
kn_autocast(const kn_table *t, const od_event *ev)
{
	static const char *const apis[] = {
		"torch.autocast", "torch.cuda.amp.autocast", NULL,
	};
	kn_range r;
	int i;

	if (!kn_release(t, ev, &r))
		return NULL;
	for (i = 0; apis[i] != NULL; i++)
		if (kn_cover(t, KN_FEATURE, apis[i], NULL, r, NULL) == 1)
			return apis[i];
	return NULL;
}

/*
 * Whether feature name is in every release the log shows (1), in none
 * (0), or that is unknown (-1).  A PyTorch feature takes the message's
 * range (kn_release); a TensorFlow one the releases the log shows
 * (context.c: tf_min, tf_max).  A message that names the feature (a hint
 * to set it) comes from a release that has it.
 */
int
kn_feature(const kn_table *t, const od_event *ev, const char *name)
{
	const kn_entry *e = t != NULL ? kn_find(t, KN_FEATURE, name) : NULL;
	kn_range r;

	if (e == NULL || e->since < 0)
		return -1;
	if (ev->message != NULL && strstr(ev->message, name) != NULL)
		return 1;
	/* A feature of one vendor (cudaMallocAsync: NVIDIA's) is in no
	 * release of another's build. */
	if (e->vendor != NULL && kn_vendor(ev) != NULL &&
	    strcmp(e->vendor, kn_vendor(ev)) != 0)
		return 0;
	if (e->framework != NULL && strcmp(e->framework, "tensorflow") == 0) {
		if (ev->ctx.tf_max >= 0 && ev->ctx.tf_max < e->since)
			return 0;
		return ev->ctx.tf_min >= e->since ? 1 : -1;
	}
	/* A serving flag: the vLLM releases the log shows (context.c); no
	 * SGLang line names its release, so that one stays unknown. */
	if (e->framework != NULL && strcmp(e->framework, "vllm") == 0) {
		if (ev->ctx.vllm_max >= 0 && ev->ctx.vllm_max < e->since)
			return 0;
		return ev->ctx.vllm_min >= e->since ? 1 : -1;
	}
	/* Text Generation Inference's: the releases its image tag or
	 * launcher's --version show (context.c, CX_TGI). */
	if (e->framework != NULL && strcmp(e->framework, "tgi") == 0) {
		if (ev->ctx.tgi_max >= 0 && ev->ctx.tgi_max < e->since)
			return 0;
		return ev->ctx.tgi_min >= e->since ? 1 : -1;
	}
	if (e->framework != NULL && strcmp(e->framework, "sglang") == 0)
		return -1;
	if (!kn_release(t, ev, &r))
		return -1;
	return kn_cover(t, KN_FEATURE, name, NULL, r, NULL) == 1 ? 1 :
	    r.max != KN_OPEN && r.max < e->since ? 0 : -1;
}

const char *
kn_command(const kn_table *t, const od_event *ev, const char *name)
{
	const char *vendor = kn_vendor(ev);
	int i;

	for (i = 0; t != NULL && vendor != NULL && i < t->n; i++)
		if (t->v[i].what == KN_COMMAND &&
		    strcmp(t->v[i].name, name) == 0 &&
		    strcmp(t->v[i].vendor, vendor) == 0)
			return t->v[i].value;
	return NULL;
}

double
kn_compute_capability(const kn_table *t, const od_event *ev)
{
	const kn_entry *e = kn_find(t, KN_GPU, ev->ctx.gpu_model);
	const char *vendor = kn_vendor(ev);
	int cc;

	if (e == NULL || vendor == NULL || strcmp(vendor, "nvidia") != 0)
		return -1;
	cc = kn_parse_release(e->value);
	return cc / 100 + (cc % 100) / 10.0;
}

const char *
kn_role(const kn_table *t, const od_event *ev)
{
	int f, i;

	if (t == NULL)
		return NULL;
	for (f = ev->nframes - 1; f >= 0; f--) {
		const od_frame *fr = &ev->frames[f];

		for (i = 0; i < t->n; i++) {
			const kn_entry *e = &t->v[i];

			if (e->what == KN_ROLE && e->value != NULL &&
			    (strstr(fr->func, e->value) != NULL ||
			    strstr(fr->code, e->value) != NULL))
				return e->name;
		}
	}
	for (i = 0; i < t->n; i++) {
		const kn_entry *e = &t->v[i];

		if (e->what == KN_ROLE && e->phase != NULL &&
		    strcmp(e->phase, ev->phase) == 0)
			return e->name;
	}
	return NULL;
}
