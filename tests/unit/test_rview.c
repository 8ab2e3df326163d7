/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rview.c - the reverse view (rview.h) against the forward path:
 * the view's file headers and unit placement come from the same
 * functions as the forward mount's. A plaintext tree holds files of every
 * size class (0, 1, 15, 16, 17, 4095, 4096, 4097, 4096 + 15, 4096 + 16,
 * 2 * 4096, 1 MiB + 7, written zeros, a hole of whole units in the
 * middle, holes at the end, one ending in a short tail); a view of it is
 * built with fixed test keys, and for every file:
 *   - the view's bytes, read whole and at odd offsets and lengths across
 *     the header and unit boundaries, agree with each other;
 *   - their length is layout_lower_size() of the plaintext size, also as
 *     rfs_getattr() reports it;
 *   - fileheader_decode() parses the header, its id is the derived file
 *     id (FORMAT 5.2, recomputed here) and the slot is what 3.5 says;
 *   - content_read() on a memfd holding the view bytes gives back the
 *     plaintext;
 *   - content_write() of the same plaintext under the same file id,
 *     holes left unwritten as a forward mount leaves them, gives
 *     byte-identical ciphertext, holes included (3.6: zeros).
 * Then the listings: the root and a subdirectory show every entry under
 * its encrypted name, xtsfs.volume (the bytes of .xtsfs.volume, which is
 * hidden), xtsfs.dirid (the derived dirid, its mtime from the dirid),
 * the sidecar of a 200-byte name and one xtsfs.link.* file per distinct
 * long symlink target (FORMAT 5.3); a plaintext-names view shows names
 * as they are and no dirids. Runs on every cipher core this CPU has.
 * Built without libfuse3: the view is the core's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmac.h"
#include "content.h"
#include "fileheader.h"
#include "layout.h"
#include "names.h"
#include "rview.h"
#include "testutil.h"
#include "volume.h"
#include "xts.h"

#define U LAYOUT_UNIT_SIZE
#define H LAYOUT_HDR_SIZE
#define MIB (1u << 20)
#define LONG_NAME_LEN 200
#define LONG_TARGET_LEN 3100 /* over 3040 bytes: an xtsfs.link.* file */

/* a plaintext file of the tree: its data regions, the rest a hole */
struct tfile {
	const char *name;
	uint64_t size;       /* plaintext size */
	uint64_t data[3][2]; /* [off, end) written; { 0, 0 } ends the list */
	bool zeros;          /* the data are written zeros */
};

static const struct tfile files[] = {
	{ "f0", 0, { { 0, 0 } }, false },
	{ "f1", 1, { { 0, 1 } }, false },
	{ "f15", 15, { { 0, 15 } }, false },
	{ "f16", 16, { { 0, 16 } }, false },
	{ "f17", 17, { { 0, 17 } }, false },
	{ "f4095", 4095, { { 0, 4095 } }, false },
	{ "f4096", 4096, { { 0, 4096 } }, false },
	{ "f4097", 4097, { { 0, 4097 } }, false },
	{ "f4111", U + 15, { { 0, U + 15 } }, false },
	{ "f4112", U + 16, { { 0, U + 16 } }, false },
	{ "f8192", 2 * U, { { 0, 2 * U } }, false },
	{ "f1m7", MIB + 7, { { 0, MIB + 7 } }, false },
	/* written zeros are data: encrypted like any, never shown as a hole */
	{ "zeros", 3 * U + 5, { { 0, 3 * U + 5 } }, true },
	/* units 2..5 wholly a hole; 1 and 6 partly */
	{ "sparse", 9 * U + 50, { { 0, 5000 }, { 6 * U + 100, 9 * U + 50 } },
	  false },
	/* a hole at the end: units 2 and 3 (a last unit of 100 bytes) */
	{ "endhole", 3 * U + 100, { { 0, U + 50 } }, false },
	/* a hole at the end over a short tail: the slot stays zero */
	{ "tailhole", 2 * U + 7, { { 0, U } }, false },
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char top[64], plain[96];
static uint8_t *pbuf, *vbuf, *fbuf, *rbuf; /* plaintext, view, forward, read */
static uint8_t volbytes[VOL_FILE_SIZE];
static char long_name[LONG_NAME_LEN + 1];
static char long_target[LONG_TARGET_LEN + 1];
static bool fs_has_holes;

/* ---- the plaintext tree --------------------------------------------------- */

static uint64_t run_seed; /* from the test's seed: new bytes each run */

/* The plaintext of @f into @buf (zeros outside its data), from @seed. */
static void tfile_plain(const struct tfile *f, uint8_t *buf, uint64_t seed)
{
	uint64_t z = run_seed ^ (seed * 0x9e3779b97f4a7c15ull);

	memset(buf, 0, f->size);
	for (int i = 0; i < 3 && f->data[i][1]; i++) {
		if (f->zeros)
			continue;
		for (uint64_t o = f->data[i][0]; o < f->data[i][1]; o++) {
			uint64_t x = (z += 0x9e3779b97f4a7c15ull); /* splitmix64 */

			x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
			x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
			buf[o] = (uint8_t)(x ^ (x >> 31));
		}
	}
}

/* The file of the table called @name. */
static const struct tfile *tf(const char *name)
{
	for (size_t i = 0; i < NFILES; i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	abort();
}

static void write_file(int dirfd, const char *name, const struct tfile *f,
		       uint64_t seed)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0, "create %s", name);
	if (fd < 0)
		return;
	tfile_plain(f, pbuf, seed);
	for (int i = 0; i < 3 && f->data[i][1]; i++) {
		uint64_t a = f->data[i][0], b = f->data[i][1];

		CHECK(pwrite(fd, pbuf + a, b - a, (off_t)a) == (ssize_t)(b - a),
		      "write %s", name);
	}
	CHECK(ftruncate(fd, (off_t)f->size) == 0, "size of %s", name);
	close(fd);
}

