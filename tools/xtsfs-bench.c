/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-bench - speed of every AES-256-XTS cipher core this CPU can run,
 * next to OpenSSL's EVP aes-256-xts measured in the same run, in the
 * spirit of `cryptsetup benchmark`. Memory only, single thread.
 *
 * How it measures: each (core, operation, buffer size) cell is timed for
 * --time-ms per run with this thread's CPU clock (so time the thread
 * spends descheduled on a busy machine does not count; --wall-clock
 * uses wall time instead). Runs are interleaved: in every run, for each
 * size and operation, every core and OpenSSL are measured back to back,
 * so frequency drift and background load hit them alike; the figure is
 * the median run. Buffers of 4 KiB and more go
 * through xts_encrypt_units() as the filesystem does (one tweak per
 * 4096-byte unit); 512 B is one data unit through xts_encrypt_one().
 * OpenSSL gets one EVP_CipherInit_ex (new IV) plus EVP_CipherUpdate per
 * buffer, i.e. the buffer is one data unit, which is how disk encryption
 * calls it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "exitcodes.h"
#include "xts.h"

#if HAVE_OPENSSL
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif

#define PROG "xtsfs-bench"

#define MAX_CORES 8 /* >= the entries of xts_backends[] */
#define MAX_SIZES 8
#define MAX_RUNS 101

enum { OP_ENC, OP_DEC };
static const char *const op_name[] = { "encrypt", "decrypt" };

struct cell {
	const char *core;        /* core name or "openssl" */
	int op;                  /* OP_ENC or OP_DEC */
	size_t bytes;            /* buffer size */
	double mbps[MAX_RUNS];   /* one figure per run, 10^6 bytes/s */
	double median;           /* of mbps[] */
};

struct bench {
	uint8_t *src, *dst;               /* 64-byte aligned buffers */
	uint8_t key[XTS_KEY_SIZE];        /* random, halves differ */
	uint8_t id[XTS_ID_SIZE];          /* random file id */
	struct xts_ctx *ctx[MAX_CORES];   /* keyed cores, NULL if absent */
	const struct xts_backend *be[MAX_CORES];
	int ncores;
#if HAVE_OPENSSL
	EVP_CIPHER_CTX *ossl[2];          /* [OP_ENC], [OP_DEC] */
#endif
	double time_ms;                   /* per run and cell */
};

