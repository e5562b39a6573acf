/*
 * test_expr.c: the condition and template language of the rules: the
 * grammar, the units, the functions, how unknown facts propagate, how
 * byte counts are tagged and printed, every parse error with its column,
 * and the bounds on length, nesting and pending values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expr.h"

#define GiB 1073741824.0

/* The facts of a made-up event.  The ones with type XV_UNKNOWN exist but
 * the log does not give them. */
static const struct {
	const char *name;
	xv_type type;
	double num;
	bool bytes;
	const char *str;
} facts[] = {
	{ "requested", XV_NUM, 2147483648.0, true, NULL },
	{ "reserved_unallocated", XV_NUM, 3221225472.0, true, NULL },
	{ "total", XV_NUM, 85899345920.0, true, NULL },
	{ "host.anon_rss", XV_NUM, 1048576.0, true, NULL },
	{ "n", XV_NUM, 3, false, NULL },
	{ "zero", XV_NUM, 0, false, NULL },
	{ "ratio", XV_NUM, 0.25, false, NULL },
	{ "name", XV_STR, 0, false, "python" },
	{ "t", XV_BOOL, 1, false, NULL },
	{ "f", XV_BOOL, 0, false, NULL },
	/* Known to exist, unknown for this event. */
	{ "u", XV_UNKNOWN, 0, false, NULL },
	{ "free_mem", XV_UNKNOWN, 0, false, NULL },
	{ "allowed", XV_UNKNOWN, 0, false, NULL },
	/* A lookup that says true but gives no proper value. */
	{ "weird", XV_UNKNOWN, 0, false, NULL },
	{ "nan", XV_NUM, 0, false, NULL },
};

