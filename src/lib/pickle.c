/*
 * pickle.c: a restricted reader of Python pickles, for PyTorch's memory
 * snapshots.
 *
 * torch.cuda.memory._dump_snapshot() does pickle.dump(_snapshot(), f)
 * (torch/cuda/memory.py): a pickle of the default protocol of the Python
 * that wrote it (2 to 5) holding plain dicts, lists, tuples, str, int,
 * float, bool and None.  This reader runs the part of the pickle machine
 * that builds those values and nothing else.  The opcodes and their
 * arguments are CPython's (Lib/pickletools.py, the opcodes table, and
 * Modules/_pickle.c, load()): every opcode that would import a name
 * (GLOBAL, STACK_GLOBAL, INST), call one (REDUCE, OBJ, NEWOBJ,
 * NEWOBJ_EX, BUILD), resolve a persistent id (PERSID, BINPERSID) or an
 * extension code (EXT1, EXT2, EXT4) is refused with the byte offset and
 * the opcode; so are the opcodes that no snapshot uses (protocol 0's text
 * forms, sets, out-of-band buffers).
 *
 * The values are built as jansson values, so that a snapshot saved as
 * JSON goes through the same analysis (snapshot.c).
 *
 * The memo.  Python's pickler memoizes each object once, at a new slot,
 * when it creates it, and fills a container at once; a BINGET of it can
 * come while it still waits on the stack for the APPENDS or SETITEMS that
 * put it in its parent, but nothing is added to it after.  Here a fetch
 * pushes a reference to the same value (shared, not copied) that nothing
 * may be added to, and from the first fetch on nothing may be added to the
 * original either; a memo slot is written once, in sequence, and DUP does
 * not copy containers.  A container can then only grow while nothing else
 * refers to it, and once it is inside another it is never on the stack to
 * grow again, so no container can end up inside itself: the value is a
 * tree whose shared parts are immutable, its size is the number of values
 * made (bounded), and its depth is checked as values are put inside one
 * another (a memo slot keeps the depth of its value up to date).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pickle.h"
#include "report_json.h"

/* What the reader does with an opcode. */
typedef enum {
	PK_NONE,                /* not an opcode */
	PK_OK,                  /* builds a value: run */
	PK_CALL,                /* imports or calls: refused */
	PK_OTHER,               /* harmless but never in a snapshot: refused */
} pk_kind;

