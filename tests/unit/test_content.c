/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_content.c - the contents layer against a plain in-memory model:
 * reproducible random sequences of writes (random offsets and lengths,
 * random data and runs of zeros), truncates, punched holes, zero ranges
 * and allocations, each followed by checks that the lower size is
 * D + plaintext size and that reads at random places match the model;
 * plus targeted cases: every short-tail length, sparseness of holes
 * (punches free lower blocks), SEEK_DATA/SEEK_HOLE, corrupt headers and
 * torn tails (EIO), the zero rule, failed writes that change nothing,
 * and which writes reserve space first (fallocate made to fail with
 * seccomp). Runs on every cipher core this CPU has, in both layouts
 * (data offset D 40, compact, and 4096, aligned).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "content.h"
#include "testutil.h"
#include "xts.h"

#define MAXSZ (3u << 20)

static uint8_t *model, *got, *data;
static uint64_t msize;
static char path[] = "/tmp/xtsfs-test-content-XXXXXX";
static uint32_t D = LAYOUT_DOFF_COMPACT; /* the layout under test */

static uint64_t lower_size(int fd)
{
	struct stat st;

	fstat(fd, &st);
	return (uint64_t)st.st_size;
}

static void check_all(const struct xts_ctx *x, int fd,
		      const struct content_hdr *h, uint64_t ps, const char *after)
{
	ssize_t n;

	CHECK(ps == msize, "%s: size %llu, model %llu", after,
	      (unsigned long long)ps, (unsigned long long)msize);
	/* a header alone is 40 bytes until a truncate makes it D */
	CHECK(lower_size(fd) == layout_coff(D, msize) ||
	      (msize == 0 && lower_size(fd) == CONTENT_HDR_SIZE),
	      "%s: lower size %llu for plaintext %llu", after,
	      (unsigned long long)lower_size(fd), (unsigned long long)msize);
	n = content_read(x, fd, h, ps, got, msize + 100, 0);
	CHECK(n == (ssize_t)msize, "%s: read %zd of %llu", after, n,
	      (unsigned long long)msize);
	if (n == (ssize_t)msize && memcmp(got, model, msize)) {
		char what[160];

		snprintf(what, sizeof(what), "%s: contents", after);
		test_memeq(what, got, model, msize);
	}
}

static uint64_t rnd_off(void)
{
	switch (rng_below(4)) {
	case 0:
		return rng_below(64);
	case 1: /* near unit boundaries */
		return rng_below(MAXSZ / 4096) * 4096 + rng_below(33) - 16 + 16;
	case 2: /* near the end */
		return msize > 20 ? msize - rng_below(20) : msize;
	default:
		return rng_below(MAXSZ - 70000);
	}
}

static size_t rnd_len(void)
{
	switch (rng_below(4)) {
	case 0:
		return 1 + rng_below(20);
	case 1:
		return 4096 * (1 + rng_below(3)) + rng_below(3) - 1;
	default:
		return 1 + rng_below(1 << rng_below(17));
	}
}