static int
fact_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof facts / sizeof facts[0]; i++)
		if (strlen(facts[i].name) == len &&
		    memcmp(facts[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static bool
exists(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	return fact_index(name, len) >= 0;
}

static bool
lookup(void *ctx, const char *name, size_t len, xv_value *out)
{
	int i = fact_index(name, len);

	(void)ctx;
	if (i < 0)
		return false;
	if (strcmp(facts[i].name, "weird") == 0) {
		out->type = XV_UNKNOWN;
		return true;
	}
	if (strcmp(facts[i].name, "nan") == 0) {
		out->type = XV_NUM;
		out->num = NAN;
		return true;
	}
	if (facts[i].type == XV_UNKNOWN)
		return false;
	out->type = facts[i].type;
	out->num = facts[i].num;
	out->bytes = facts[i].bytes;
	out->b = facts[i].num != 0;
	out->str = facts[i].str;
	out->len = facts[i].str ? strlen(facts[i].str) : 0;
	return true;
}

/* Parses src (which must be valid) and returns the expression. */
static xp_expr *
parse(const char *src)
{
	od_error err;
	xp_expr *e;

	memset(&err, 0, sizeof err);
	e = xp_parse(src, strlen(src), exists, NULL, &err);
	if (e == NULL)
		fail_msg("'%s': column %llu: %s", src,
		    (unsigned long long)err.col, err.msg);
	return e;
}

/* Evaluates src against the facts above (not for string results). */
static xv_value
ev(const char *src)
{
	xp_expr *e = parse(src);
	xv_value v = xp_eval(e, lookup, NULL);

	assert_true(v.type != XV_STR);
	xp_free(e);
	return v;
}

/* Evaluates src and formats the result. */
static const char *
fmt(const char *src)
{
	static char buf[256];
	xp_expr *e = parse(src);

	xp_format(xp_eval(e, lookup, NULL), buf, sizeof buf);
	xp_free(e);
	return buf;
}

#define assert_unknown(src) assert_int_equal(ev(src).type, XV_UNKNOWN)
#define assert_is_true(src) do { \
	xv_value v_ = ev(src); \
	assert_int_equal(v_.type, XV_BOOL); \
	assert_true(v_.b); \
} while (0)
#define assert_is_false(src) do { \
	xv_value v_ = ev(src); \
	assert_int_equal(v_.type, XV_BOOL); \
	assert_false(v_.b); \
} while (0)

/* Asserts that src evaluates to the number want, tagged as bytes or not. */
static void
assert_num(const char *src, double want, bool bytes)
{
	xv_value v = ev(src);

	if (v.type != XV_NUM || v.num != want || v.bytes != bytes)
		fail_msg("'%s': got type %d %.17g bytes=%d, want %.17g "
		    "bytes=%d", src, (int)v.type, v.num, (int)v.bytes, want,
		    (int)bytes);
}

/* Asserts that src fails to parse at col with the message msg. */
static void
assert_error(const char *src, size_t len, uint64_t col, const char *msg)
{
	od_error err;
	xp_expr *e;

	memset(&err, 0, sizeof err);
	e = xp_parse(src, len, exists, NULL, &err);
	if (e != NULL) {
		xp_free(e);
		fail_msg("'%s' parsed, expected \"%s\"", src, msg);
	}
	if (err.col != col || strcmp(err.msg, msg) != 0)
		fail_msg("'%s': got %llu \"%s\", want %llu \"%s\"", src,
		    (unsigned long long)err.col, err.msg,
		    (unsigned long long)col, msg);
	assert_string_equal(err.file, "");
	assert_int_equal(err.line, 0);
}
#define ERR(src, col, msg) assert_error(src, strlen(src), col, msg)

/* Renders a template that must parse; returns what render returned. */
static bool
render(const char *src, char *out, size_t cap)
{
	od_error err;
	xp_template *t;
	bool known;

	memset(&err, 0, sizeof err);
	t = xp_template_parse(src, strlen(src), exists, NULL, &err);
	if (t == NULL)
		fail_msg("template '%s': column %llu: %s", src,
		    (unsigned long long)err.col, err.msg);
	known = xp_template_render(t, lookup, NULL, out, cap);
	xp_template_free(t);
	return known;
}

static void
assert_render(const char *src, const char *want, bool known)
{
	char out[512];

	assert_int_equal(render(src, out, sizeof out), known);
	assert_string_equal(out, want);
}

static void
assert_template_error(const char *src, uint64_t col, const char *msg)
{
	od_error err;
	xp_template *t;

	memset(&err, 0, sizeof err);
	t = xp_template_parse(src, strlen(src), exists, NULL, &err);
	if (t != NULL) {
		xp_template_free(t);
		fail_msg("template '%s' parsed, expected \"%s\"", src, msg);
	}
	if (err.col != col || strcmp(err.msg, msg) != 0)
		fail_msg("template '%s': got %llu \"%s\", want %llu \"%s\"",
		    src, (unsigned long long)err.col, err.msg,
		    (unsigned long long)col, msg);
}

static void
test_literals(void **state)
{
	(void)state;
	assert_num("42", 42, false);
	assert_num("0.9", 0.9, false);
	assert_num("1e3", 1000, false);
	assert_num("2.5E-1", 0.25, false);
	assert_num("90%", 0.9, false);
	assert_num("12.5%", 0.125, false);
	assert_is_true("true");
	assert_is_false("false");
	assert_is_true("'it\\'s' == \"it's\"");
	assert_is_true("\"a\\\\b\" == 'a\\\\b'");
	assert_is_true("'say \"hi\"' == \"say \\\"hi\\\"\"");
	assert_string_equal(fmt("'a\\\\b'"), "a\\b");
	assert_string_equal(fmt("''"), "");
	assert_is_true("'' == \"\"");
	/* Whitespace of every kind, as YAML block scalars give it. */
	assert_is_true("\n\t1 <\r\n 2 ");
}

static void
test_sizes(void **state)
{
	(void)state;
	assert_is_true("2GiB == 2147483648");
	assert_is_true("1.5GB == 1500000000");
	assert_num("2GiB", 2147483648.0, true);
	assert_num("512MiB", 536870912.0, true);
	assert_num("100KiB", 102400.0, true);
	assert_num("10B", 10, true);
	assert_num("1.5TiB", 1649267441664.0, true);
	assert_num("1PiB", 1125899906842624.0, true);
	assert_num("2GB", 2e9, true);
	assert_num("500MB", 5e8, true);
	assert_num("4KB", 4000, true);
	assert_num("1TB", 1e12, true);
	/* Decimals are converted exactly, rounded half up to a byte. */
	assert_num("0.1GiB", 107374182.0, true);
	assert_num("1.5B", 2, true);
	assert_num("0.001KiB", 1, true);
	/* Facts carry their own tag. */
	assert_num("requested", 2147483648.0, true);
	assert_num("host.anon_rss", 1048576.0, true);
	assert_num("n", 3, false);
}

static void
test_precedence(void **state)
{
	(void)state;
	assert_num("1 + 2 * 3", 7, false);
	assert_num("(1 + 2) * 3", 9, false);
	assert_num("10 - 4 - 3", 3, false);
	assert_num("100 / 10 / 5", 2, false);
	assert_num("2 * 3 / 4", 1.5, false);
	assert_num("-2 * 3", -6, false);
	assert_num("2 * -3", -6, false);
	assert_num("- -2", 2, false);
	assert_num("-(1 + 2)", -3, false);
	assert_num("1 - -1", 2, false);
	assert_num("10 - 2 * 3 + 1", 5, false);
	assert_num("((((7))))", 7, false);
	/* and binds tighter than or. */
	assert_is_true("true or false and false");
	assert_is_false("(true or false) and false");
	assert_is_true("false and false or true");
	/* not is looser than comparisons, tighter than and. */
	assert_is_true("not 1 > 2");
	assert_is_true("not true or true");
	assert_is_false("not (true or true)");
	assert_is_false("not true and true");
	assert_is_true("not not true");
	/* Comparisons are looser than arithmetic. */
	assert_is_true("1 + 1 == 2 and 3 > 2");
	assert_is_true("2 * 3 >= 6");
	assert_is_true("requested <= reserved_unallocated - 1GiB");
	assert_is_true("reserved_unallocated >= requested and requested > 0");
	assert_is_true("(1 < 2) == true");
}

static void
test_comparisons(void **state)
{
	(void)state;
	assert_is_true("1 == 1");
	assert_is_false("1 == 2");
	assert_is_true("1 != 2");
	assert_is_true("1 < 2");
	assert_is_false("2 < 2");
	assert_is_true("2 <= 2");
	assert_is_true("3 > 2");
	assert_is_false("2 > 2");
	assert_is_true("2 >= 2");
	assert_is_false("1 >= 2");
	/* The bytes tag does not matter to comparisons. */
	assert_is_true("1KiB == 1024");
	assert_is_true("requested > 1000");
	/* Booleans compare for equality only. */
	assert_is_true("true == true");
	assert_is_true("true != false");
	assert_unknown("true < false");
	assert_unknown("true >= false");
	/* Mixed types are unknown, not false. */
	assert_unknown("1 == true");
	assert_unknown("'1' == 1");
	assert_unknown("name != 3");
}

static void
test_strings(void **state)
{
	(void)state;
	assert_is_true("name == 'python'");
	assert_is_false("name == 'Python'");
	assert_is_false("name == 'pytho'");
	assert_is_false("name == 'python3'");
	assert_is_true("name != \"java\"");
	assert_is_false("'' != ''");
	/* Only equality: ordering strings means nothing here. */
	assert_unknown("name < 'z'");
	assert_unknown("'a' <= 'b'");
	assert_unknown("'a' > 'b'");
	assert_unknown("'a' >= 'a'");
	assert_unknown("name + 1");
	assert_unknown("'a' + 'b'");
	assert_unknown("-name");
	assert_string_equal(fmt("name"), "python");
	assert_string_equal(fmt("'it\\'s'"), "it's");
}

static void
test_functions(void **state)
{
	(void)state;
	assert_num("min(3, 1, 2)", 1, false);
	assert_num("max(3, 1, 2)", 3, false);
	assert_num("min(-1, -5)", -5, false);
	assert_num("max(1GiB, requested)", 2147483648.0, true);
	assert_num("min(4GiB, requested, 3GiB)", 2147483648.0, true);
	assert_num("ceil(1.2)", 2, false);
	assert_num("ceil(-1.2)", -1, false);
	assert_num("floor(1.8)", 1, false);
	assert_num("floor(-1.2)", -2, false);
	assert_num("abs(-4)", 4, false);
	assert_num("abs(4)", 4, false);
	assert_num("round(2.5)", 3, false);
	assert_num("round(-2.5)", -3, false);
	assert_num("round(2.4)", 2, false);
	assert_num("ceil(requested / 1MiB)", 2048, false);
	assert_num("ceil(requested / 3)", 715827883, true);
	assert_num("max(min(1, 2), 0) + abs(-1)", 2, false);
	assert_num("ceil ( 1.5 )", 2, false);
	assert_is_true("has(requested)");
	/* Every function, type errors. */
	assert_unknown("ceil(true)");
	assert_unknown("floor('a')");
	assert_unknown("abs(name)");
	assert_unknown("round(t)");
	assert_unknown("min(1, 'a')");
	assert_unknown("max(true, 1)");
}

/*
 * largest_divisor_at_most(n, k), computed by hand: the divisors of 32 are
 * 1, 2, 4, 8, 16, 32; of 36 also 3, 6, 9, 12, 18; 31 is prime.
 */
static void
test_largest_divisor(void **state)
{
	(void)state;
	assert_num("largest_divisor_at_most(32, 7)", 4, false);
	assert_num("largest_divisor_at_most(32, 8)", 8, false);
	assert_num("largest_divisor_at_most(32, 7.9)", 4, false);
	assert_num("largest_divisor_at_most(32, 32)", 32, false);
	assert_num("largest_divisor_at_most(32, 100)", 32, false);
	assert_num("largest_divisor_at_most(36, 11)", 9, false);
	assert_num("largest_divisor_at_most(36, 17)", 12, false);
	assert_num("largest_divisor_at_most(36, 5)", 4, false);
	assert_num("largest_divisor_at_most(31, 30)", 1, false);
	assert_num("largest_divisor_at_most(31, 31)", 31, false);
	assert_num("largest_divisor_at_most(1, 5)", 1, false);
	/* A pair above the square root: 3 * 1021 = 3063, 1021 prime. */
	assert_num("largest_divisor_at_most(3063, 2000)", 1021, false);
	assert_num("largest_divisor_at_most(3063, 1020)", 3, false);
	/* No divisor is below 1. */
	assert_num("largest_divisor_at_most(32, 0.5)", 0, false);
	assert_num("largest_divisor_at_most(32, -3)", 0, false);
	/* The bound: 2^32 itself, and a prime just below it. */
	assert_num("largest_divisor_at_most(4294967296, 3)", 2, false);
	assert_num("largest_divisor_at_most(4294967291, 4294967290)", 1, false);
	/* n must be a whole number from 1 to 2^32. */
	assert_unknown("largest_divisor_at_most(32.5, 7)");
	assert_unknown("largest_divisor_at_most(0, 7)");
	assert_unknown("largest_divisor_at_most(-4, 2)");
	assert_unknown("largest_divisor_at_most(4294967297, 3)");
	assert_unknown("largest_divisor_at_most(u, 3)");
	assert_unknown("largest_divisor_at_most(32, u)");
	assert_unknown("largest_divisor_at_most('a', 3)");
	assert_unknown("largest_divisor_at_most(32, true)");
}

/* value_or(x, d): x where known, d where not; the tag comes with the
 * value taken. */
static void
test_value_or(void **state)
{
	(void)state;
	assert_num("value_or(n, 7)", 3, false);
	assert_num("value_or(u, 7)", 7, false);
	assert_num("value_or(requested, 1GiB)", 2147483648.0, true);
	assert_num("value_or(free_mem, 1GiB)", GiB, true);
	assert_num("value_or(requested / u, 0.5)", 0.5, false);
	assert_num("value_or(requested / total, 0.5)", 0.025, false);
	assert_num("value_or(1 / zero, 2)", 2, false);
	assert_unknown("value_or(u, free_mem)");
	assert_num("0.5 + value_or(u, 0.25) * 2", 1, false);
}

static void
test_has(void **state)
{
	(void)state;
	assert_is_true("has(requested)");
	assert_is_true("has(name)");
	assert_is_true("has(f)");
	assert_is_true("has(zero)");
	assert_is_false("has(u)");
	assert_is_false("has(free_mem)");
	/* A lookup that answers without a proper value does not count. */
	assert_is_false("has(weird)");
	assert_is_false("has(nan)");
	assert_is_true("not has(allowed)");
	assert_is_false("has(free_mem) and free_mem > 1GiB");
	assert_is_true("not has(free_mem) or free_mem > 1GiB");
	assert_is_true("has( requested )");
}

/* Unknown through every operator, on either side. */
static void
test_unknown_propagation(void **state)
{
	static const char *const unknown[] = {
		"u + 1", "1 + u", "u - 1", "1 - u", "u * 2", "2 * u",
		"u / 2", "2 / u", "-u", "u == 1", "1 == u", "u != 1",
		"u < 1", "u <= 1", "u > 1", "1 >= u", "u == u",
		"min(u, 1)", "min(1, 2, u)", "max(u, 1)", "max(1, u, 3)",
		"ceil(u)", "floor(u)", "abs(u)", "round(u)", "not u",
		"free_mem >= requested", "requested - allowed > 0",
		"u and true", "true and u", "u or false", "false or u",
		"u and u", "u or u", "weird", "weird + 1", "nan", "nan > 0",
		"not (u > 1)", "u == 'a'", "requested + u",
		"ceil(requested / u)",
	};
	size_t i;
	xv_value v;
	xp_expr *e;

	(void)state;
	for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		v = ev(unknown[i]);
		if (v.type != XV_UNKNOWN)
			fail_msg("'%s' is not unknown (type %d)", unknown[i],
			    (int)v.type);
		assert_false(xp_true(v));
	}
	/* Without a lookup, every fact is unknown. */
	e = parse("requested > 0");
	assert_int_equal(xp_eval(e, NULL, NULL).type, XV_UNKNOWN);
	xp_free(e);
	e = parse("has(requested)");
	assert_false(xp_true(xp_eval(e, NULL, NULL)));
	assert_int_equal(xp_eval(e, NULL, NULL).type, XV_BOOL);
	xp_free(e);
	assert_int_equal(xp_eval(NULL, lookup, NULL).type, XV_UNKNOWN);
}