static const struct {
	const char *name;
	pk_kind kind;
} pk_ops[256] = {
	/* Built. */
	[0x80] = { "PROTO", PK_OK },
	[0x95] = { "FRAME", PK_OK },
	['.'] = { "STOP", PK_OK },
	['('] = { "MARK", PK_OK },
	['}'] = { "EMPTY_DICT", PK_OK },
	[']'] = { "EMPTY_LIST", PK_OK },
	[')'] = { "EMPTY_TUPLE", PK_OK },
	['d'] = { "DICT", PK_OK },
	['l'] = { "LIST", PK_OK },
	['t'] = { "TUPLE", PK_OK },
	[0x85] = { "TUPLE1", PK_OK },
	[0x86] = { "TUPLE2", PK_OK },
	[0x87] = { "TUPLE3", PK_OK },
	['s'] = { "SETITEM", PK_OK },
	['u'] = { "SETITEMS", PK_OK },
	['a'] = { "APPEND", PK_OK },
	['e'] = { "APPENDS", PK_OK },
	['K'] = { "BININT1", PK_OK },
	['M'] = { "BININT2", PK_OK },
	['J'] = { "BININT", PK_OK },
	[0x8a] = { "LONG1", PK_OK },
	[0x8b] = { "LONG4", PK_OK },
	['G'] = { "BINFLOAT", PK_OK },
	[0x8c] = { "SHORT_BINUNICODE", PK_OK },
	['X'] = { "BINUNICODE", PK_OK },
	[0x8d] = { "BINUNICODE8", PK_OK },
	['C'] = { "SHORT_BINBYTES", PK_OK },
	['B'] = { "BINBYTES", PK_OK },
	[0x8e] = { "BINBYTES8", PK_OK },
	['U'] = { "SHORT_BINSTRING", PK_OK },
	['T'] = { "BINSTRING", PK_OK },
	['N'] = { "NONE", PK_OK },
	[0x88] = { "NEWTRUE", PK_OK },
	[0x89] = { "NEWFALSE", PK_OK },
	[0x94] = { "MEMOIZE", PK_OK },
	['q'] = { "BINPUT", PK_OK },
	['r'] = { "LONG_BINPUT", PK_OK },
	['h'] = { "BINGET", PK_OK },
	['j'] = { "LONG_BINGET", PK_OK },
	['0'] = { "POP", PK_OK },
	['1'] = { "POP_MARK", PK_OK },
	['2'] = { "DUP", PK_OK },
	/* Import, call, or hand a value to the unpickler's hooks. */
	['c'] = { "GLOBAL", PK_CALL },
	[0x93] = { "STACK_GLOBAL", PK_CALL },
	['R'] = { "REDUCE", PK_CALL },
	['b'] = { "BUILD", PK_CALL },
	['i'] = { "INST", PK_CALL },
	['o'] = { "OBJ", PK_CALL },
	[0x81] = { "NEWOBJ", PK_CALL },
	[0x92] = { "NEWOBJ_EX", PK_CALL },
	['P'] = { "PERSID", PK_CALL },
	['Q'] = { "BINPERSID", PK_CALL },
	[0x82] = { "EXT1", PK_CALL },
	[0x83] = { "EXT2", PK_CALL },
	[0x84] = { "EXT4", PK_CALL },
	/* Never in a snapshot of protocol 2 or later. */
	['I'] = { "INT", PK_OTHER },
	['L'] = { "LONG", PK_OTHER },
	['F'] = { "FLOAT", PK_OTHER },
	['S'] = { "STRING", PK_OTHER },
	['V'] = { "UNICODE", PK_OTHER },
	['p'] = { "PUT", PK_OTHER },
	['g'] = { "GET", PK_OTHER },
	[0x8f] = { "EMPTY_SET", PK_OTHER },
	[0x90] = { "ADDITEMS", PK_OTHER },
	[0x91] = { "FROZENSET", PK_OTHER },
	[0x96] = { "BYTEARRAY8", PK_OTHER },
	[0x97] = { "NEXT_BUFFER", PK_OTHER },
	[0x98] = { "READONLY_BUFFER", PK_OTHER },
};

/* A value on the stack: a reference, how deep it is (0 for a scalar),
 * the memo slot it was last stored in (-1: none), and whether it is a
 * shared one that must not change. */
typedef struct {
	json_t *v;
	int depth;
	int64_t memo;
	bool frozen;
} pk_slot;

/* A memo slot: a reference, its depth (kept up to date while it grows),
 * and whether it was fetched (then it may not grow). */
typedef struct {
	json_t *v;
	int depth;
	bool fetched;
} pk_memo;

typedef struct {
	const unsigned char *p;
	size_t len, pos;        /* pos: the next byte to read */
	size_t at;              /* the offset of the opcode being run */
	int op;
	const char *name;
	od_error *err;
	pk_slot *stack;
	size_t n, cap;
	size_t *marks;
	size_t nmarks, marks_cap;
	pk_memo *memo;
	size_t nmemo, memo_cap;
	size_t values;
	bool failed;
} pk_reader;

static const char *
pk_opname(int op)
{
	return pk_ops[op].name != NULL ? pk_ops[op].name : "unknown";
}

/* Fails the read at the current opcode with a message. */
static bool __attribute__((format(printf, 2, 3)))
pk_fail(pk_reader *r, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (r->failed)
		return false;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	od_error_set(r->err, r->name, 0, 0, "pickle byte %zu, opcode %s "
	    "(0x%02x): %s", r->at, pk_opname(r->op), (unsigned)r->op, msg);
	r->failed = true;
	return false;
}