static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static double now(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_once(struct bench *b, int core, int op, size_t bytes)
{
	uint8_t tw[16] = { 0 };
	static uint64_t unit;

	unit += bytes / XTSFS_UNIT_SIZE + 1; /* vary tweaks like real I/O */
	if (core >= 0) {
		const struct xts_ctx *c = b->ctx[core];
		int rc;

		if (bytes % XTSFS_UNIT_SIZE == 0) {
			size_t n = bytes / XTSFS_UNIT_SIZE;

			rc = op == OP_ENC ?
			     xts_encrypt_units(c, b->dst, b->src, n, b->id, unit) :
			     xts_decrypt_units(c, b->dst, b->src, n, b->id, unit);
		} else {
			xts_unit_tweak(tw, b->id, unit);
			rc = op == OP_ENC ?
			     xts_encrypt_one(c, b->dst, b->src, bytes, tw) :
			     xts_decrypt_one(c, b->dst, b->src, bytes, tw);
		}
		if (rc) { /* sizes are checked at parsing: a bug */
			fprintf(stderr, "xtsfs-bench: cipher call failed: %s\n",
				strerror(-rc));
			abort();
		}
		return;
	}
#if HAVE_OPENSSL
	int outl;

	xts_unit_tweak(tw, b->id, unit);
	EVP_CipherInit_ex(b->ossl[op], NULL, NULL, NULL, tw, -1);
	EVP_CipherUpdate(b->ossl[op], b->dst, &outl, b->src, (int)bytes);
#endif
}

static double measure(struct bench *b, int core, int op, size_t bytes)
{
	double start = now(), end, limit = b->time_ms / 1000.0;
	size_t iters = 0, batch = 1 + (1u << 20) / bytes;

	do {
		for (size_t i = 0; i < batch; i++)
			run_once(b, core, op, bytes);
		iters += batch;
		end = now();
	} while (end - start < limit);
	return (double)iters * (double)bytes / (end - start) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_of(const double *v, int n)
{
	double s[MAX_RUNS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static const struct option longopts[] = {
	{ "cipher", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "runs", required_argument, NULL, 'r' },
	{ "time-ms", required_argument, NULL, 't' },
	{ "sizes", required_argument, NULL, 's' },
	{ "self-test", no_argument, NULL, 'S' },
	{ "wall-clock", no_argument, NULL, 'W' },
	CLI_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "c:jr:t:s:" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = 22,
	.help =
"Usage: xtsfs-bench [OPTION]...\n"
"Measure the AES-256-XTS cipher cores of this CPU next to OpenSSL's\n"
"EVP aes-256-xts, in one run (memory only, one thread).\n"
"\n"
"  -c, --cipher=CORE   only this core (software, aesni, vaes, zmm); default:\n"
"                      all that this CPU can run (XTSFS_CIPHER is ignored)\n"
"  -j, --json          print a JSON array, one object per measurement\n"
"  -r, --runs=N        runs per measurement, median reported (default 5)\n"
"  -t, --time-ms=MS    length of one run in milliseconds (default 100)\n"
"  -s, --sizes=LIST    buffer sizes in bytes, comma-separated\n"
"                      (default 512,4096,65536,1048576)\n"
"      --wall-clock    time with the wall clock instead of this thread's\n"
"                      CPU time (CPU time ignores time spent descheduled)\n"
"      --self-test     run the known-answer self-test of every core, then exit\n",
	.help_end =
"\n"
"Example: xtsfs-bench --sizes 4096 --runs 7\n"
"Exit status: 0 ok, 1 failure (e.g. out of memory), 2 bad usage,\n"
"3 cipher core unavailable or self-test failed.\n",
};

static int self_test_all(void)
{
	int bad = 0;

	for (size_t i = 0; xts_backends[i]; i++) {
		const struct xts_backend *be = xts_backends[i];

		if (!be->probe()) {
			printf("%-9s unavailable on this CPU (needs %s)\n",
			       be->name, be->requires);
			continue;
		}
		if (xts_selftest(be) == 0) {
			printf("%-9s self-test passed\n", be->name);
		} else {
			printf("%-9s SELF-TEST FAILED\n", be->name);
			bad = 1;
		}
	}
	return bad ? XTSFS_EXIT_CIPHER : XTSFS_EXIT_OK;
}

static int parse_sizes(const char *arg, size_t *sizes, int *nsizes)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int n = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long long v = strtoull(tok, &end, 10);

		if (*end || v < 16 || v > (16u << 20) || n == MAX_SIZES) {
			free(copy);
			return -1;
		}
		sizes[n++] = (size_t)v;
	}
	free(copy);
	*nsizes = n;
	return n ? 0 : -1;
}

static void print_table(struct cell *cells, int ncells, int nsizes,
			const size_t *sizes, int runs, const char *autoname)
{
	printf("# xtsfs-bench: AES-256-XTS, one thread, memory only (no "
	       "storage I/O)\n");
	printf("# median of %d interleaved runs, %s; MB/s = 10^6 bytes/s; "
	       "ratio = core / OpenSSL, same run\n", runs,
	       bench_clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time");
#if HAVE_OPENSSL
	printf("# OpenSSL: %s\n", OpenSSL_version(OPENSSL_VERSION));
#else
	printf("# built without OpenSSL: no reference row\n");
#endif
	printf("#     core     buffer        encrypt        decrypt   "
	       "ratio enc/dec\n");
	for (int i = 0; i < ncells; i += 2 * nsizes) {
		for (int s = 0; s < nsizes; s++) {
			struct cell *e = &cells[i + 2 * s];
			struct cell *d = &cells[i + 2 * s + 1];
			double oe = 0, od = 0;
			char label[24];

			/* the OpenSSL cells come last, same layout */
			if (strcmp(cells[ncells - 1].core, "openssl") == 0) {
				oe = cells[ncells - 2 * nsizes + 2 * s].median;
				od = cells[ncells - 2 * nsizes + 2 * s + 1].median;
			}
			snprintf(label, sizeof(label), "%s%s", e->core,
				 !strcmp(e->core, autoname) ? "*" : "");
			if (sizes[s] >= 1 << 20)
				printf("%10s %6zu MiB", label, sizes[s] >> 20);
			else if (sizes[s] >= 1024 && sizes[s] % 1024 == 0)
				printf("%10s %6zu KiB", label, sizes[s] >> 10);
			else
				printf("%10s %6zu B  ", label, sizes[s]);
			printf(" %9.1f MB/s %9.1f MB/s", e->median, d->median);
			if (oe > 0 && strcmp(e->core, "openssl"))
				printf("   %5.2fx %5.2fx", e->median / oe,
				       d->median / od);
			printf("\n");
		}
	}
	printf("# * = the core chosen automatically on this CPU\n");
}

static void print_json(struct cell *cells, int ncells)
{
	printf("[\n");
	for (int i = 0; i < ncells; i++)
		printf("  {\"core\": \"%s\", \"op\": \"%s\", \"bytes\": %zu, "
		       "\"mb_per_s\": %.1f}%s\n", cells[i].core,
		       op_name[cells[i].op], cells[i].bytes, cells[i].median,
		       i + 1 < ncells ? "," : "");
	printf("]\n");
}

/* The cores to measure: @only, or every one this CPU runs. */
static int choose_cores(struct bench *b, const char *only,
			const struct xts_backend **autobe)
{
	if (only) {
		if (xts_choose(only, autobe) != 0) {
			fprintf(stderr, "xtsfs-bench: %s\n", xts_choose_error());
			return XTSFS_EXIT_CIPHER;
		}
		b->be[b->ncores++] = *autobe;
		return 0;
	}
	if (xts_choose("auto", autobe) != 0) {
		fprintf(stderr, "xtsfs-bench: %s\n", xts_choose_error());
		return XTSFS_EXIT_CIPHER;
	}
	for (size_t i = 0; xts_backends[i] && b->ncores < MAX_CORES; i++) {
		const struct xts_backend *be;

		if (!xts_backends[i]->probe())
			continue;
		if (xts_choose(xts_backends[i]->name, &be) != 0) {
			fprintf(stderr, "xtsfs-bench: %s\n", xts_choose_error());
			return XTSFS_EXIT_CIPHER;
		}
		b->be[b->ncores++] = be;
	}
	return 0;
}

/*
 * Buffers of @maxsize bytes, a random (not secret) key, every core keyed
 * and OpenSSL's contexts; *@rows: the rows of the table.
 */
static int set_up(struct bench *b, size_t maxsize, int *rows)
{
	b->src = aligned_alloc(64, (maxsize + 63) / 64 * 64);
	b->dst = aligned_alloc(64, (maxsize + 63) / 64 * 64);
	if (!b->src || !b->dst) {
		fprintf(stderr, "xtsfs-bench: out of memory\n");
		return XTSFS_EXIT_FAILURE;
	}
	/* the halves must differ */
	do {
		if (getrandom(b->key, sizeof(b->key), 0) != sizeof(b->key) ||
		    getrandom(b->id, sizeof(b->id), 0) != sizeof(b->id)) {
			perror("xtsfs-bench: getrandom");
			return XTSFS_EXIT_FAILURE;
		}
	} while (!memcmp(b->key, b->key + 32, 32));
	memset(b->src, 0xa5, maxsize);
	for (int c = 0; c < b->ncores; c++) {
		if (xts_ctx_new(&b->ctx[c], b->be[c], b->key) != 0) {
			fprintf(stderr, "xtsfs-bench: cannot key the %s core "
				"(locked memory: %s)\n", b->be[c]->name,
				strerror(errno));
			return XTSFS_EXIT_FAILURE;
		}
	}
	*rows = b->ncores;
#if HAVE_OPENSSL
	for (int op = 0; op < 2; op++) {
		b->ossl[op] = EVP_CIPHER_CTX_new();
		if (!b->ossl[op] ||
		    EVP_CipherInit_ex(b->ossl[op], EVP_aes_256_xts(), NULL,
				      b->key, b->id, op == OP_ENC) != 1) {
			fprintf(stderr, "xtsfs-bench: OpenSSL aes-256-xts "
				"unavailable\n");
			return XTSFS_EXIT_FAILURE;
		}
	}
	(*rows)++;
#endif
	return 0;
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = { 512, 4096, 65536, 1 << 20 };
	int nsizes = 4, runs = 5, json = 0, opt, ncells, rc = XTSFS_EXIT_OK;
	const char *only = NULL;
	const struct xts_backend *autobe = NULL;
	struct bench b = { .time_ms = 100 };
	struct cell *cells;
	size_t maxsize = 0;
	int rows;

	while ((opt = cli_getopt(&cli, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'c':
			only = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1 || runs > MAX_RUNS) {
				fprintf(stderr, "xtsfs-bench: --runs must be "
					"1..%d\n", MAX_RUNS);
				return XTSFS_EXIT_USAGE;
			}
			break;
		case 't':
			b.time_ms = atof(optarg);
			if (!(b.time_ms >= 1 && b.time_ms <= 60000)) {
				fprintf(stderr, "xtsfs-bench: --time-ms must "
					"be 1..60000\n");
				return XTSFS_EXIT_USAGE;
			}
			break;
		case 's':
			if (parse_sizes(optarg, sizes, &nsizes)) {
				fprintf(stderr, "xtsfs-bench: --sizes: a comma "
					"list of 1..%d sizes of 16 B..16 MiB\n",
					MAX_SIZES);
				return XTSFS_EXIT_USAGE;
			}
			break;
		case 'S':
			return self_test_all();
		case 'W':
			bench_clock = CLOCK_MONOTONIC;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (optind != argc) {
		cli_usage(&cli, stderr);
		return XTSFS_EXIT_USAGE;
	}

	rc = choose_cores(&b, only, &autobe);
	if (rc)
		return rc;
	for (int s = 0; s < nsizes; s++)
		if (sizes[s] > maxsize)
			maxsize = sizes[s];
	rc = set_up(&b, maxsize, &rows);
	if (rc)
		return rc;
	ncells = rows * nsizes * 2;
	cells = calloc((size_t)ncells, sizeof(*cells));
	if (!cells)
		return XTSFS_EXIT_FAILURE;
	for (int r = 0; r < rows; r++)
		for (int s = 0; s < nsizes; s++)
			for (int op = 0; op < 2; op++) {
				struct cell *c = &cells[(r * nsizes + s) * 2 + op];

				c->core = r < b.ncores ? b.be[r]->name : "openssl";
				c->op = op;
				c->bytes = sizes[s];
			}
	/* warm-up: caches, page faults, CPU clock */
	for (int i = 0; i < ncells; i++)
		(void)measure(&b, i / (nsizes * 2) < b.ncores ?
				  i / (nsizes * 2) : -1,
			      cells[i].op, cells[i].bytes);
	/* size, then operation, then every core and OpenSSL back to back */
	for (int run = 0; run < runs; run++)
		for (int s = 0; s < nsizes; s++)
			for (int op = 0; op < 2; op++)
				for (int r = 0; r < rows; r++) {
					struct cell *c = &cells[(r * nsizes + s) * 2 + op];

					c->mbps[run] = measure(&b, r < b.ncores ? r : -1,
							       op, c->bytes);
				}
	for (int i = 0; i < ncells; i++)
		cells[i].median = median_of(cells[i].mbps, runs);

	if (json)
		print_json(cells, ncells);
	else
		print_table(cells, ncells, nsizes, sizes, runs,
			    only ? "" : autobe->name);

	for (int c = 0; c < b.ncores; c++)
		xts_ctx_free(b.ctx[c]);
#if HAVE_OPENSSL
	EVP_CIPHER_CTX_free(b.ossl[0]);
	EVP_CIPHER_CTX_free(b.ossl[1]);
#endif
	free(cells);
	free(b.src);
	free(b.dst);
	return rc;
}