static void random_ops(const struct xts_ctx *x, int fd, struct content_hdr *h,
		       int nops)
{
	uint64_t ps = 0;
	char what[128];

	msize = 0;
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	CHECK(content_init_header(fd, D, h) == 0, "header");
	for (int i = 0; i < nops; i++) {
		int op = (int)rng_below(10);
		uint64_t off = rnd_off();
		size_t len = rnd_len();

		if (off > MAXSZ - 70000)
			off = MAXSZ - 70000;
		if (len > 65536)
			len = 65536;
		if (op <= 4) { /* write */
			ssize_t n;

			if (rng_below(4) == 0)
				memset(data, 0, len);
			else
				rng_bytes(data, len);
			n = content_write(x, fd, h, &ps, data, len, off,
					  rng_below(2) ? CONTENT_HOLES_SEEKABLE : 0);
			snprintf(what, sizeof(what), "op %d write %zu@%llu", i,
				 len, (unsigned long long)off);
			CHECK(n == (ssize_t)len, "%s: %zd", what, n);
			if (off > msize)
				memset(model + msize, 0, off - msize);
			memcpy(model + off, data, len);
			if (off + len > msize)
				msize = off + len;
		} else if (op == 5) { /* truncate */
			uint64_t ns = rng_below(3) ? rnd_off() : rng_below(40);

			snprintf(what, sizeof(what), "op %d truncate %llu", i,
				 (unsigned long long)ns);
			CHECK(content_truncate(x, fd, h, &ps, ns) == 0, "%s", what);
			if (ns > msize)
				memset(model + msize, 0, ns - msize);
			msize = ns;
		} else if (op == 6 || op == 7) { /* punch / zero range */
			int mode = op == 6 ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
					   : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
			snprintf(what, sizeof(what), "op %d %s %zu@%llu", i,
				 op == 6 ? "punch" : "zero", len,
				 (unsigned long long)off);
			CHECK(content_fallocate(x, fd, h, &ps, mode, off, len) == 0,
			      "%s", what);
			if (off < msize)
				memset(model + off, 0,
				       off + len < msize ? len : msize - off);
		} else if (op == 8) { /* allocate, maybe growing */
			int mode = rng_below(2) ? FALLOC_FL_KEEP_SIZE : 0;

			snprintf(what, sizeof(what), "op %d allocate mode %d %zu@%llu",
				 i, mode, len, (unsigned long long)off);
			CHECK(content_fallocate(x, fd, h, &ps, mode, off, len) == 0,
			      "%s", what);
			if (!mode && off + len > msize) {
				memset(model + msize, 0, off + len - msize);
				msize = off + len;
			}
		} else { /* random read */
			ssize_t n = content_read(x, fd, h, ps, got, len, off);
			size_t want = off >= msize ? 0 : (msize - off < len ?
							  msize - off : len);

			snprintf(what, sizeof(what), "op %d read %zu@%llu", i,
				 len, (unsigned long long)off);
			CHECK(n == (ssize_t)want, "%s: %zd want %zu", what, n, want);
			if (n > 0)
				test_memeq(what, got, model + off, (size_t)n);
			continue;
		}
		check_all(x, fd, h, ps, what);
		if (test_failures)
			return;
	}
}

/*
 * Empty @fd and make it a file of @len random bytes (the model) in one
 * write. Return: its plaintext size.
 */
static uint64_t fresh_file(const struct xts_ctx *x, int fd,
			   struct content_hdr *h, uint64_t len)
{
	uint64_t ps = 0;

	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, h);
	rng_bytes(model, len);
	msize = len;
	if (len)
		CHECK(content_write(x, fd, h, &ps, model, len, 0, 0) ==
		      (ssize_t)len, "write %llu", (unsigned long long)len);
	return ps;
}

/* Every length 0..9000 written in one go reads back, sizes exact. */
static void every_length(const struct xts_ctx *x, int fd)
{
	struct content_hdr h;

	for (uint64_t len = 0; len <= 9000; len += len < 40 ? 1 : 37) {
		uint64_t ps = fresh_file(x, fd, &h, len);

		check_all(x, fd, &h, ps, "every_length");
		/* and byte-by-byte appends for short files */
		if (len <= 40) {
			ps = 0;
			CHECK(ftruncate(fd, 0) == 0, "ftruncate");
			content_init_header(fd, D, &h);
			for (uint64_t i = 0; i < len; i++)
				content_write(x, fd, &h, &ps, model + i, 1, i, 0);
			check_all(x, fd, &h, ps, "appends");
		}
	}
}

