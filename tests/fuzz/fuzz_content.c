/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_content.c - fuzz target for file contents read from an untrusted
 * lower file (content.h, FORMAT.md 3.4-3.6): the per-file header
 * (content_read_header(), content_plain_size()), reads of every unit
 * kind (full, ciphertext stealing, short tail with its header slot,
 * holes) and partial writes over what is there, under a fixed test XTS
 * key. The lower file is a memfd.
 *
 * Input: a flags byte, then the payload. Bit 3 of flags: the aligned
 * layout (data offset D 4096, FORMAT 3.4), else the compact one (D 40).
 * Raw (flags bit 0 clear): four control bytes (read offset, read length,
 * write offset, write length; bit 1 of flags: do the write), then the
 * lower file itself. A read succeeds or fails with -EIO, and then only
 * for a short tail; whatever it gives, chunks agree with the whole, and
 * encrypting the plaintext again gives back the stored bytes (holes as
 * zeros, the tail slot's used part). A write that succeeds reads back
 * and leaves the other units alone; one that fails leaves the file as it
 * was.
 * Built (bit 0 set): a 16-bit damage position, an op byte (0: none,
 * 1: cut the lower file there, inside the header too, 2: flip a byte
 * there) and a split byte, then a plaintext, written in two parts into a
 * fresh file. It reads back exactly; after damage, every unit the damage
 * did not reach still reads back exactly.
 */
#include <errno.h>
#include <sys/stat.h>

#include "content.h"
#include "fuzz_common.h"
#include "xts.h"

#define U CONTENT_UNIT
#define H CONTENT_HDR_SIZE
#define DMAX LAYOUT_DOFF_ALIGNED
#define MAXPLAIN (4 * U)
/* room for any plaintext here: a write may grow a file by 2.3 units */
#define BUFMAX (12 * U)

static const uint8_t file_id[16] = "fuzz-content-id";
static uint32_t D = LAYOUT_DOFF_COMPACT; /* this input's data offset */

/* FORMAT 3.4: the plaintext size of a lower file of @lower bytes */
static int64_t ref_plain_size(uint64_t lower)
{
	if (lower == 0)
		return 0;
	if (lower < H)
		return -EIO;
	return lower <= D ? 0 : (int64_t)(lower - D);
}

static struct xts_ctx *xts(void)
{
	static struct xts_ctx *x;
	const struct xts_backend *be;
	uint8_t key[64];

	if (!x) {
		fuzz_key(key, sizeof(key), 3);
		if (xts_choose(NULL, &be) || xts_ctx_new(&x, be, key)) {
			fprintf(stderr, "no XTS context (ulimit -l?)\n");
			exit(2);
		}
	}
	return x;
}

static uint32_t unit_len(uint64_t size, uint64_t u)
{
	if (u * U >= size)
		return 0;
	return size - u * U >= U ? U : (uint32_t)(size - u * U);
}

static uint64_t lower_size(int fd)
{
	struct stat st;

	FUZZ_CHECK(fstat(fd, &st) == 0);
	return (uint64_t)st.st_size;
}

static void lower_bytes(int fd, uint8_t *buf, size_t len)
{
	FUZZ_CHECK(pread(fd, buf, len, 0) == (ssize_t)len);
}

/*
 * Read all @psize bytes into @p; if that fails, check it is for the
 * short tail only (every earlier unit reads) and return -EIO. Also
 * reads the chunk [@off, @off + @len) and compares it with the whole.
 */
static int read_all(int fd, const struct content_hdr *h, uint64_t psize,
		    uint8_t *p, size_t off, size_t len)
{
	static uint8_t chunk[BUFMAX];
	uint64_t last = psize ? (psize - 1) / U : 0;
	uint32_t tail = unit_len(psize, last);
	ssize_t n, want;

	n = content_read(xts(), fd, h, psize, p, psize + U, 0);
	if (n < 0) {
		FUZZ_CHECK(n == -EIO && tail > 0 && tail < 16);
		if (last > 0)
			FUZZ_CHECK(content_read(xts(), fd, h, psize, p,
						last * U, 0) ==
				   (ssize_t)(last * U));
		return -EIO;
	}
	FUZZ_CHECK((uint64_t)n == psize);
	if (len > sizeof(chunk))
		len = sizeof(chunk);
	want = off >= psize ? 0 : (ssize_t)(psize - off < len ? psize - off : len);
	n = content_read(xts(), fd, h, psize, chunk, len, off);
	FUZZ_CHECK(n == want);
	FUZZ_CHECK(!n || !memcmp(chunk, p + off, (size_t)n));
	return 0;
}

/* the plaintext @p of a lower file @lower encrypts back to it */
static void check_reencrypts(const struct content_hdr *h, uint64_t psize,
			     const uint8_t *lower, const uint8_t *p)
{
	static uint8_t c[BUFMAX];
	bool hole[BUFMAX / U];
	uint64_t n = (psize + U - 1) / U;
	uint8_t slot[16];
	uint32_t tail = unit_len(psize, n ? n - 1 : 0);
	bool has_tail = n && tail < 16;

	for (uint64_t u = 0; u < n; u++) {
		uint32_t l = unit_len(psize, u);

		hole[u] = all_zero(lower + D + u * U, l);
		if (hole[u] && l < 16)
			hole[u] = all_zero(lower + CONTENT_SLOT_OFF + l,
					   16 - l);
	}
	memset(slot, 0, sizeof(slot));
	content_encrypt_span(xts(), h->id, psize, 0, n, p, c, slot, hole);
	FUZZ_CHECK(!memcmp(c, lower + D, psize));
	if (has_tail)
		FUZZ_CHECK(!memcmp(slot + tail, lower + CONTENT_SLOT_OFF + tail,
				   16 - tail));
}

static void raw(unsigned flags, const uint8_t *d, size_t size)
{
	static uint8_t p[BUFMAX], p2[BUFMAX], after[DMAX + BUFMAX];
	struct content_hdr h;
	uint64_t psize, wsize;
	size_t roff, rlen, woff, wlen;
	int64_t ps;
	int fd, rc, rd, rd_old;
	ssize_t w;

	if (size < 4 || size - 4 > D + MAXPLAIN)
		return;
	roff = (size_t)d[0] * 67;
	rlen = (size_t)d[1] * 67 + 1;
	woff = (size_t)d[2] * 67;
	wlen = (size_t)d[3] * 37 + 1;
	d += 4;
	size -= 4;

	ps = content_plain_size(D, size);
	FUZZ_CHECK(ps == ref_plain_size(size));
	fd = fuzz_memfd(d, size);
	rc = content_read_header(fd, D, &h);
	if (size == 0) {
		FUZZ_CHECK(rc == -ENODATA);
	} else if (size < H || memcmp(d, "xtsf\1\0\0\0", 8)) {
		FUZZ_CHECK(rc == -EIO);
	} else {
		FUZZ_CHECK(rc == 0 && !memcmp(h.id, d + 8, 16));
	}
	if (rc)
		goto out;
	psize = (uint64_t)ps;
	rd_old = read_all(fd, &h, psize, p, roff, rlen);
	if (rd_old == 0)
		check_reencrypts(&h, psize, d, p);
	if (!(flags & 2))
		goto out;

	/* a partial write over what is there */
	if (woff > psize + U)
		woff = (size_t)psize + U;
	wsize = psize;
	w = content_write(xts(), fd, &h, &wsize, d, wlen < size ? wlen : size,
			  woff, flags & 4 ? CONTENT_HOLES_SEEKABLE : 0);
	wlen = wlen < size ? wlen : size;
	if (w < 0) {
		/* only what cannot be decrypted stops it, and then nothing
		 * has changed */
		FUZZ_CHECK(w == -EIO && wsize == psize);
		FUZZ_CHECK(lower_size(fd) == size);
		lower_bytes(fd, after, size);
		FUZZ_CHECK(!memcmp(after, d, size));
		goto out;
	}
	FUZZ_CHECK((size_t)w == wlen);
	FUZZ_CHECK(wsize == (woff + wlen > psize ? woff + wlen : psize));
	FUZZ_CHECK(lower_size(fd) == D + wsize);
	rd = read_all(fd, &h, wsize, p2, woff, wlen);
	FUZZ_CHECK(rd == 0 || woff + wlen < wsize);
	if (rd == 0) {
		uint64_t old_last = psize ? (psize - 1) / U : 0;

		FUZZ_CHECK(!memcmp(p2 + woff, d, wlen));
		/* zeros between the old end and the write */
		if (woff > psize)
			FUZZ_CHECK(all_zero(p2 + psize, woff - psize));
		/* every other old byte is as it was (if it could be read) */
		for (uint64_t i = 0; i < psize; i++)
			if ((i < woff || i >= woff + wlen) &&
			    (rd_old == 0 || i / U < old_last))
				FUZZ_CHECK(p2[i] == p[i]);
		lower_bytes(fd, after, (size_t)(D + wsize));
		check_reencrypts(&h, wsize, after, p2);
	}
out:
	close(fd);
}

static void built(const uint8_t *d, size_t size)
{
	static uint8_t p[BUFMAX], lower[DMAX + BUFMAX];
	uint8_t hdr[H] = { 'x', 't', 's', 'f', 1 };
	struct content_hdr h;
	uint64_t psize = 0, pos, cut, ps2, split, lsize, last;
	bool tail_reached = false;
	unsigned op;
	int fd, rc, rd;

	if (size < 4 || size - 4 > MAXPLAIN)
		return;
	pos = (uint64_t)d[0] | (uint64_t)d[1] << 8;
	op = d[2] % 3;
	split = d[3];
	d += 4;
	size -= 4;
	split = size ? split * 97 % (size + 1) : 0;

	memcpy(hdr + 8, file_id, 16);
	memcpy(h.id, file_id, 16);
	h.doff = D;
	fd = fuzz_memfd(hdr, H);
	if (split)
		FUZZ_CHECK(content_write(xts(), fd, &h, &psize, d, split, 0,
					 0) == (ssize_t)split);
	if (size > split)
		FUZZ_CHECK(content_write(xts(), fd, &h, &psize, d + split,
					 size - split, split,
					 CONTENT_HOLES_SEEKABLE) ==
			   (ssize_t)(size - split));
	lsize = size ? D + size : H; /* no write: the header alone */
	FUZZ_CHECK(psize == size && lower_size(fd) == lsize);
	FUZZ_CHECK(read_all(fd, &h, psize, p, split, size) == 0);
	FUZZ_CHECK(!memcmp(p, d, size));
	lower_bytes(fd, lower, lsize);
	check_reencrypts(&h, psize, lower, p);

	if (op == 0)
		goto out;
	if (op == 1) {
		/* cut: in the header, or in the data */
		cut = pos % lsize;
		FUZZ_CHECK(ftruncate(fd, (off_t)cut) == 0);
		FUZZ_CHECK(content_plain_size(D, cut) == ref_plain_size(cut));
		rc = content_read_header(fd, D, &h);
		FUZZ_CHECK(rc == (cut == 0 ? -ENODATA : cut < H ? -EIO : 0));
		if (rc)
			goto out;
		ps2 = (uint64_t)ref_plain_size(cut);
		rd = read_all(fd, &h, ps2, p, 0, ps2);
		/* every unit as long as it was is what it was */
		last = ps2 ? (ps2 - 1) / U : 0;
		for (uint64_t u = 0; u * U < ps2; u++) {
			uint32_t l = unit_len(ps2, u);

			if (l != unit_len(size, u))
				continue; /* the new last unit: cut short */
			if (rd == 0 || u < last)
				FUZZ_CHECK(!memcmp(p + u * U, d + u * U, l));
		}
		goto out;
	}
	/* op 2: flip one byte of the lower file */
	pos %= lsize;
	lower[pos] ^= 0x01;
	FUZZ_CHECK(pwrite(fd, lower + pos, 1, (off_t)pos) == 1);
	rc = content_read_header(fd, D, &h);
	if (pos < 8) {
		FUZZ_CHECK(rc == -EIO);
		goto out;
	}
	FUZZ_CHECK(rc == 0);
	rd = read_all(fd, &h, psize, p, 0, 0);
	if (pos < CONTENT_SLOT_OFF)
		goto out; /* a new file id: every unit reads differently */
	last = psize ? (psize - 1) / U : 0;
	for (uint64_t u = 0; u * U < psize; u++) {
		uint32_t l = unit_len(psize, u);
		bool reached;

		if (pos < H) /* the tail slot: only its used part counts */
			reached = u == last && l < 16 &&
				  pos - CONTENT_SLOT_OFF >= l;
		else if (pos < D) /* the aligned layout's hole: ignored */
			reached = false;
		else
			reached = (pos - D) / U == u;
		if (reached) {
			tail_reached = tail_reached || u == last;
			continue;
		}
		if (rd == 0 || u < last)
			FUZZ_CHECK(!memcmp(p + u * U, d + u * U, l));
	}
	/* a read fails for the short tail only, and only if it was hit */
	if (rd)
		FUZZ_CHECK(tail_reached);
out:
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	D = data[0] & 8 ? LAYOUT_DOFF_ALIGNED : LAYOUT_DOFF_COMPACT;
	if (data[0] & 1)
		built(data + 1, size - 1);
	else
		raw(data[0], data + 1, size - 1);
	return 0;
}