/* Kleene's tables, with unknown from a fact and from a type error. */
static void
test_kleene(void **state)
{
	static const struct {
		const char *src;
		int want;       /* 1, 0, or -1 for unknown */
	} table[] = {
		{ "true and true", 1 }, { "true and false", 0 },
		{ "true and u", -1 }, { "false and true", 0 },
		{ "false and false", 0 }, { "false and u", 0 },
		{ "u and true", -1 }, { "u and false", 0 }, { "u and u", -1 },
		{ "true or true", 1 }, { "true or false", 1 },
		{ "true or u", 1 }, { "false or true", 1 },
		{ "false or false", 0 }, { "false or u", -1 },
		{ "u or true", 1 }, { "u or false", -1 }, { "u or u", -1 },
		{ "not true", 0 }, { "not false", 1 }, { "not u", -1 },
		/* A non-boolean operand counts as unknown. */
		{ "3 and true", -1 }, { "false and 3", 0 },
		{ "'a' or true", 1 }, { "'a' or false", -1 },
		{ "not 3", -1 }, { "not name", -1 },
		/* Facts that are booleans. */
		{ "t and not f", 1 }, { "f or u > 1", -1 },
		{ "1 / 0 > 1 or true", 1 }, { "1 / 0 > 1 and false", 0 },
	};
	size_t i;
	xv_value v;
	int got;

	(void)state;
	for (i = 0; i < sizeof table / sizeof table[0]; i++) {
		v = ev(table[i].src);
		got = v.type == XV_BOOL ? (int)v.b :
		    v.type == XV_UNKNOWN ? -1 : 9;
		if (got != table[i].want)
			fail_msg("'%s': got %d, want %d", table[i].src, got,
			    table[i].want);
		assert_int_equal(xp_true(v), table[i].want == 1);
	}
}