static int all_zero_test(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void holes_and_seek(const struct xts_ctx *x, int fd)
{
	struct content_hdr h;
	uint64_t ps = 0;
	struct stat st;
	blkcnt_t freed;
	uint8_t buf[100];

	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, &h);
	memset(buf, 0xab, sizeof(buf));
	/* 100 bytes at 0, then 100 bytes at 64 MiB: a sparse file */
	content_write(x, fd, &h, &ps, buf, 100, 0, 0);
	content_write(x, fd, &h, &ps, buf, 100, 64u << 20, 0);
	fstat(fd, &st);
	CHECK(st.st_blocks * 512 < (1u << 20), "not sparse: %lld blocks",
	      (long long)st.st_blocks);
	CHECK(ps == (64u << 20) + 100, "size");
	CHECK(content_read(x, fd, &h, ps, got, 4096, 1u << 20) == 4096 &&
	      all_zero_test(got, 4096), "hole not zero");
	CHECK(content_seek(fd, D, ps, 0, SEEK_DATA) == 0, "SEEK_DATA 0");
	CHECK(content_seek(fd, D, ps, 5000, SEEK_DATA) == (64 << 20),
	      "SEEK_DATA 5000 = %lld", (long long)content_seek(fd, D, ps, 5000,
							       SEEK_DATA));
	CHECK(content_seek(fd, D, ps, 0, SEEK_HOLE) == 4096,
	      "SEEK_HOLE 0 = %lld", (long long)content_seek(fd, D, ps, 0, SEEK_HOLE));
	CHECK(content_seek(fd, D, ps, (64u << 20) + 1, SEEK_HOLE) == (int64_t)ps,
	      "SEEK_HOLE at the end");
	CHECK(content_seek(fd, D, ps, ps, SEEK_DATA) == -ENXIO, "past EOF");
	/* growing truncate stays sparse and reads zeros */
	content_truncate(x, fd, &h, &ps, 1ull << 32);
	fstat(fd, &st);
	CHECK(st.st_blocks * 512 < (1u << 20), "truncate not sparse");
	CHECK(content_read(x, fd, &h, ps, got, 4096, (1ull << 32) - 4096) ==
	      4096 && all_zero_test(got, 4096), "grown region not zero");
	/* punching the first unit makes it a hole that reads as zeros */
	ps = 0;
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, &h);
	rng_bytes(data, 3 * 4096);
	content_write(x, fd, &h, &ps, data, 3 * 4096, 0, 0);
	CHECK(content_fallocate(x, fd, &h, &ps, FALLOC_FL_PUNCH_HOLE |
				FALLOC_FL_KEEP_SIZE, 4096, 4096) == 0, "punch");
	CHECK(content_seek(fd, D, ps, 0, SEEK_HOLE) == 4096, "punched hole");
	CHECK(content_seek(fd, D, ps, 4096, SEEK_DATA) == 8192, "data after hole");
	CHECK(content_fallocate(x, fd, &h, &ps, FALLOC_FL_PUNCH_HOLE, 0, 10) ==
	      -EOPNOTSUPP, "punch without KEEP_SIZE");
	/* punching many units frees the lower blocks inside them */
	ps = fresh_file(x, fd, &h, 80 * 4096);
	fstat(fd, &st);
	freed = st.st_blocks;
	CHECK(content_fallocate(x, fd, &h, &ps, FALLOC_FL_PUNCH_HOLE |
				FALLOC_FL_KEEP_SIZE, 8 * 4096, 64 * 4096) == 0,
	      "punch 64 units");
	fstat(fd, &st);
	freed -= st.st_blocks;
	memset(model + 8 * 4096, 0, 64 * 4096);
	check_all(x, fd, &h, ps, "punch 64 units");
	/* 64 units hold 63 whole 4 KiB blocks at least (504 sectors) */
	if (freed < 504) {
		blkcnt_t was = st.st_blocks;

		/* does this filesystem free punched blocks at all? */
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      76 * 4096, 4 * 4096) == 0 &&
		    fstat(fd, &st) == 0 && st.st_blocks < was)
			CHECK(0, "punching 64 units freed %lld sectors",
			      (long long)freed);
	}
	CHECK(content_fallocate(x, fd, &h, &ps, FALLOC_FL_COLLAPSE_RANGE, 0,
				4096) == -EOPNOTSUPP, "collapse");
}

static void corruption(const struct xts_ctx *x, int fd)
{
	struct content_hdr h;
	uint64_t ps = 0;
	uint8_t b = 0x55;

	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	CHECK(content_read_header(fd, D, &h) == -ENODATA, "empty file");
	CHECK(content_plain_size(D, 0) == 0 &&
	      content_plain_size(D, 39) == -EIO &&
	      content_plain_size(D, 40) == 0 &&
	      content_plain_size(D, D) == 0 &&
	      content_plain_size(D, D + 1) == 1 &&
	      content_plain_size(D, (uint64_t)INT64_MAX + 1) == -EIO,
	      "plain sizes (D %u)", D);
	CHECK(pwrite(fd, "xtsf", 4, 0) == 4, "pwrite");
	CHECK(content_read_header(fd, D, &h) == -EIO, "short header");
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, &h);
	CHECK(pwrite(fd, "X", 1, 0) == 1, "pwrite");
	CHECK(content_read_header(fd, D, &h) == -EIO, "bad magic");
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, &h);
	CHECK(pwrite(fd, "\x02", 1, 4) == 1, "pwrite");
	CHECK(content_read_header(fd, D, &h) == -EIO, "future version");
	/* a torn short tail: slot from another write */
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	content_init_header(fd, D, &h);
	content_write(x, fd, &h, &ps, (const uint8_t *)"hello", 5, 0, 0);
	CHECK(content_read(x, fd, &h, ps, got, 5, 0) == 5 &&
	      !memcmp(got, "hello", 5), "tail");
	/* flip it: a fixed byte was the slot's own 1 time in 256 */
	CHECK(pread(fd, &b, 1, 39) == 1, "pread");
	b ^= 0xff;
	CHECK(pwrite(fd, &b, 1, 39) == 1, "pwrite");
	CHECK(content_read(x, fd, &h, ps, got, 5, 0) == -EIO, "torn tail read");
	/* the lower file shorter than a full unit it claims: EIO not garbage */
	CHECK(content_read(x, fd, &h, 5000, got, 100, 4096) == -EIO,
	      "short lower file");
}