static bool
pk_nomem(pk_reader *r)
{
	return pk_fail(r, "out of memory");
}

/* Whether n more bytes are there; fails as truncated when not. */
static bool
pk_need(pk_reader *r, uint64_t n)
{
	if (n > r->len - r->pos)
		return pk_fail(r, "the input ends %llu bytes short (truncated)",
		    (unsigned long long)(n - (r->len - r->pos)));
	return true;
}

static uint64_t
pk_le(pk_reader *r, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | r->p[r->pos + (size_t)i];
	r->pos += (size_t)n;
	return v;
}

/* Counts one more value made against the bound. */
static bool
pk_count(pk_reader *r)
{
	if (++r->values > OD_PICKLE_MAX_VALUES)
		return pk_fail(r, "more than %d values (the bound of a snapshot)",
		    OD_PICKLE_MAX_VALUES);
	return true;
}

/* Pushes v (taking the reference; NULL means out of memory). */
static bool
pk_push(pk_reader *r, json_t *v, int depth, bool frozen)
{
	if (v == NULL)
		return pk_nomem(r);
	if (r->n == r->cap) {
		size_t cap = r->cap != 0 ? 2 * r->cap : 64;
		pk_slot *s;

		if (r->n >= OD_PICKLE_MAX_STACK) {
			json_decref(v);
			return pk_fail(r, "more than %d entries on the stack",
			    OD_PICKLE_MAX_STACK);
		}
		s = realloc(r->stack, cap * sizeof *s);
		if (s == NULL) {
			json_decref(v);
			return pk_nomem(r);
		}
		r->stack = s;
		r->cap = cap;
	}
	r->stack[r->n++] = (pk_slot){ .v = v, .depth = depth, .memo = -1,
	    .frozen = frozen };
	return true;
}

/* A new value, counted and pushed. */
static bool
pk_new(pk_reader *r, json_t *v, int depth)
{
	if (!pk_count(r)) {
		json_decref(v);
		return false;
	}
	return pk_push(r, v, depth, false);
}

static bool
pk_is_container(const json_t *v)
{
	return json_is_array(v) || json_is_object(v);
}

/* Whether child may go inside the container of slot parent: the parent
 * is not shared, and the depth stays within its bound (updated, in the
 * parent's memo slot too). */
static bool
pk_may_insert(pk_reader *r, pk_slot *parent, const pk_slot *child)
{
	if (parent->frozen || (parent->memo >= 0 &&
	    r->memo[parent->memo].fetched))
		return pk_fail(r, "adds to a container already fetched from the "
		    "memo, which a snapshot never does");
	if (child->depth + 1 > OD_PICKLE_MAX_DEPTH)
		return pk_fail(r, "containers nested more than %d deep",
		    OD_PICKLE_MAX_DEPTH);
	if (child->depth + 1 > parent->depth) {
		parent->depth = child->depth + 1;
		if (parent->memo >= 0)
			r->memo[parent->memo].depth = parent->depth;
	}
	return pk_count(r);
}

/* The text of a dict key: a string as it is (without NUL), a number,
 * bool or None as its JSON text; NULL (failed) for a container. */
static json_t *
pk_key(pk_reader *r, json_t *k)
{
	char buf[40];

	if (json_is_string(k)) {
		/* As in JSON (jansson refuses it there): no NUL in a key. */
		if (memchr(json_string_value(k), '\0', json_string_length(k)) !=
		    NULL) {
			pk_fail(r, "a dict key with a NUL byte");
			return NULL;
		}
		return json_incref(k);
	}
	if (json_is_integer(k))
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(k));
	else if (json_is_real(k))
		snprintf(buf, sizeof buf, "%.17g", json_real_value(k));
	else if (json_is_true(k) || json_is_false(k))
		snprintf(buf, sizeof buf, "%s", json_is_true(k) ? "true" :
		    "false");
	else if (json_is_null(k))
		snprintf(buf, sizeof buf, "null");
	else {
		pk_fail(r, "a dict key that is a container");
		return NULL;
	}
	k = json_string(buf);
	if (k == NULL)
		pk_nomem(r);
	return k;
}

