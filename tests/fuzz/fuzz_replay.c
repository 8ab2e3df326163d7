/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_replay.c - run a libFuzzer target over files or directories of
 * inputs without libFuzzer (any compiler), so the corpus is replayed in
 * every test run and under the sanitizers.
 *
 * Each input is handed over in a heap buffer of exactly its size, as
 * libFuzzer does, so ASan sees a read past its end. Directories are
 * replayed in name order. The run fails (exit 1) if an argument is
 * missing or unreadable, if a directory holds no input, or if an input is
 * larger than REPLAY_MAX; a target reports a broken invariant by
 * crashing, and the name of the input it crashed on goes to stderr.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPLAY_MAX (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char current[4096];

/* SIGILL (__builtin_trap), SIGABRT (assert, sanitizers with abort_on_error) */
static void on_crash(int sig)
{
	static const char msg[] = "fuzz_replay: crashed on ";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)!write(STDERR_FILENO, current, strlen(current));
	(void)!write(STDERR_FILENO, "\n", 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf, *exact;
	size_t n;
	int err;

	if (!f) {
		perror(path);
		return -1;
	}
	buf = malloc(REPLAY_MAX + 1);
	if (!buf) {
		fclose(f);
		perror("malloc");
		return -1;
	}
	n = fread(buf, 1, REPLAY_MAX + 1, f);
	err = ferror(f);
	fclose(f);
	if (err || n > REPLAY_MAX) {
		fprintf(stderr, "%s: %s\n", path,
			err ? "read error" : "larger than 1 MiB");
		free(buf);
		return -1;
	}
	/* exactly @n bytes, so that a read past the input is caught */
	exact = realloc(buf, n ? n : 1);
	if (exact)
		buf = exact;
	snprintf(current, sizeof(current), "%s", path);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int skip_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

int main(int argc, char **argv)
{
	int count = 0;

	signal(SIGILL, on_crash);
	signal(SIGABRT, on_crash);
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		struct dirent **ents;
		struct stat st;
		char path[4096];
		int n;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			count++;
			continue;
		}
		n = scandir(argv[i], &ents, skip_dot, alphasort);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		if (n == 0) {
			fprintf(stderr, "%s: no inputs\n", argv[i]);
			free(ents);
			return 1;
		}
		for (int j = 0; j < n; j++) {
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 ents[j]->d_name);
			free(ents[j]);
			if (run_file(path))
				return 1;
			count++;
		}
		free(ents);
	}
	printf("replayed %d inputs\n", count);
	return 0;
}