/*
 * A write that grows the file and fails part-way (here: past
 * RLIMIT_FSIZE, as a full disk fails past the space left) changes
 * nothing: the size and every byte are as before, those it had
 * overwritten inside the old size too, and those of the old short last
 * unit, which a longer file encrypts as a full unit in place.
 */
static void failed_writes_keep_old_data(const struct xts_ctx *x, int fd,
					unsigned flags)
{
	static const uint64_t olds[] = { 0, 5, 15, 16, 100, 4096, 4097, 4111,
					 5000, 8191, 12288 };
	struct rlimit was, lim;

	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &was) == 0, "getrlimit");
	for (size_t i = 0; i < sizeof(olds) / sizeof(olds[0]); i++) {
		uint64_t old = olds[i];
		/* appends, writes inside the old last unit, past the end */
		uint64_t offs[] = { old, old > 100 ? old - 100 : 0, old + 10,
				    old + 5000 };

		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			struct content_hdr h;
			uint64_t ps = fresh_file(x, fd, &h, old);
			ssize_t n;
			char what[96];

			/* the lower file may not grow by more than 1000 bytes */
			lim = was;
			lim.rlim_cur = layout_coff(D, old) + 1000;
			CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
			rng_bytes(data, 20000);
			n = content_write(x, fd, &h, &ps, data, 20000, offs[j],
					  flags);
			CHECK(setrlimit(RLIMIT_FSIZE, &was) == 0, "setrlimit");
			CHECK(n == -EFBIG, "old %llu, write at %llu: %zd",
			      (unsigned long long)old,
			      (unsigned long long)offs[j], n);
			snprintf(what, sizeof(what), "failed write at %llu of a "
				 "%llu-byte file", (unsigned long long)offs[j],
				 (unsigned long long)old);
			CHECK(ps == old && (lower_size(fd) == layout_coff(D, old) ||
					    (!old && lower_size(fd) ==
						     CONTENT_HDR_SIZE)),
			      "%s: size %llu, lower %llu", what,
			      (unsigned long long)ps,
			      (unsigned long long)lower_size(fd));
			n = content_read(x, fd, &h, ps, got, old + 100, 0);
			CHECK(n == (ssize_t)old, "%s: read %zd", what, n);
			if (n == (ssize_t)old)
				test_memeq(what, got, model, old);
		}
	}
	signal(SIGXFSZ, SIG_DFL);
}