/* Sets dict[key] = value from two slots (their references are taken). */
static bool
pk_setitem(pk_reader *r, pk_slot *dict, pk_slot *key, pk_slot *val)
{
	json_t *k;
	bool ok;

	if (!json_is_object(dict->v))
		return pk_fail(r, "sets an item of something not a dict");
	if (!pk_may_insert(r, dict, val))
		return false;
	k = pk_key(r, key->v);
	if (k == NULL)
		return false;
	ok = json_object_setn(dict->v, json_string_value(k),
	    json_string_length(k), val->v) == 0;
	json_decref(k);
	return ok || pk_nomem(r);
}

/* Appends the value of slot val to the list of slot list. */
static bool
pk_append(pk_reader *r, pk_slot *list, pk_slot *val)
{
	if (!json_is_array(list->v))
		return pk_fail(r, "appends to something not a list");
	if (!pk_may_insert(r, list, val))
		return false;
	return json_array_append(list->v, val->v) == 0 || pk_nomem(r);
}

/* Drops the slots from index k to the top. */
static void
pk_drop(pk_reader *r, size_t k)
{
	while (r->n > k)
		json_decref(r->stack[--r->n].v);
}

/* The stack index of the last MARK, which is popped; fails when none. */
static bool
pk_pop_mark(pk_reader *r, size_t *k)
{
	if (r->nmarks == 0)
		return pk_fail(r, "no MARK before it");
	*k = r->marks[--r->nmarks];
	if (*k > r->n)
		return pk_fail(r, "the stack is shorter than at its MARK");
	return true;
}

/* Where the stack above the last mark starts: what is below a mark is
 * out of reach until the mark is popped (Modules/_pickle.c keeps it
 * apart, on its metastack). */
static size_t
pk_base(const pk_reader *r)
{
	return r->nmarks > 0 ? r->marks[r->nmarks - 1] : 0;
}

/* Whether the top holds at least n slots above the last mark. */
static bool
pk_have(pk_reader *r, size_t n)
{
	size_t base = pk_base(r);

	if (r->n < base + n)
		return pk_fail(r, "needs %zu values on the stack", n);
	return true;
}

/* Builds a list (or tuple) from the slots from k to the top. */
static bool
pk_collect(pk_reader *r, size_t k)
{
	pk_slot list = { .v = json_array(), .depth = 1, .memo = -1 };
	size_t i;

	if (list.v == NULL)
		return pk_nomem(r);
	for (i = k; i < r->n; i++)
		if (!pk_append(r, &list, &r->stack[i])) {
			json_decref(list.v);
			return false;
		}
	pk_drop(r, k);
	return pk_new(r, list.v, list.depth);
}

/* A string of n bytes at the current position: text for str (invalid
 * UTF-8, as lone surrogates can be, replaced), or for bytes the text when
 * it is UTF-8 and null when not. */
static bool
pk_string(pk_reader *r, uint64_t n, bool text)
{
	const char *s = (const char *)r->p + r->pos;
	json_t *v;

	if (!pk_need(r, n))
		return false;
	r->pos += (size_t)n;
	if (text)
		v = od_escape_json(s, (size_t)n);
	else if ((v = json_stringn(s, (size_t)n)) == NULL)
		v = json_null();
	return pk_new(r, v, 0);
}

/* An int in n bytes of two's complement, little-endian (LONG1, LONG4):
 * an integer when it fits int64_t, a real when it does not. */