static void
test_division_by_zero(void **state)
{
	(void)state;
	assert_unknown("1 / 0");
	assert_unknown("1 / zero");
	assert_unknown("requested / 0");
	assert_unknown("requested / (1GiB - 1GiB)");
	assert_unknown("0 / 0");
	assert_unknown("ceil(1 / 0)");
	assert_is_false("1 / 0 > 1 and false");
	assert_num("0 / 5", 0, false);
	/* Overflow to infinity is unknown too. */
	assert_unknown("1e308 * 10");
	assert_unknown("-1e308 - 1e308");
}

static void
test_bytes_tagging(void **state)
{
	(void)state;
	assert_num("1GiB + 1GiB", 2 * GiB, true);
	assert_num("2GiB - 1GiB", GiB, true);
	assert_num("1GiB + 1", GiB + 1, true);
	assert_num("1 + 1GiB", GiB + 1, true);
	assert_num("1 - 1KiB", -1023, true);
	assert_num("1GiB * 2", 2 * GiB, true);
	assert_num("2 * 1GiB", 2 * GiB, true);
	assert_num("1GiB * 1.5", 1.5 * GiB, true);
	assert_num("1GiB / 4", GiB / 4, true);
	assert_num("requested / 1GiB", 2, false);
	assert_num("requested / total", 0.025, false);
	assert_num("1KiB * 1KiB", 1048576, false);
	assert_num("1 / 1KiB", 1.0 / 1024, false);
	assert_num("-requested", -2147483648.0, true);
	assert_num("min(1, 1KiB)", 1, true);
	assert_num("max(1, 2, 3)", 3, false);
	assert_num("ceil(requested / 3)", 715827883, true);
	assert_num("floor(requested / 3)", 715827882, true);
	assert_num("round(requested / 3)", 715827883, true);
	assert_num("abs(0 - requested)", 2147483648.0, true);
	assert_num("ratio * 4", 1, false);
	assert_num("90% * total", 0.9 * 85899345920.0, true);
}

