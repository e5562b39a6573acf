/*
 * test_size.c: parsing and printing sizes as PyTorch's format_size() does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

static int64_t
parse(const char *num, const char *unit)
{
	int64_t v = -2;

	if (!od_size_parse(num, strlen(num), unit, strlen(unit), &v))
		return -1;
	return v;
}

static void
test_exact_inversion(void **state)
{
	(void)state;
	assert_int_equal(parse("0", "bytes"), 0);
	assert_int_equal(parse("1024", "bytes"), 1024);
	assert_int_equal(parse("179.00", "KiB"), 183296);
	assert_int_equal(parse("1024.00", "KiB"), 1048576);
	assert_int_equal(parse("228.38", "MiB"), 239473787);  /* 239473786.88 */
	assert_int_equal(parse("1024.00", "MiB"), 1073741824);
	assert_int_equal(parse("16.00", "GiB"), 17179869184LL);
	assert_int_equal(parse("7.33", "GiB"), 7870527570LL);  /* .92 rounds up */
	assert_int_equal(parse("13535.27", "GiB"), 14533385498132LL);
	assert_int_equal(parse("1.50", "TiB"), 1649267441664LL);
	/* Halves round up. */
	assert_int_equal(parse("2.50", "bytes"), 3);
	assert_int_equal(parse("0.01", "KiB"), 10);     /* 10.24 */
	assert_int_equal(parse("0.05", "KiB"), 51);     /* 51.2 */
}

static void
test_rejects(void **state)
{
	(void)state;
	assert_int_equal(parse("", "GiB"), -1);
	assert_int_equal(parse("1.2.3", "GiB"), -1);
	assert_int_equal(parse("12", "GB"), -1);
	assert_int_equal(parse("12a", "GiB"), -1);
	/* Too large for int64: the NVML sentinel and an absurd figure. */
	assert_int_equal(parse("17179869184.00", "GiB"), -1);
	assert_int_equal(parse("99999999999999999999", "GiB"), -1);
	assert_int_equal(parse("9999999999999999999999999999999999", "bytes"), -1);
}

static int64_t
parse_text(const char *s)
{
	int64_t v = -2;

	return od_size_parse_text(s, strlen(s), &v) ? v : -1;
}

/* Other stacks' sizes: binary bare suffixes, SI GB, commas, bytes. */
static void
test_other_stacks(void **state)
{
	(void)state;
	assert_int_equal(parse_text("4.00G"), 4294967296LL);
	assert_int_equal(parse_text("1.17GiB"), 1256277934LL);
	assert_int_equal(parse_text("3206250496B"), 3206250496LL);
	assert_int_equal(parse_text("26,184,840kB"), 26184840LL * 1024);
	assert_int_equal(parse_text("1,073,741,824"), 1073741824LL);
	assert_int_equal(parse_text("27.10GB"), 27100000000LL);
	assert_int_equal(parse_text("17.36G"), 18640158065LL);
	assert_int_equal(parse_text("12 parsecs"), -1);
	assert_int_equal(parse_text("99999999999999999999 TiB"), -1);
}

static void
test_format(void **state)
{
	char buf[48];

	(void)state;
	od_size_format(0, buf, sizeof buf);
	assert_string_equal(buf, "0 bytes");
	od_size_format(1024, buf, sizeof buf);
	assert_string_equal(buf, "1024 bytes");
	od_size_format(1025, buf, sizeof buf);
	assert_string_equal(buf, "1.00 KiB");
	od_size_format(1073741824LL, buf, sizeof buf);
	assert_string_equal(buf, "1024.00 MiB");
	od_size_format(2147483648LL, buf, sizeof buf);
	assert_string_equal(buf, "2.00 GiB");
	od_size_format(OD_UNKNOWN, buf, sizeof buf);
	assert_string_equal(buf, "?");
}

/* Printing then parsing gives the value back within format_size's error. */
static void
test_round_trip(void **state)
{
	int64_t v, back;
	char buf[48], *sp;

	(void)state;
	for (v = 1; v < (INT64_C(1) << 50); v = v * 3 + 7) {
		int64_t err = v <= 1024 ? 0 : v <= 1048576 ? 6 :
		    v <= 1073741824 ? 5243 : 5368710;

		od_size_format(v, buf, sizeof buf);
		sp = strchr(buf, ' ');
		assert_non_null(sp);
		assert_true(od_size_parse(buf, (size_t)(sp - buf), sp + 1,
		    strlen(sp + 1), &back));
		assert_true(back >= v - err && back <= v + err);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_inversion),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_other_stacks),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