static bool
pk_long(pk_reader *r, uint64_t n)
{
	const unsigned char *b = r->p + r->pos;
	uint64_t i;

	if (!pk_need(r, n))
		return false;
	r->pos += (size_t)n;
	if (n == 0)
		return pk_new(r, json_integer(0), 0);
	if (n <= 8) {
		uint64_t u = 0;

		for (i = n; i > 0; i--)
			u = u << 8 | b[i - 1];
		if (n < 8 && (b[n - 1] & 0x80))
			u |= ~(uint64_t)0 << (8 * n);
		return pk_new(r, json_integer((json_int_t)u), 0);
	} else {
		double d = 0;

		if (n > 64)
			return pk_fail(r, "an integer of %llu bytes (a snapshot's "
			    "are at most 8)", (unsigned long long)n);
		for (i = n; i > 0; i--)
			d = d * 256 + (double)b[i - 1];
		if (b[n - 1] & 0x80)
			d -= ldexp(1.0, (int)(8 * n));
		return pk_new(r, json_real(d), 0);
	}
}

/* Stores the top in memo slot idx, which must be the next one: a slot is
 * written once, and an object memoized once. */
static bool
pk_put(pk_reader *r, uint64_t idx)
{
	pk_slot *top;

	if (r->n == 0)
		return pk_fail(r, "nothing on the stack to memoize");
	if (idx != r->nmemo)
		return pk_fail(r, "memo slot %llu out of sequence (next is %zu)",
		    (unsigned long long)idx, r->nmemo);
	top = &r->stack[r->n - 1];
	if (top->memo >= 0)
		return pk_fail(r, "memoizes the same object twice");
	if (r->nmemo >= OD_PICKLE_MAX_MEMO)
		return pk_fail(r, "more than %d memo slots", OD_PICKLE_MAX_MEMO);
	if (r->nmemo == r->memo_cap) {
		size_t cap = r->memo_cap != 0 ? 2 * r->memo_cap : 64;
		pk_memo *m = realloc(r->memo, cap * sizeof *m);

		if (m == NULL)
			return pk_nomem(r);
		r->memo = m;
		r->memo_cap = cap;
	}
	r->memo[r->nmemo] = (pk_memo){ .v = json_incref(top->v),
	    .depth = top->depth };
	top->memo = (int64_t)r->nmemo++;
	return true;
}

/* Pushes what memo slot idx holds, shared and frozen. */
static bool
pk_get(pk_reader *r, uint64_t idx)
{
	pk_memo *m;

	if (idx >= r->nmemo)
		return pk_fail(r, "memo slot %llu was never stored (%zu are)",
		    (unsigned long long)idx, r->nmemo);
	m = &r->memo[idx];
	m->fetched = true;
	return pk_push(r, json_incref(m->v), m->depth, true);
}