static void
test_format(void **state)
{
	char buf[64];
	xv_value v;

	(void)state;
	memset(&v, 0, sizeof v);
	v.type = XV_NUM;
	v.bytes = true;
#define BYTES(x, want) do { \
	v.num = (x); \
	xp_format(v, buf, sizeof buf); \
	assert_string_equal(buf, want); \
} while (0)
	BYTES(2147483648.0, "2.00 GiB");
	BYTES(0, "0 bytes");
	BYTES(1, "1 bytes");
	BYTES(1024, "1024 bytes");
	BYTES(1025, "1.00 KiB");
	BYTES(1048576, "1024.00 KiB");
	BYTES(1048577, "1.00 MiB");
	BYTES(1073741824.0, "1024.00 MiB");
	BYTES(1073741825.0, "1.00 GiB");
	BYTES(1536.4, "1.50 KiB");
	BYTES(1023.6, "1024 bytes");
	BYTES(1024.4, "1024 bytes");
	BYTES(1024.5, "1.00 KiB");
	BYTES(-2147483648.0, "-2.00 GiB");
	BYTES(-5, "-5 bytes");
	BYTES(-0.4, "0 bytes");
	BYTES(1099511627776.0, "1024.00 GiB");
	BYTES(1e19, "9313225746.15 GiB");
#undef BYTES
	v.bytes = false;
#define PLAIN(x, want) do { \
	v.num = (x); \
	xp_format(v, buf, sizeof buf); \
	assert_string_equal(buf, want); \
} while (0)
	PLAIN(2048, "2048");
	PLAIN(0, "0");
	PLAIN(-0.0, "0");
	PLAIN(-7, "-7");
	PLAIN(0.5, "0.50");
	PLAIN(1.234, "1.23");
	PLAIN(-1.5, "-1.50");
	PLAIN(0.1, "0.10");
	PLAIN(0.05, "0.05");
	PLAIN(0.005, "0.005");
	PLAIN(0.0123, "0.012");
	PLAIN(-0.05, "-0.05");
	PLAIN(0.09, "0.09");
	PLAIN(1e-30, "0.00");
	PLAIN(123456789012345.0, "123456789012345");
	PLAIN(1e15, "1e+15");
	PLAIN(NAN, "?");
	PLAIN(INFINITY, "?");
#undef PLAIN
	v.type = XV_BOOL;
	v.b = true;
	xp_format(v, buf, sizeof buf);
	assert_string_equal(buf, "true");
	v.b = false;
	xp_format(v, buf, sizeof buf);
	assert_string_equal(buf, "false");
	v.type = XV_UNKNOWN;
	xp_format(v, buf, sizeof buf);
	assert_string_equal(buf, "?");
	v.type = XV_STR;
	v.str = "ab\"c";
	v.len = 3;
	xp_format(v, buf, sizeof buf);
	assert_string_equal(buf, "ab\"");
	/* Truncation: always terminated, never more than cap. */
	v.type = XV_NUM;
	v.bytes = true;
	v.num = 2147483648.0;
	memset(buf, 'x', sizeof buf);
	xp_format(v, buf, 5);
	assert_string_equal(buf, "2.00");
	assert_int_equal(buf[5], 'x');
	xp_format(v, buf, 1);
	assert_string_equal(buf, "");
	buf[0] = 'x';
	xp_format(v, buf, 0);
	assert_int_equal(buf[0], 'x');
	/* A string is cut at a character, not inside one. */
	v.type = XV_STR;
	v.str = "h\xc3\xa9llo";
	v.len = 6;
	xp_format(v, buf, 3);
	assert_string_equal(buf, "h");
	xp_format(v, buf, 4);
	assert_string_equal(buf, "h\xc3\xa9");
}