/* Make every later fallocate(2) of this process fail with EIO. */
static int fallocate_fails(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fallocate, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* write @len bytes of new data at @off; on success the model follows */
static ssize_t try_write(const struct xts_ctx *x, int fd,
			 const struct content_hdr *h, uint64_t *ps,
			 size_t len, uint64_t off, unsigned flags)
{
	ssize_t n;

	rng_bytes(data, len);
	n = content_write(x, fd, h, ps, data, len, off, flags);
	if (n == (ssize_t)len) {
		memcpy(model + off, data, len);
		if (off + len > msize)
			msize = off + len;
	}
	return n;
}

/*
 * Which writes reserve space before overwriting (a full disk must fail
 * there, before anything changes): in a child whose fallocate(2) always
 * fails with EIO, a write that reserves fails with EIO and changes
 * nothing, one that does not succeeds. Without CONTENT_HOLES_SEEKABLE
 * every overwrite reserves; with it only ranges with a hole do, as
 * overwriting allocated units in place needs no space; appends never do
 * (a failed one is undone).
 */
static void reserves_only_what_needs_space(const struct xts_backend *be,
					   int fd)
{
	const uint64_t U = CONTENT_UNIT, H = D;
	struct content_hdr h;
	struct xts_ctx *x;
	uint8_t key[64];
	uint64_t ps;
	bool holes;
	pid_t pid;
	int status;

	/* a child of its own: keys in locked memory are not inherited */
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid != 0) {
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "reserve checks (status %d)",
		      status);
		return;
	}
	rng_bytes(key, 64);
	key[0] ^= key[32] ^ 1;
	if (xts_ctx_new(&x, be, key) != 0) {
		CHECK(0, "ctx");
		_exit(1);
	}
	/* 8 units, 4 and 5 punched: the lower blocks inside them freed */
	ps = fresh_file(x, fd, &h, 8 * U);
	CHECK(content_fallocate(x, fd, &h, &ps, FALLOC_FL_PUNCH_HOLE |
				FALLOC_FL_KEEP_SIZE, 4 * U, 2 * U) == 0, "punch");
	memset(model + 4 * U, 0, 2 * U);
	holes = lseek(fd, (off_t)(H + 4 * U), SEEK_HOLE) < (off_t)(H + 6 * U);
	if (!holes)
		printf("reserve: the lower filesystem of %s shows no hole; "
		       "checking overwrites of allocated units only\n", path);
	if (fallocate_fails() != 0) {
		printf("reserve: no seccomp here, not checked\n");
		fflush(stdout);
		_exit(0);
	}
	CHECK(try_write(x, fd, &h, &ps, 2 * U, 0, CONTENT_HOLES_SEEKABLE) ==
	      (ssize_t)(2 * U), "allocated units, seekable: no reservation");
	CHECK(try_write(x, fd, &h, &ps, 100, 6 * U + 10,
			CONTENT_HOLES_SEEKABLE) == 100,
	      "part of an allocated unit, seekable: no reservation");
	CHECK(try_write(x, fd, &h, &ps, U, 2 * U, 0) == -EIO,
	      "allocated unit, not seekable: reserved");
	if (holes) {
		CHECK(try_write(x, fd, &h, &ps, U, 4 * U,
				CONTENT_HOLES_SEEKABLE) == -EIO,
		      "a hole, seekable: reserved");
		CHECK(try_write(x, fd, &h, &ps, 2 * U, 3 * U,
				CONTENT_HOLES_SEEKABLE) == -EIO,
		      "a unit and a hole, seekable: reserved");
		CHECK(try_write(x, fd, &h, &ps, 10, 5 * U + 1,
				CONTENT_HOLES_SEEKABLE) == -EIO,
		      "part of a hole, seekable: reserved");
	}
	CHECK(try_write(x, fd, &h, &ps, 3 * U + 5, 8 * U, 0) ==
	      (ssize_t)(3 * U + 5), "append: no reservation");
	check_all(x, fd, &h, ps, "reserve");
	xts_ctx_free(x);
	fflush(stdout);
	_exit(test_failures ? 1 : 0);
}

int main(void)
{
	const char *lng = getenv("XTSFS_TEST_LONG");
	int nops = lng && *lng == '1' ? 20000 : 1500;
	int fd;

	rng_seed("test_content");
	model = calloc(1, MAXSZ);
	got = calloc(1, MAXSZ + 4096);
	data = calloc(1, MAXSZ);
	fd = mkstemp(path);
	if (!model || !got || !data || fd < 0)
		return 2;
	unlink(path);
	for (size_t i = 0; xts_backends[i]; i++) {
		const struct xts_backend *be = xts_backends[i];
		struct xts_ctx *x;
		struct content_hdr h;
		uint8_t key[64];
		int before = test_failures;

		if (!be->probe())
			continue;
		rng_bytes(key, 64);
		key[0] ^= key[32] ^ 1; /* halves differ */
		if (xts_ctx_new(&x, be, key)) {
			CHECK(0, "ctx");
			continue;
		}
		for (int l = 0; l < 2; l++) {
			D = l ? LAYOUT_DOFF_ALIGNED : LAYOUT_DOFF_COMPACT;
			every_length(x, fd);
			holes_and_seek(x, fd);
			corruption(x, fd);
			failed_writes_keep_old_data(x, fd, 0);
			failed_writes_keep_old_data(x, fd,
						    CONTENT_HOLES_SEEKABLE);
			if (be == &xts_backend_software)
				reserves_only_what_needs_space(be, fd);
			random_ops(x, fd, &h, be == &xts_backend_software ?
				   nops / 3 : nops);
		}
		xts_ctx_free(x);
		printf("%-10s %s\n", be->name, test_failures == before ? "ok" : "FAILED");
	}
	close(fd);
	return test_failures ? 1 : 0;
}