static void make_tree(void)
{
	int fd, dfd, sfd;

	snprintf(top, sizeof(top), "/tmp/xtsfs-rview.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(plain, sizeof(plain), "%s/plain", top);
	CHECK(mkdir(plain, 0755) == 0, "mkdir plain");
	dfd = open(plain, O_RDONLY | O_DIRECTORY);
	for (size_t i = 0; i < NFILES; i++)
		write_file(dfd, files[i].name, &files[i], i + 1);
	rng_bytes(volbytes, sizeof(volbytes));
	fd = openat(dfd, VOL_REVERSE_NAME, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, volbytes, sizeof(volbytes)) ==
	      (ssize_t)sizeof(volbytes), "the header file");
	close(fd);
	memset(long_name, 'n', LONG_NAME_LEN);
	memset(long_target, 't', LONG_TARGET_LEN);
	CHECK(mkdirat(dfd, "sub", 0755) == 0 &&
	      mkdirat(dfd, "sub/deeper", 0755) == 0, "subdirectories");
	sfd = openat(dfd, "sub", O_RDONLY | O_DIRECTORY);
	write_file(sfd, long_name, tf("sparse"), 100);
	write_file(sfd, "short", tf("f4111"), 101);
	CHECK(symlinkat("../f1", sfd, "shortlink") == 0 &&
	      symlinkat(long_target, sfd, "longlink") == 0 &&
	      symlinkat(long_target, sfd, "deeper/samelink") == 0,
	      "symlinks");
	close(sfd);
	/* does the plaintext filesystem show holes? (ext4, xfs, tmpfs do) */
	fd = openat(dfd, "sparse", O_RDONLY);
	fs_has_holes = fd >= 0 &&
		       lseek(fd, 0, SEEK_HOLE) < (off_t)tf("sparse")->size;
	close(fd);
	if (!fs_has_holes)
		printf("the filesystem of %s shows no holes: every unit is "
		       "data there\n", top);
	close(dfd);
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", top);
}

/* ---- references, from FORMAT.md alone ------------------------------------- */