static void
test_templates(void **state)
{
	char out[16];

	(void)state;
	assert_render("{requested}", "2.00 GiB", true);
	assert_render("{ceil(requested / 1MiB)}", "2048", true);
	assert_render("{0.5}", "0.50", true);
	assert_render("{{", "{", true);
	assert_render("}}", "}", true);
	assert_render("{{x}} is {n}", "{x} is 3", true);
	assert_render("{{{n}}}", "{3}", true);
	assert_render("", "", true);
	assert_render("no parts", "no parts", true);
	assert_render("process {name} asked for {requested} of {total}",
	    "process python asked for 2.00 GiB of 80.00 GiB", true);
	assert_render("set max_split_size_mb:{ceil(requested / 1MiB)} ({t})",
	    "set max_split_size_mb:2048 (true)", true);
	assert_render("{'}'}{\"{\"}", "}{", true);
	assert_render("{ n + 1 }", "4", true);
	assert_render("{has(free_mem)}", "false", true);
	assert_render("{ratio}", "0.25", true);
	/* An unknown part shows "?" and the render says so. */
	assert_render("free: {free_mem}, asked {requested}",
	    "free: ?, asked 2.00 GiB", false);
	assert_render("{1 / 0}", "?", false);
	assert_render("{name + 1}", "?", false);
	/* Truncated safely, and still reporting unknowns. */
	assert_true(render("{requested} and more text", out, sizeof out));
	assert_string_equal(out, "2.00 GiB and mo");
	assert_false(render("0123456789012345678 {u}", out, sizeof out));
	assert_string_equal(out, "012345678901234");
	assert_true(render("abcdefghijklmn\xc3\xa9", out, sizeof out));
	assert_string_equal(out, "abcdefghijklmn");
	assert_true(render("x", out, 0));
	assert_true(xp_template_render(NULL, lookup, NULL, out, sizeof out));
	assert_string_equal(out, "");
}

static void
test_template_errors(void **state)
{
	char *big, *out;

	(void)state;
	assert_template_error("a {b", 3, "unterminated '{' in a template "
	    "(write '{{' for a literal brace)");
	assert_template_error("a } b", 3, "unmatched '}' in a template "
	    "(write '}}' for a literal brace)");
	assert_template_error("{}", 2, "expected an expression");
	assert_template_error("ab {reqested}", 5, "unknown fact 'reqested'");
	assert_template_error("{n} {1 +}", 9, "'+' needs a value on both "
	    "sides");
	assert_template_error("{\"abc}", 2, "unterminated string");
	assert_template_error("x {max(1,)}", 10, "expected an argument after "
	    "',', found ')'");
	big = malloc(XP_TEMPLATE_MAX + 2);
	assert_non_null(big);
	memset(big, 'a', XP_TEMPLATE_MAX + 1);
	big[XP_TEMPLATE_MAX + 1] = '\0';
	assert_template_error(big, XP_TEMPLATE_MAX + 1, "template longer "
	    "than 16384 bytes");
	big[XP_TEMPLATE_MAX] = '\0';
	out = malloc(XP_TEMPLATE_MAX + 1);
	assert_non_null(out);
	assert_true(render(big, out, XP_TEMPLATE_MAX + 1));
	assert_string_equal(out, big);
	free(out);
	free(big);
}