/* Runs the opcode at r->pos. */
static bool
pk_step(pk_reader *r, bool *stop)
{
	size_t k;
	uint64_t n;

	r->at = r->pos;
	r->op = r->p[r->pos++];
	switch (pk_ops[r->op].kind) {
	case PK_CALL:
		return pk_fail(r, "would import or call a Python object; a "
		    "memory snapshot holds only plain values, so it is refused");
	case PK_OTHER:
		return pk_fail(r, "is not used by memory snapshots (protocol 2 "
		    "or later, plain values), so it is refused");
	case PK_NONE:
		return pk_fail(r, "is not a pickle opcode");
	case PK_OK:
		break;
	}
	switch (r->op) {
	case 0x80:      /* PROTO */
		if (!pk_need(r, 1))
			return false;
		if (r->p[r->pos] > 5)
			return pk_fail(r, "protocol %u (this reader knows 2 to 5)",
			    r->p[r->pos]);
		r->pos++;
		return true;
	case 0x95:      /* FRAME: a length, which framing needs, not we */
		if (!pk_need(r, 8))
			return false;
		n = pk_le(r, 8);
		return pk_need(r, n);
	case '.':       /* STOP */
		if (r->n != 1 || r->nmarks != 0)
			return pk_fail(r, "ends with %zu values and %zu marks on "
			    "the stack (one value, no mark, is a pickle)", r->n,
			    r->nmarks);
		*stop = true;
		return true;
	case '(':
		if (r->nmarks == r->marks_cap) {
			size_t cap = r->marks_cap != 0 ? 2 * r->marks_cap : 16;
			size_t *m;

			if (r->nmarks >= OD_PICKLE_MAX_STACK)
				return pk_fail(r, "more than %d marks",
				    OD_PICKLE_MAX_STACK);
			m = realloc(r->marks, cap * sizeof *m);
			if (m == NULL)
				return pk_nomem(r);
			r->marks = m;
			r->marks_cap = cap;
		}
		r->marks[r->nmarks++] = r->n;
		return true;
	case '}':
		return pk_new(r, json_object(), 1);
	case ']':
	case ')':
		return pk_new(r, json_array(), 1);
	case 'l':
	case 't':
		return pk_pop_mark(r, &k) && pk_collect(r, k);
	case 0x85:
	case 0x86:
	case 0x87:
		n = (uint64_t)(r->op - 0x84);
		return pk_have(r, n) && pk_collect(r, r->n - n);
	case 'd': {
		pk_slot dict = { .v = json_object(), .depth = 1, .memo = -1 };
		size_t i;

		if (dict.v == NULL)
			return pk_nomem(r);
		if (!pk_pop_mark(r, &k)) {
			json_decref(dict.v);
			return false;
		}
		if ((r->n - k) % 2 != 0) {
			json_decref(dict.v);
			return pk_fail(r, "an odd number of keys and values");
		}
		for (i = k; i < r->n; i += 2)
			if (!pk_setitem(r, &dict, &r->stack[i],
			    &r->stack[i + 1])) {
				json_decref(dict.v);
				return false;
			}
		pk_drop(r, k);
		return pk_new(r, dict.v, dict.depth);
	}
	case 's':
		if (!pk_have(r, 3) || !pk_setitem(r, &r->stack[r->n - 3],
		    &r->stack[r->n - 2], &r->stack[r->n - 1]))
			return false;
		pk_drop(r, r->n - 2);
		return true;
	case 'u': {
		size_t i;

		if (!pk_pop_mark(r, &k))
			return false;
		if (k == pk_base(r))
			return pk_fail(r, "no dict below its MARK");
		if ((r->n - k) % 2 != 0)
			return pk_fail(r, "an odd number of keys and values");
		for (i = k; i < r->n; i += 2)
			if (!pk_setitem(r, &r->stack[k - 1], &r->stack[i],
			    &r->stack[i + 1]))
				return false;
		pk_drop(r, k);
		return true;
	}
	case 'a':
		if (!pk_have(r, 2) || !pk_append(r, &r->stack[r->n - 2],
		    &r->stack[r->n - 1]))
			return false;
		pk_drop(r, r->n - 1);
		return true;
	case 'e': {
		size_t i;

		if (!pk_pop_mark(r, &k))
			return false;
		if (k == pk_base(r))
			return pk_fail(r, "no list below its MARK");
		for (i = k; i < r->n; i++)
			if (!pk_append(r, &r->stack[k - 1], &r->stack[i]))
				return false;
		pk_drop(r, k);
		return true;
	}
	case 'K':
		return pk_need(r, 1) && pk_new(r, json_integer((json_int_t)
		    pk_le(r, 1)), 0);
	case 'M':
		return pk_need(r, 2) && pk_new(r, json_integer((json_int_t)
		    pk_le(r, 2)), 0);
	case 'J':
		return pk_need(r, 4) && pk_new(r, json_integer((json_int_t)
		    (int32_t)(uint32_t)pk_le(r, 4)), 0);
	case 0x8a:
		return pk_need(r, 1) && pk_long(r, pk_le(r, 1));
	case 0x8b:
		if (!pk_need(r, 4))
			return false;
		n = pk_le(r, 4);
		if (n & 0x80000000u)
			return pk_fail(r, "a negative length");
		return pk_long(r, n);
	case 'G': {
		uint64_t u = 0;
		double d;
		int i;

		if (!pk_need(r, 8))
			return false;
		for (i = 0; i < 8; i++)
			u = u << 8 | r->p[r->pos + (size_t)i];
		r->pos += 8;
		memcpy(&d, &u, sizeof d);
		return pk_new(r, isfinite(d) ? json_real(d) : json_null(), 0);
	}
	case 0x8c:
	case 'C':
	case 'U':
		return pk_need(r, 1) && pk_string(r, pk_le(r, 1), r->op == 0x8c);
	case 'X':
	case 'B':
		return pk_need(r, 4) && pk_string(r, pk_le(r, 4), r->op == 'X');
	case 'T':
		if (!pk_need(r, 4))
			return false;
		n = pk_le(r, 4);
		if (n & 0x80000000u)
			return pk_fail(r, "a negative length");
		return pk_string(r, n, false);
	case 0x8d:
	case 0x8e:
		return pk_need(r, 8) && pk_string(r, pk_le(r, 8), r->op == 0x8d);
	case 'N':
		return pk_new(r, json_null(), 0);
	case 0x88:
		return pk_new(r, json_true(), 0);
	case 0x89:
		return pk_new(r, json_false(), 0);
	case 0x94:
		return pk_put(r, r->nmemo);
	case 'q':
		return pk_need(r, 1) && pk_put(r, pk_le(r, 1));
	case 'r':
		return pk_need(r, 4) && pk_put(r, pk_le(r, 4));
	case 'h':
		return pk_need(r, 1) && pk_get(r, pk_le(r, 1));
	case 'j':
		return pk_need(r, 4) && pk_get(r, pk_le(r, 4));
	case '0':
		if (r->nmarks > 0 && r->marks[r->nmarks - 1] == r->n) {
			r->nmarks--;        /* POP of a mark, as _pickle.c does */
			return true;
		}
		if (!pk_have(r, 1))
			return false;
		pk_drop(r, r->n - 1);
		return true;
	case '1':
		if (!pk_pop_mark(r, &k))
			return false;
		pk_drop(r, k);
		return true;
	case '2': {
		const pk_slot *top;

		if (!pk_have(r, 1))
			return false;
		top = &r->stack[r->n - 1];
		if (pk_is_container(top->v))
			return pk_fail(r, "duplicates a container, which a "
			    "snapshot never does");
		return pk_push(r, json_incref(top->v), 0, false);
	}
	default:
		return pk_fail(r, "is not handled");
	}
}

bool
od_pickle_sniff(const unsigned char *data, size_t len)
{
	return len >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5;
}

json_t *
od_pickle_read(const unsigned char *data, size_t len, const char *name,
    od_error *err)
{
	pk_reader r = { .p = data, .len = len, .name = name, .err = err };
	json_t *result = NULL;
	bool stop = false;
	size_t i;

	if (len > OD_PICKLE_MAX_BYTES) {
		od_error_set(err, name, 0, 0, "a pickle of %zu bytes, over the "
		    "bound of %zu MiB", len, OD_PICKLE_MAX_BYTES >> 20);
		return NULL;
	}
	while (!stop && !r.failed) {
		if (r.pos == r.len) {
			r.at = r.pos;
			r.op = 0;
			od_error_set(err, name, 0, 0, "pickle byte %zu: the input "
			    "ends before STOP (truncated)", r.pos);
			r.failed = true;
			break;
		}
		pk_step(&r, &stop);
	}
	if (stop && !r.failed) {
		result = r.stack[0].v;
		r.n = 0;
	}
	pk_drop(&r, 0);
	for (i = 0; i < r.nmemo; i++)
		json_decref(r.memo[i].v);
	free(r.stack);
	free(r.marks);
	free(r.memo);
	return result;
}