/* fileid / dirid of the plaintext object @fd (FORMAT 5.2). */
static void ref_id(const struct aes_cmac_key *k, int fd, bool dir,
		   uint8_t id[16])
{
	const char *label = dir ? "xtsfs reverse dirid" : "xtsfs reverse file id";
	size_t ll = strlen(label) + 1;
	uint8_t msg[64];
	struct statx sx;
	uint64_t ino, bs = 0;
	uint32_t bns = 0;

	CHECK(statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &sx) == 0,
	      "statx");
	ino = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME) {
		bs = (uint64_t)sx.stx_btime.tv_sec;
		bns = sx.stx_btime.tv_nsec;
	}
	memcpy(msg, label, ll);
	for (int i = 0; i < 8; i++) {
		msg[ll + i] = (uint8_t)(ino >> (8 * i));
		msg[ll + 8 + i] = (uint8_t)(bs >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		msg[ll + 16 + i] = (uint8_t)(bns >> (8 * i));
	aes_cmac(k, id, msg, ll + 20);
}

/*
 * Which units of plaintext @fd (@psize bytes) lie wholly in a hole of
 * it (FORMAT 5.3), unit by unit; and that the units the test made holes
 * are among them wherever the filesystem shows holes.
 */
static void ref_holes(int fd, const struct tfile *f, bool *hole)
{
	uint64_t n = layout_nunits(f->size);

	for (uint64_t u = 0; u < n; u++) {
		uint64_t us = layout_unit_start(u);
		uint64_t ue = us + layout_unit_len(f->size, u);
		off_t d = lseek(fd, (off_t)us, SEEK_DATA);
		bool made = true;

		hole[u] = d < 0 ? errno == ENXIO : (uint64_t)d >= ue;
		for (int i = 0; i < 3 && f->data[i][1]; i++)
			if (f->data[i][0] < ue && f->data[i][1] > us)
				made = false;
		if (fs_has_holes)
			CHECK(hole[u] == made, "%s: unit %llu %s a hole", f->name,
			      (unsigned long long)u, made ? "is not" : "is");
	}
}

/*
 * The forward mount's lower file of @f's plaintext @p with file id @id:
 * a header (content_init_header() with a fixed id), content_write() of
 * every run of data units in 128 KiB requests, content_truncate() over
 * the holes, as a mount leaves them. Return: its descriptor.
 */
static int forward_file(const struct xts_ctx *x, const struct tfile *f,
			const uint8_t *p, const uint8_t id[16], const bool *hole)
{
	int fd = memfd_create("forward", MFD_CLOEXEC);
	struct fileheader fh = { 0 };
	struct content_hdr ch;
	uint8_t hdr[H];
	uint64_t ps = 0, n = layout_nunits(f->size);

	CHECK(fd >= 0, "memfd");
	if (f->size == 0)
		return fd; /* no header until the first data (FORMAT 3.4) */
	memcpy(fh.id, id, 16);
	memcpy(ch.id, id, 16);
	ch.doff = LAYOUT_DOFF_COMPACT;
	fileheader_encode(hdr, &fh);
	CHECK(pwrite(fd, hdr, H, 0) == H, "forward header");
	for (uint64_t u = 0; u < n;) {
		uint64_t a, b;

		if (hole[u]) {
			u++;
			continue;
		}
		a = layout_unit_start(u);
		while (u < n && !hole[u])
			u++;
		b = u < n ? layout_unit_start(u) : f->size;
		if (a > ps)
			CHECK_OK(content_truncate(x, fd, &ch, &ps, a));
		for (uint64_t o = a; o < b; o += 32 * U) {
			size_t len = b - o < 32 * U ? (size_t)(b - o) : 32 * U;

			CHECK(content_write(x, fd, &ch, &ps, p + o, len, o,
					    CONTENT_HOLES_SEEKABLE) == (ssize_t)len,
			      "%s: forward write at %llu", f->name,
			      (unsigned long long)o);
		}
	}
	if (ps < f->size)
		CHECK_OK(content_truncate(x, fd, &ch, &ps, f->size));
	return fd;
}

/* ---- one file ------------------------------------------------------------- */

/* Reads at odd offsets and lengths agree with the whole view. */
static void check_ranges(struct rfs *fs, struct rinode *in, uint64_t fh,
			 const char *name, uint64_t vsize)
{
	static const uint64_t offs[] = { 0, 1, 7, 8, 23, 24, 25, 39, 40, 41,
					 H + U - 1, H + U, H + U + 1,
					 H + 2 * U - 3, H + 32 * U - 1 };
	static const size_t lens[] = { 1, 2, 15, 16, 17, 39, 40, 41, U - 1, U,
				       U + 1, 2 * U + 3, 33 * U };

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]) + 8; i++) {
		uint64_t off = i < sizeof(offs) / sizeof(offs[0]) ? offs[i] :
			       rng_below(vsize + 50);

		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]) + 2; j++) {
			size_t len = j < sizeof(lens) / sizeof(lens[0]) ?
				     lens[j] : 1 + rng_below(3 * U);
			uint64_t want = off >= vsize ? 0 : vsize - off < len ?
					vsize - off : len;
			ssize_t n = rfs_read(fs, in, fh, rbuf, len, off);
			char what[96];

			CHECK(n == (ssize_t)want, "%s: read %zu at %llu: %zd, "
			      "not %llu", name, len, (unsigned long long)off, n,
			      (unsigned long long)want);
			snprintf(what, sizeof(what), "%s: %zu at %llu", name,
				 len, (unsigned long long)off);
			if (n == (ssize_t)want)
				test_memeq(what, rbuf, vbuf + off, want);
		}
	}
}