static void
test_parse_errors(void **state)
{
	static const char units[] = "(sizes take B, KiB, MiB, GiB, TiB, "
	    "PiB, KB, MB, GB or TB)";
	char buf[256];

	(void)state;
	ERR("", 1, "expected an expression");
	ERR("   ", 4, "expected an expression");
	ERR("max(1,", 7, "expected an argument after ',', found the end");
	ERR("max(1", 6, "expected ')' after the arguments of max");
	ERR("max(1 2)", 7, "expected ')' after the arguments of max");
	ERR("max(1)", 1, "max takes at least 2 arguments");
	ERR("min()", 1, "min takes at least 2 arguments");
	ERR("ceil(1, 2)", 1, "ceil takes 1 argument");
	ERR("floor()", 1, "floor takes 1 argument");
	ERR("largest_divisor_at_most(32)", 1,
	    "largest_divisor_at_most takes 2 arguments");
	ERR("largest_divisor_at_most(32, 4, 2)", 1,
	    "largest_divisor_at_most takes 2 arguments");
	ERR("foo(1)", 1, "unknown function 'foo'");
	ERR("1 + bar (2)", 5, "unknown function 'bar'");
	ERR("has(1)", 5, "has() takes a fact name");
	ERR("has(requested + 1)", 5, "has() takes a fact name");
	ERR("has()", 5, "has() takes a fact name");
	ERR("has(n, n)", 5, "has() takes a fact name");
	ERR("has(reqested)", 5, "unknown fact 'reqested'");
	ERR("reqested > 1", 1, "unknown fact 'reqested'");
	ERR("requested > reqested", 13, "unknown fact 'reqested'");
	ERR("'abc", 1, "unterminated string");
	ERR("name == \"ab", 9, "unterminated string");
	ERR("'ab\\'", 1, "unterminated string");
	ERR("'a\\n'", 3, "unknown escape '\\n' in a string (only \\\\, \\' "
	    "and \\\" are allowed)");
	ERR("and t", 1, "'and' needs a condition on both sides");
	ERR("t and", 6, "'and' needs a condition on both sides");
	ERR("t or or f", 6, "'or' needs a condition on both sides");
	ERR("(or t)", 2, "'or' needs a condition on both sides");
	ERR("1 +", 4, "'+' needs a value on both sides");
	ERR("* 2", 1, "'*' needs a value on both sides");
	ERR("1 - ", 5, "'-' needs a value on both sides");
	ERR("1 == == 2", 6, "'==' needs a value on both sides");
	ERR("1 < 2 < 3", 7, "comparisons do not chain: join them with 'and'");
	ERR("1 == 1 != 0", 8, "comparisons do not chain: join them with "
	    "'and'");
	ERR("(1 + 2", 7, "expected ')' to close the '(' at column 1, found "
	    "the end");
	ERR("(1 + 2 3)", 8, "expected ')' to close the '(' at column 1, "
	    "found '3'");
	ERR("1 + 2)", 6, "unmatched ')'");
	ERR("1 2", 3, "expected an operator or the end, found '2'");
	ERR("t 'x'", 3, "expected an operator or the end, found a string");
	ERR("2 GiB", 3, "write sizes without a space: '2GiB'");
	ERR("1.5 TB > 1", 5, "write sizes without a space: '1.5TB'");
	snprintf(buf, sizeof buf, "unknown unit 'Gib' %s", units);
	ERR("2Gib", 2, buf);
	snprintf(buf, sizeof buf, "unknown unit 'x1' %s", units);
	ERR("1 + 2x1", 6, buf);
	snprintf(buf, sizeof buf, "unknown unit 'e' %s", units);
	ERR("1e", 2, buf);
	ERR("1e3MiB", 1, "a size takes no exponent: write it with a larger "
	    "unit");
	ERR("1.", 3, "expected a digit after the decimal point");
	ERR("1.x", 3, "expected a digit after the decimal point");
	ERR(".5", 1, "a number starts with a digit: write 0.5, not .5");
	ERR("n = 1", 3, "use '==' to compare");
	ERR("!t", 1, "use 'not' to negate a condition");
	ERR("t && f", 3, "use 'and' instead of '&&'");
	ERR("t || f", 3, "use 'or' instead of '||'");
	ERR("n @ 1", 3, "unexpected character '@'");
	ERR("n % 2", 3, "unexpected character '%'");
	ERR("n \x01", 3, "unexpected byte 0x01");
	ERR("n \xc3\xa9", 3, "unexpected byte 0xc3");
	assert_error("n\0", 2, 2, "unexpected byte 0x00");
	ERR("not", 4, "'not' needs a condition after it");
	ERR("-", 2, "'-' needs a value after it");
	ERR("1 == not t", 6, "'not' applies to a whole condition: put it in "
	    "parentheses here");
	ERR("()", 2, "expected an expression inside the parentheses");
	ERR("max(1, ,2)", 8, "expected an argument after ',', found ','");
	ERR("ceil(,)", 6, "expected a value, found ','");
	ERR("99999999999999999999TiB", 1, "size out of range");
	ERR("1e999", 1, "number out of range");
	ERR("1234567890123456789012345678901234567890123456789012345678901234"
	    "567890", 1, "number too long");
	/* The first error wins. */
	ERR("reqested + foo(1) +", 1, "unknown fact 'reqested'");
	ERR("1 + @ + reqested", 5, "unexpected character '@'");
}

static void
test_max_args(void **state)
{
	char buf[512];
	size_t i, n;

	(void)state;
	n = (size_t)snprintf(buf, sizeof buf, "min(");
	for (i = 0; i < XP_ARGS_MAX; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%zu",
		    i ? ", " : "", i + 10);
	snprintf(buf + n, sizeof buf - n, ")");
	assert_num(buf, 10, false);
	snprintf(buf + n, sizeof buf - n, ", 99)");
	assert_error(buf, strlen(buf), n + 3, "min takes at most 32 "
	    "arguments");
}

static void
test_unknown_fact_without_exists(void **state)
{
	od_error err;
	xp_expr *e;

	(void)state;
	e = xp_parse("reqested > 1", 12, NULL, NULL, &err);
	assert_non_null(e);
	assert_int_equal(xp_eval(e, lookup, NULL).type, XV_UNKNOWN);
	xp_free(e);
	/* A function name without parentheses is a fact like any other. */
	e = xp_parse("max + 1", 7, NULL, NULL, &err);
	assert_non_null(e);
	xp_free(e);
	ERR("max + 1", 1, "unknown fact 'max'");
	/* A NULL error is allowed. */
	assert_null(xp_parse("1 +", 3, NULL, NULL, NULL));
	xp_free(NULL);
	xp_template_free(NULL);
}

/* Builds prefix^n core suffix^n; the caller frees it. */
static char *
nest(const char *prefix, const char *core, const char *suffix, size_t n)
{
	size_t lp = strlen(prefix), ls = strlen(suffix), lc = strlen(core);
	char *s = malloc(n * (lp + ls) + lc + 1), *d = s;
	size_t i;

	assert_non_null(s);
	for (i = 0; i < n; i++, d += lp)
		memcpy(d, prefix, lp);
	memcpy(d, core, lc);
	d += lc;
	for (i = 0; i < n; i++, d += ls)
		memcpy(d, suffix, ls);
	*d = '\0';
	return s;
}

