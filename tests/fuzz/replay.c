/*
 * replay.c: runs a libFuzzer target over files, without libFuzzer, so that
 * every fuzz corpus is replayed as a normal test by any compiler (and
 * under the sanitizers in the ASan+UBSan build).
 *
 * Usage: fuzz_X_replay FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		if (f != NULL)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int i, failed = 0, count = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			failed |= replay_file(argv[i]);
			count++;
			continue;
		}
		d = opendir(argv[i]);
		while (d != NULL && (de = readdir(d)) != NULL) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
			failed |= replay_file(path);
			count++;
		}
		if (d != NULL)
			closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return failed || count == 0;
}