/* The header of a view file: what FORMAT 3.4, 3.5 and 5.2 say. */
static void check_header(const struct xts_ctx *x, const struct tfile *f,
			 const char *name, const uint8_t id[16],
			 const bool *hole)
{
	struct fileheader fh;
	uint8_t b[16], c[16], tw[16];
	uint64_t u, v;
	uint32_t n;

	CHECK(fileheader_decode(&fh, vbuf, layout_lower_size(LAYOUT_DOFF_COMPACT, f->size)) == 0,
	      "%s: the view's header does not parse", name);
	CHECK(!memcmp(vbuf, "xtsf\1\0\0\0", 8), "%s: magic, version", name);
	CHECK(!memcmp(fh.id, id, 16), "%s: not the derived file id", name);
	if (!layout_has_tail(f->size)) {
		CHECK(test_all_zero(fh.slot, 16), "%s: a slot without a tail",
		      name);
		return;
	}
	u = layout_last_unit(f->size);
	n = layout_unit_len(f->size, u);
	CHECK(test_all_zero(fh.slot, n), "%s: slot bytes [24, 24 + %u) "
	      "not zero", name, n);
	if (hole[u]) {
		CHECK(test_all_zero(fh.slot, 16) &&
		      test_all_zero(vbuf + layout_unit_coff(LAYOUT_DOFF_COMPACT, u), n),
		      "%s: a short tail in a hole is not all zero", name);
		return;
	}
	/*
	 * FORMAT 3.5, computed here: C = XTS(P_tail || zeros) under
	 * id ^ (LE64(u) || LE64(2^63 + n)); C[0..n) is the tail's bytes,
	 * C[n..16) the slot's.
	 */
	memset(b, 0, sizeof(b));
	memcpy(b, pbuf + u * U, n);
	v = (UINT64_C(1) << 63) + n;
	xts_unit_tweak(tw, id, u);
	for (int i = 0; i < 8; i++)
		tw[8 + i] ^= (uint8_t)(v >> (8 * i));
	CHECK(xts_encrypt_one(x, c, b, 16, tw) == 0, "%s: the tail's XTS",
	      name);
	CHECK(!memcmp(fh.slot + n, c + n, 16 - n), "%s: slot bytes [%u, 16) "
	      "are not the tail's ciphertext", name, n);
	CHECK(!memcmp(vbuf + layout_unit_coff(LAYOUT_DOFF_COMPACT, u), c, n),
	      "%s: the tail's %u bytes are not its ciphertext", name, n);
}

/* content_read() of the view's bytes gives back the plaintext. */
static void check_decrypts(const struct xts_ctx *x, const struct tfile *f,
			   const char *name, uint64_t vsize)
{
	int fd = memfd_create("view", MFD_CLOEXEC);
	struct content_hdr ch;
	ssize_t n;

	CHECK(fd >= 0 && pwrite(fd, vbuf, vsize, 0) == (ssize_t)vsize,
	      "%s: the view into a memfd", name);
	if (f->size == 0) {
		CHECK(content_read_header(fd, LAYOUT_DOFF_COMPACT, &ch) == -ENODATA,
		      "%s: an empty view file is an empty file", name);
		close(fd);
		return;
	}
	CHECK_OK(content_read_header(fd, LAYOUT_DOFF_COMPACT, &ch));
	n = content_read(x, fd, &ch, f->size, rbuf, f->size + 100, 0);
	CHECK(n == (ssize_t)f->size, "%s: content_read %zd of %llu", name, n,
	      (unsigned long long)f->size);
	if (n == (ssize_t)f->size) {
		char what[96];

		snprintf(what, sizeof(what), "%s: decrypted view", name);
		test_memeq(what, rbuf, pbuf, f->size);
	}
	close(fd);
}

