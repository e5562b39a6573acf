/*
 * test_markdown.c: text from outside goes into Markdown as a code span or
 * a fenced block that holds it as it is (src/lib/escape.c): a backtick run
 * longer than any inside, CommonMark's padding, '|' escaped in a table
 * cell, and only what cannot be shown made visible.  The renderers'
 * reading of them is checked by tests/markdown_check.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"

/* The code span or fenced block of s (caller frees). */
static char *
md(const char *s, size_t n, int how)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (how == 3)
		od_escape_markdown_prose(f, s, n);
	else if (how == 2)
		od_escape_markdown_fence(f, "text", s, n);
	else
		od_escape_markdown_code(f, s, n, how == 1);
	fclose(f);
	return out;
}

static void
expect(const char *s, int how, const char *want)
{
	char *got = md(s, strlen(s), how);

	assert_string_equal(got, want);
	free(got);
}

static void
test_code_spans(void **state)
{
	(void)state;
	expect("torch.cuda.empty_cache()", 0, "`torch.cuda.empty_cache()`");
	/* A run longer than any inside. */
	expect("a`b``c", 0, "```a`b``c```");
	/* Padding when the text starts or ends with a backtick or a space,
	 * which CommonMark strips again: one space each side. */
	expect("`a", 0, "`` `a ``");
	expect("a`", 0, "`` a` ``");
	expect(" a", 0, "`  a `");
	expect("a ", 0, "` a  `");
	/* All spaces: not stripped, so not padded. */
	expect("  ", 0, "`  `");
	/* One line: newlines and tabs as spaces. */
	expect("a\nb\tc\r", 0, "` a b c  `");
	/* '|' escaped in a table cell only. */
	expect("x|y", 0, "`x|y`");
	expect("x|y", 1, "`x\\|y`");
	/* Controls as \xNN, bidi and invisible characters as code points,
	 * bad bytes as U+FFFD. */
	expect("a\x1b[31m", 0, "`a\\x1b[31m`");
	expect("a\xe2\x80\xae" "b\xe2\x80\x8b" "c", 0, "`aU+202EbU+200Bc`");
	expect("a\xff", 0, "`a\xef\xbf\xbd`");
	/* A NUL is a control like the others. */
	{
		char *got = md("a\0b", 3, 0);

		assert_string_equal(got, "`a\\x00b`");
		free(got);
	}
}

static void
test_fences(void **state)
{
	(void)state;
	expect("a\nb", 2, "```text\na\nb\n```\n\n");
	expect("a\r\nb\n", 2, "```text\na\nb\n```\n\n");
	/* A line of three backticks cannot close a fence of four. */
	expect("```\nx", 2, "````text\n```\nx\n````\n\n");
	/* Backslashes kept, controls made visible. */
	expect("C:\\x\x07", 2, "```text\nC:\\x\\x07\n```\n\n");
}

/* A rule's prose: plain words as prose, the rest in code spans. */
static void
test_prose(void **state)
{
	(void)state;
	expect("call torch.cuda.empty_cache() between phases", 3,
	    "call `torch.cuda.empty_cache()` between phases");
	/* Punctuation around a word stays prose; a ')' of the word's own
	 * '(' stays in it. */
	expect("(truncate to a max_length) or f(x).", 3,
	    "(truncate to a `max_length`) or `f(x)`.");
	/* A run of code words with nothing between them is one span. */
	expect("set --fact accum_steps=N now", 3,
	    "set `--fact accum_steps=N` now");
	/* Numbers, abbreviations, hyphens and apostrophes are prose; the
	 * operators < and > entities. */
	expect("PyTorch's 5.96 GiB > 10%, e.g. non-PyTorch", 3,
	    "PyTorch's 5.96 GiB &gt; 10%, e.g. non-PyTorch");
	/* What would turn live is code: a mention, a reference, a URL, an
	 * address, an emoji, a domain, HTML. */
	expect("ask @root about #12 and GH-3 at https://x.org/a", 3,
	    "ask `@root` about `#12` and `GH-3` at `https://x.org/a`");
	expect("mail a@b.com :smile: pytorch.org <b>x</b>", 3,
	    "mail `a@b.com :smile`: `pytorch.org <b>x</b>`");
	/* No list or heading starts the text; white space is one space. */
	expect("1. first\n\tsecond", 3, "1\\. first second");
	expect("- a", 3, "`-` a");
	/* Controls and invisible characters, inside a span, made visible. */
	expect("a\xe2\x80\xae" "b c", 3, "`aU+202Eb` c");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_spans),
		cmocka_unit_test(test_fences),
		cmocka_unit_test(test_prose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