static void
test_depth(void **state)
{
	static const struct {
		const char *prefix, *core, *suffix;
		size_t fail_col;    /* where the 65th level starts */
	} kinds[] = {
		{ "(", "1", ")", 65 },
		{ "-", "1", "", 65 },
		{ "not ", "t", "", 257 },
		{ "abs(", "1", ")", 64 * 4 + 4 },
		{ "1 + (", "1", ")", 64 * 5 + 5 },
	};
	od_error err;
	size_t k;
	char *s;
	xp_expr *e;
	xp_template *t;

	(void)state;
	for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		/* 64 levels parse and evaluate. */
		s = nest(kinds[k].prefix, kinds[k].core, kinds[k].suffix, 64);
		e = parse(s);
		assert_int_not_equal(xp_eval(e, lookup, NULL).type,
		    XV_UNKNOWN);
		xp_free(e);
		free(s);
		/* 65 do not. */
		s = nest(kinds[k].prefix, kinds[k].core, kinds[k].suffix, 65);
		assert_error(s, strlen(s), kinds[k].fail_col, "nesting deeper "
		    "than 64 levels");
		free(s);
	}
	/* 10 000 levels fail cleanly, within the length limit or not. */
	s = nest("(", "1", ")", 10000);
	assert_error(s, 2000, 65, "nesting deeper than 64 levels");
	assert_error(s, strlen(s), XP_LEN_MAX + 1, "expression longer than "
	    "4096 bytes");
	free(s);
	s = nest("-", "1", "", 4000);
	assert_error(s, strlen(s), 65, "nesting deeper than 64 levels");
	free(s);
	s = nest("{(", "1", ")}", 100);
	memset(&err, 0, sizeof err);
	t = xp_template_parse(s, strlen(s), NULL, NULL, &err);
	assert_null(t);
	assert_int_equal(err.col, 3);
	assert_string_equal(err.msg, "unexpected character '{'");
	free(s);
	s = nest("(", "1", ")", 1000);
	s[0] = '{';
	s[strlen(s) - 1] = '}';
	memset(&err, 0, sizeof err);
	t = xp_template_parse(s, strlen(s), NULL, NULL, &err);
	assert_null(t);
	assert_int_equal(err.col, 66);
	assert_string_equal(err.msg, "nesting deeper than 64 levels");
	free(s);
}

static void
test_length(void **state)
{
	char *s;
	size_t i;
	xp_expr *e;

	(void)state;
	/* A 4096-byte chain of additions: long but flat, evaluated without
	 * recursion. */
	s = malloc(XP_LEN_MAX + 2);
	assert_non_null(s);
	s[0] = '1';
	for (i = 1; i + 1 < XP_LEN_MAX; i += 2) {
		s[i] = '+';
		s[i + 1] = '1';
	}
	s[XP_LEN_MAX - 1] = ' ';
	s[XP_LEN_MAX] = '\0';
	e = parse(s);
	assert_num(s, 2048, false);
	xp_free(e);
	/* One byte more is too long. */
	s[XP_LEN_MAX] = ' ';
	s[XP_LEN_MAX + 1] = '\0';
	assert_error(s, strlen(s), XP_LEN_MAX + 1, "expression longer than "
	    "4096 bytes");
	free(s);
}

/* A right-leaning expression needs one pending value per operand. */
static void
test_stack_limit(void **state)
{
	char *s;
	size_t i, n;
	xp_expr *e;

	(void)state;
	/* min(1, ..., 1, min(1, ..., min(...))): 31 pending values a level. */
	s = malloc(XP_LEN_MAX);
	assert_non_null(s);
	n = 0;
	for (i = 0; i < 8; i++)
		n += (size_t)snprintf(s + n, XP_LEN_MAX - n, "min(1,1,1,1,1,1,"
		    "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,");
	n += (size_t)snprintf(s + n, XP_LEN_MAX - n, "1");
	for (i = 0; i < 8; i++)
		s[n++] = ')';
	s[n] = '\0';
	e = parse(s);
	assert_num(s, 1, false);
	xp_free(e);
	/* A ninth level needs more than 256. */
	memmove(s + 66, s, n + 1);
	memcpy(s, "min(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
	    "1,1,1,1,", 66);
	n += 66;
	s[n++] = ')';
	s[n] = '\0';
	assert_error(s, n, 66 * 8 + 4 + 16 + 1, "expression too complex (more than "
	    "256 values pending at once)");
	free(s);
}

/* The values of evaluation are usable as conditions. */
static void
test_xp_true(void **state)
{
	xv_value v;

	(void)state;
	memset(&v, 0, sizeof v);
	assert_false(xp_true(v));
	v.type = XV_BOOL;
	v.b = true;
	assert_true(xp_true(v));
	v.b = false;
	assert_false(xp_true(v));
	v.type = XV_NUM;
	v.num = 1;
	assert_false(xp_true(v));
	assert_true(xp_true(ev("reserved_unallocated >= requested and "
	    "requested > 0")));
	assert_false(xp_true(ev("free_mem < requested")));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_comparisons),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_largest_divisor),
		cmocka_unit_test(test_value_or),
		cmocka_unit_test(test_has),
		cmocka_unit_test(test_unknown_propagation),
		cmocka_unit_test(test_kleene),
		cmocka_unit_test(test_division_by_zero),
		cmocka_unit_test(test_bytes_tagging),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_template_errors),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_max_args),
		cmocka_unit_test(test_unknown_fact_without_exists),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_stack_limit),
		cmocka_unit_test(test_xp_true),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