/* The forward path's lower file of the same plaintext is the view. */
static void check_forward(const struct xts_ctx *x, const struct tfile *f,
			  const char *name, const uint8_t id[16],
			  const bool *hole, uint64_t vsize)
{
	int fd = forward_file(x, f, pbuf, id, hole);
	struct stat st;
	char what[96];

	CHECK(fstat(fd, &st) == 0 && (uint64_t)st.st_size == vsize,
	      "%s: forward lower size %lld, view %llu", name,
	      (long long)st.st_size, (unsigned long long)vsize);
	CHECK(pread(fd, fbuf, vsize + 1, 0) == (ssize_t)vsize,
	      "%s: forward file", name);
	snprintf(what, sizeof(what), "%s: view against forward", name);
	test_memeq(what, vbuf, fbuf, vsize);
	for (uint64_t u = 0; u < layout_nunits(f->size); u++)
		if (hole[u])
			CHECK(test_all_zero(vbuf + layout_unit_coff(LAYOUT_DOFF_COMPACT, u),
					    layout_unit_len(f->size, u)),
			      "%s: hole unit %llu not zeros", name,
			      (unsigned long long)u);
		else if (layout_unit_len(f->size, u) >= 16)
			CHECK(!test_all_zero(vbuf + layout_unit_coff(LAYOUT_DOFF_COMPACT, u), 16),
			      "%s: data unit %llu stored as zeros", name,
			      (unsigned long long)u);
	close(fd);
}

/*
 * Everything about plaintext file @f, shown in view directory @dir as
 * @vname; @pdirfd/@pname: the plaintext file.
 */
static void check_file(struct rfs *fs, const struct xts_ctx *x,
		       const struct aes_cmac_key *idkey, struct rinode *dir,
		       const char *vname, int pdirfd, const char *pname,
		       const struct tfile *f, uint64_t seed)
{
	const uint64_t vsize = layout_lower_size(LAYOUT_DOFF_COMPACT, f->size);
	bool *hole = calloc(layout_nunits(f->size) + 1, sizeof(*hole));
	int pfd = openat(pdirfd, pname, O_RDONLY);
	struct rinode *in = NULL;
	struct stat st;
	uint8_t id[16];
	uint64_t fh = RFS_NO_FILE;
	bool fixed = true;
	ssize_t n;

	CHECK(hole && pfd >= 0, "%s: plaintext", f->name);
	CHECK(rfs_lookup(fs, dir, vname, &in, &st) == 0, "%s: lookup", f->name);
	if (!hole || pfd < 0 || !in)
		goto out;
	CHECK(S_ISREG(st.st_mode) && (uint64_t)st.st_size == vsize,
	      "%s: lookup size %lld, not %llu", f->name, (long long)st.st_size,
	      (unsigned long long)vsize);
	CHECK(rfs_getattr(fs, in, &st) == 0 && (uint64_t)st.st_size == vsize,
	      "%s: getattr size", f->name);
	CHECK(rfs_open(fs, in, O_WRONLY, &fh, &fixed) == -EROFS, "%s: EROFS",
	      f->name);
	CHECK(rfs_open(fs, in, O_RDONLY, &fh, &fixed) == 0 && !fixed,
	      "%s: open", f->name);
	n = rfs_read(fs, in, fh, vbuf, vsize + 3 * U, 0);
	CHECK(n == (ssize_t)vsize, "%s: view read %zd, not %llu", f->name, n,
	      (unsigned long long)vsize);
	CHECK(rfs_read(fs, in, fh, rbuf, 10, vsize) == 0 &&
	      rfs_read(fs, in, fh, rbuf, 10, vsize + U) == 0,
	      "%s: reads at and past the end", f->name);
	tfile_plain(f, pbuf, seed);
	ref_id(idkey, pfd, false, id);
	ref_holes(pfd, f, hole);
	if (n == (ssize_t)vsize) {
		check_ranges(fs, in, fh, f->name, vsize);
		if (vsize)
			check_header(x, f, f->name, id, hole);
		check_decrypts(x, f, f->name, vsize);
		check_forward(x, f, f->name, id, hole, vsize);
	}
	rfs_release(fs, fh);
out:
	if (in)
		rfs_forget(fs, in, 1);
	if (pfd >= 0)
		close(pfd);
	free(hole);
}

/* ---- listings ------------------------------------------------------------- */

static const struct rent *find_ent(const struct rdir *d, const char *name)
{
	const struct rent *got = NULL;
	int count = 0;

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->e[i].name, name)) {
			got = &d->e[i];
			count++;
		}
	CHECK(count <= 1, "%s listed %d times", name, count);
	return got;
}

