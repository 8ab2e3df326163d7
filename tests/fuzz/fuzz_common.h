/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_common.h - what the fuzz targets share: the invariant check, the
 * fixed test keys, an independent base64url decoder to compare with, and
 * a memfd holding the input as a file.
 *
 * A target checks what the decoder promises, not only that it returns:
 * a broken promise is reported on stderr and abort()s, which libFuzzer
 * and fuzz_replay.c both report as a crash with the input that caused it.
 */
#ifndef XTSFS_FUZZ_COMMON_H
#define XTSFS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",    \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

/* The fixed public test keys: byte i of key n is 17 * n + 3 * i + 1. */
static inline __attribute__((unused)) void fuzz_key(uint8_t *key, size_t len,
						    unsigned n)
{
	for (size_t i = 0; i < len; i++)
		key[i] = (uint8_t)(17 * n + 3 * i + 1);
}

#ifdef XTSFS_NAMES_H
/* The names key of the names targets (fixed key 1), made once. */
static inline __attribute__((unused)) struct names_ctx *fuzz_names_ctx(void)
{
	static struct names_ctx *c;
	uint8_t key[64];

	if (!c) {
		fuzz_key(key, sizeof(key), 1);
		if (names_ctx_new(&c, key)) {
			fprintf(stderr, "names_ctx_new failed (ulimit -l?)\n");
			exit(2);
		}
	}
	return c;
}
#endif

/* the dirid the names targets use, and one more that must not open them */
static const uint8_t fuzz_dirid[16] __attribute__((unused)) = {
	0x64, 0x69, 0x72, 0x69, 0x64, 0x2d, 0x66, 0x75,
	0x7a, 0x7a, 0x2d, 0x74, 0x65, 0x73, 0x74, 0x31,
};
static const uint8_t fuzz_dirid2[16] __attribute__((unused)) = {
	0x64, 0x69, 0x72, 0x69, 0x64, 0x2d, 0x66, 0x75,
	0x7a, 0x7a, 0x2d, 0x74, 0x65, 0x73, 0x74, 0x32,
};

static inline __attribute__((unused)) bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * A second, bit-by-bit base64url decoder written from RFC 4648 alone,
 * canonical as names_b64_decode() promises to be: no '=', no length
 * 4k + 1, unused trailing bits zero. Return: the number of bytes, or -1
 * if @in is not canonical base64url; writes at most @max bytes.
 */
static inline __attribute__((unused)) long ref_b64_decode(uint8_t *out,
							  size_t max,
							  const char *in,
							  size_t len)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789-_";
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		const char *c = in[i] ? memchr(abc, in[i], 64) : NULL;

		if (!c)
			return -1;
		acc = acc << 6 | (uint32_t)(c - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o < max)
				out[o] = (uint8_t)(acc >> bits);
			o++;
			acc &= (1u << bits) - 1;
		}
	}
	/* leftover bits: fewer than 6 (a whole character is 4k + 1) and 0 */
	if (bits >= 6 || acc != 0)
		return -1;
	return (long)o;
}

/*
 * A memfd holding @len bytes of @data, offset 0. Exits on failure: that
 * is the machine, not the input.
 */
static inline __attribute__((unused)) int fuzz_memfd(const uint8_t *data,
						     size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n <= 0) {
			perror("memfd write");
			exit(2);
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		perror("lseek");
		exit(2);
	}
	return fd;
}

#endif /* XTSFS_FUZZ_COMMON_H */