/* The bytes of synthesised file @name of @dir: mode 0444, @len bytes. */
static void check_virt(struct rfs *fs, struct rinode *dir, const char *name,
		       const void *want, size_t len, time_t mtime)
{
	struct rinode *in;
	struct stat st;
	uint64_t fh;
	bool fixed = false;

	if (rfs_lookup(fs, dir, name, &in, &st) != 0) {
		CHECK(0, "lookup of %s", name);
		return;
	}
	CHECK(st.st_mode == (S_IFREG | 0444) && (size_t)st.st_size == len,
	      "%s: mode %o size %lld", name, st.st_mode, (long long)st.st_size);
	if (mtime)
		CHECK(st.st_mtime == mtime, "%s: mtime %lld, not %lld", name,
		      (long long)st.st_mtime, (long long)mtime);
	CHECK(rfs_open(fs, in, O_RDONLY, &fh, &fixed) == 0 &&
	      fh == RFS_NO_FILE && fixed, "%s: open", name);
	CHECK(rfs_read(fs, in, fh, rbuf, len + 100, 0) == (ssize_t)len &&
	      !memcmp(rbuf, want, len), "%s: contents", name);
	if (len > 3)
		CHECK(rfs_read(fs, in, fh, rbuf, 2, 3) == 2 &&
		      !memcmp(rbuf, (const uint8_t *)want + 3, 2),
		      "%s: a range", name);
	rfs_release(fs, fh);
	rfs_forget(fs, in, 1);
}

static void enc_name(const struct names_ctx *nm, const uint8_t dirid[16],
		     const char *name, char stored[NAMES_STORED_MAX + 1],
		     char full[NAMES_FULL_MAX], bool *lg)
{
	CHECK_OK(names_encrypt(nm, dirid, name, strlen(name), stored, full, lg));
}

/* The root: every file, xtsfs.volume, one xtsfs.link.*, nothing hidden. */
static void check_root(struct rfs *fs, const struct names_ctx *nm,
		       char lnk[NAMES_TARGET_MAX], char linkfull[NAMES_TARGET_MAX])
{
	static const uint8_t zero[16];
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	struct rdir *d;
	bool lg;

	if (rfs_opendir(fs, fs->root, &d) != 0) {
		CHECK(0, "root listing");
		return;
	}
	CHECK(d->n >= 2 && !strcmp(d->e[0].name, ".") &&
	      !strcmp(d->e[1].name, ".."), "root: . and .. first");
	for (size_t i = 0; i < NFILES; i++) {
		enc_name(nm, zero, files[i].name, stored, full, &lg);
		CHECK(!lg && find_ent(d, stored), "root: %s not listed",
		      files[i].name);
	}
	enc_name(nm, zero, "sub", stored, full, &lg);
	CHECK(find_ent(d, stored) && find_ent(d, stored)->type == DT_DIR,
	      "root: sub");
	CHECK(find_ent(d, VOL_FILE_NAME) != NULL, "root: no %s", VOL_FILE_NAME);
	CHECK(!find_ent(d, VOL_REVERSE_NAME), "root: %s shown", VOL_REVERSE_NAME);
	CHECK(!find_ent(d, NAMES_DIRID_FILE), "root: a dirid file");
	CHECK(find_ent(d, lnk) != NULL, "root: no %s", lnk);
	/* ., .., the files, sub, xtsfs.volume, one link file for two links */
	CHECK(d->n == 2 + NFILES + 1 + 1 + 1, "root: %zu entries", d->n);
	rfs_closedir(d);
	check_virt(fs, fs->root, VOL_FILE_NAME, volbytes, sizeof(volbytes), 0);
	check_virt(fs, fs->root, lnk, linkfull, strlen(linkfull), 946684800);
	{
		struct rinode *in;
		struct stat st;

		CHECK(rfs_lookup(fs, fs->root, VOL_REVERSE_NAME, &in, &st) ==
		      -ENOENT, "%s found", VOL_REVERSE_NAME);
		CHECK(rfs_lookup(fs, fs->root, "f1", &in, &st) == -ENOENT,
		      "a plaintext name found");
	}
}

/* sub: xtsfs.dirid, the long name and its sidecar, the symlinks. */
static void check_sub(struct rfs *fs, const struct xts_ctx *x,
		      const struct names_ctx *nm, const struct aes_cmac_key *k,
		      struct rinode *sub, int subfd, char lnk[NAMES_TARGET_MAX],
		      char linkfull[NAMES_TARGET_MAX])
{
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char side[NAMES_STORED_MAX + 1], out[256];
	char *tgt = malloc(RFS_TARGET_MAX), *tfull = malloc(NAMES_TARGET_MAX);
	uint8_t dirid[16];
	struct rinode *in;
	struct rdir *d;
	struct stat st;
	size_t olen;
	bool lg;

	if (!tgt || !tfull || rfs_opendir(fs, sub, &d) != 0) {
		CHECK(0, "sub listing");
		goto out;
	}
	ref_id(k, subfd, true, dirid);
	CHECK(find_ent(d, NAMES_DIRID_FILE) != NULL, "sub: no dirid file");
	check_virt(fs, sub, NAMES_DIRID_FILE, dirid, 16,
		   (time_t)((uint32_t)dirid[0] | (uint32_t)dirid[1] << 8 |
			    (uint32_t)dirid[2] << 16 |
			    (uint32_t)(dirid[3] & 0x7f) << 24));
	enc_name(nm, dirid, long_name, stored, full, &lg);
	names_long_sidecar(side, stored);
	CHECK(lg && names_is_long(stored), "a 200-byte name is long");
	CHECK(find_ent(d, stored) && find_ent(d, side), "sub: long name or "
	      "sidecar not listed");
	check_virt(fs, sub, side, full, strlen(full), 946684800);
	CHECK(names_decrypt_long(nm, dirid, stored, full, strlen(full), out,
				 &olen) == 0 && olen == LONG_NAME_LEN &&
	      !memcmp(out, long_name, olen), "sidecar does not decrypt");
	check_file(fs, x, k, sub, stored, subfd, long_name, tf("sparse"), 100);
	enc_name(nm, dirid, "short", stored, full, &lg);
	check_file(fs, x, k, sub, stored, subfd, "short", tf("f4111"), 101);
	enc_name(nm, dirid, "deeper", stored, full, &lg);
	CHECK(find_ent(d, stored) && find_ent(d, stored)->type == DT_DIR,
	      "sub: deeper");
	/* ., .., dirid, long + sidecar, short, deeper, two symlinks */
	CHECK(d->n == 9, "sub: %zu entries", d->n);
	rfs_closedir(d);
	/* the symlinks: targets as FORMAT 4.4 stores them */
	enc_name(nm, dirid, "shortlink", stored, full, &lg);
	CHECK(rfs_lookup(fs, sub, stored, &in, &st) == 0 && S_ISLNK(st.st_mode),
	      "lookup shortlink");
	CHECK(rfs_readlink(fs, in, tgt) == 0 && (size_t)st.st_size == strlen(tgt) &&
	      names_decrypt_target(nm, tgt, strlen(tgt), (char *)rbuf, &olen) == 0 &&
	      olen == 5 && !memcmp(rbuf, "../f1", 5), "shortlink's target");
	rfs_forget(fs, in, 1);
	enc_name(nm, dirid, "longlink", stored, full, &lg);
	CHECK(rfs_lookup(fs, sub, stored, &in, &st) == 0 && S_ISLNK(st.st_mode),
	      "lookup longlink");
	CHECK(rfs_readlink(fs, in, tgt) == 0 && names_is_link_ref(tgt),
	      "longlink: not a link reference");
	rfs_forget(fs, in, 1);
	CHECK_OK(names_encrypt_target(nm, long_target, LONG_TARGET_LEN, lnk,
				      linkfull, &lg));
	CHECK(lg && !strcmp(lnk, tgt), "longlink: reference");
	CHECK(names_decrypt_target_ref(nm, lnk, linkfull, strlen(linkfull),
				       (char *)rbuf, &olen) == 0 &&
	      olen == LONG_TARGET_LEN && !memcmp(rbuf, long_target, olen),
	      "long target");
out:
	free(tgt);
	free(tfull);
}

/* A plaintext-names view: names as they are, no dirids, still the header. */
static void check_plain_names(struct rfs *base)
{
	struct rfs fs = *base;
	struct rinode *sub;
	struct rdir *d;
	struct stat st;

	fs.names = NULL;
	fs.root = NULL;
	fs.root_fd = open(plain, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs.root_fd < 0 || rfs_init(&fs) != 0) {
		CHECK(0, "plaintext-names view");
		return;
	}
	CHECK(rfs_opendir(&fs, fs.root, &d) == 0, "plaintext-names root");
	CHECK(find_ent(d, "f4096") && find_ent(d, VOL_FILE_NAME) &&
	      !find_ent(d, VOL_REVERSE_NAME) && d->n == 2 + NFILES + 2,
	      "plaintext-names root listing");
	rfs_closedir(d);
	CHECK(rfs_lookup(&fs, fs.root, "sub", &sub, &st) == 0 &&
	      rfs_opendir(&fs, sub, &d) == 0, "plaintext-names sub");
	CHECK(find_ent(d, long_name) && !find_ent(d, NAMES_DIRID_FILE) &&
	      d->n == 2 + 5, "plaintext-names sub listing");
	rfs_closedir(d);
	rfs_forget(&fs, sub, 1);
	CHECK(itable_count(&fs.inodes) == 0, "plaintext-names: inodes left");
	rfs_destroy(&fs);
}

/* ---- the whole view on one cipher core ------------------------------------ */

static void check_view(const struct xts_backend *be, const uint8_t key[64],
		       const struct names_ctx *nm, const struct aes_cmac_key *k)
{
	static const uint8_t zero[16];
	struct rfs fs = { 0 };
	struct xts_ctx *x;
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char *lnk = malloc(NAMES_TARGET_MAX), *linkfull = malloc(NAMES_TARGET_MAX);
	struct rinode *sub;
	struct stat st;
	int pfd, subfd;
	bool lg;

	if (!lnk || !linkfull || xts_ctx_new(&x, be, key) != 0) {
		CHECK(0, "ctx");
		return;
	}
	pfd = open(plain, O_PATH | O_DIRECTORY | O_CLOEXEC);
	subfd = openat(pfd, "sub", O_RDONLY | O_DIRECTORY);
	fs.root_fd = pfd;
	fs.xts = x;
	fs.names = nm;
	fs.idkey = (struct aes_cmac_key *)k;
	fs.mountpoint = "test_rview";
	CHECK(pfd >= 0 && subfd >= 0 && rfs_init(&fs) == 0, "view");
	for (size_t i = 0; i < NFILES; i++) {
		enc_name(nm, zero, files[i].name, stored, full, &lg);
		check_file(&fs, x, k, fs.root, stored, pfd, files[i].name,
			   &files[i], i + 1);
	}
	enc_name(nm, zero, "sub", stored, full, &lg);
	CHECK(rfs_lookup(&fs, fs.root, stored, &sub, &st) == 0 &&
	      S_ISDIR(st.st_mode), "lookup sub");
	CHECK(rfs_open(&fs, sub, O_RDONLY, &(uint64_t){ 0 }, &lg) == -EINVAL,
	      "a directory opens as a file");
	check_sub(&fs, x, nm, k, sub, subfd, lnk, linkfull);
	check_root(&fs, nm, lnk, linkfull);
	rfs_forget(&fs, sub, 1);
	CHECK(itable_count(&fs.inodes) == 0, "%zu inodes left",
	      itable_count(&fs.inodes));
	if (be == &xts_backend_software)
		check_plain_names(&fs);
	rfs_destroy(&fs); /* closes pfd, the root's */
	close(subfd);
	xts_ctx_free(x);
	free(lnk);
	free(linkfull);
}

int main(void)
{
	uint8_t key[64], nkey[64], hkey[32];
	struct names_ctx *nm;
	struct aes_cmac_key idkey;

	rng_seed("test_rview");
	run_seed = rng_next();
	for (int i = 0; i < 64; i++) { /* fixed test keys; halves differ */
		key[i] = (uint8_t)(i * 7 + 1);
		nkey[i] = (uint8_t)(i * 11 + 3);
	}
	for (int i = 0; i < 32; i++)
		hkey[i] = (uint8_t)(i * 13 + 5);
	pbuf = malloc(2 * MIB);
	vbuf = malloc(2 * MIB);
	fbuf = malloc(2 * MIB);
	rbuf = malloc(2 * MIB);
	if (!pbuf || !vbuf || !fbuf || !rbuf || names_ctx_new(&nm, nkey)) {
		printf("test_rview: setup failed\n");
		return 1;
	}
	aes_cmac_setkey(&idkey, hkey);
	make_tree();
	for (size_t i = 0; xts_backends[i]; i++) {
		const struct xts_backend *be = xts_backends[i];
		int before = test_failures;

		if (!be->probe())
			continue;
		check_view(be, key, nm, &idkey);
		printf("%-10s %s\n", be->name, test_failures == before ? "ok" : "FAILED");
	}
	remove_tree();
	names_ctx_free(nm);
	aes_cmac_wipe(&idkey);
	printf("test_rview: %s\n", test_failures ? "FAILED" : "all passed");
	return test_failures ? 1 : 0;
}
