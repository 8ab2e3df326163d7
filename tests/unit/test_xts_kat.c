/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_xts_kat.c - every published vector in xts_vectors.h (IEEE 1619
 * XTS-AES-256, and ciphertext-stealing vectors) through the public API
 * (xts_ctx_new + xts_encrypt_one/xts_decrypt_one) of every core this CPU
 * can run, in both directions, in place and out of place; then each
 * core's own self-test. A core this CPU lacks prints UNAVAILABLE.
 */
#include <errno.h>

#include "testutil.h"
#include "xts.h"
#include "xts_vectors.h"

static void run_core(const struct xts_backend *be)
{
	uint8_t buf[XTS_MAX_UNIT_LEN > 4096 ? 4096 : 4096];
	int before = test_failures;

	for (size_t i = 0; i < XTS_NVECTORS; i++) {
		const struct xts_vector *v = &xts_vectors[i];
		struct xts_ctx *ctx;
		char what[128];

		CHECK(v->len <= sizeof(buf), "vector %s too long", v->name);
		if (v->len > sizeof(buf))
			continue;
		CHECK(xts_ctx_new(&ctx, be, v->key) == 0, "%s: setkey",
		      v->name);
		if (!ctx)
			continue;
		snprintf(what, sizeof(what), "%s %s encrypt", be->name,
			 v->name);
		CHECK(xts_encrypt_one(ctx, buf, v->pt, v->len, v->tweak) == 0,
		      "%s", what);
		test_memeq(what, buf, v->ct, v->len);
		snprintf(what, sizeof(what), "%s %s decrypt in place",
			 be->name, v->name);
		CHECK(xts_decrypt_one(ctx, buf, buf, v->len, v->tweak) == 0,
		      "%s", what);
		test_memeq(what, buf, v->pt, v->len);
		snprintf(what, sizeof(what), "%s %s encrypt in place",
			 be->name, v->name);
		CHECK(xts_encrypt_one(ctx, buf, buf, v->len, v->tweak) == 0,
		      "%s", what);
		test_memeq(what, buf, v->ct, v->len);
		snprintf(what, sizeof(what), "%s %s decrypt", be->name,
			 v->name);
		CHECK(xts_decrypt_one(ctx, buf, v->ct, v->len, v->tweak) == 0,
		      "%s", what);
		test_memeq(what, buf, v->pt, v->len);
		xts_ctx_free(ctx);
	}
	CHECK(xts_selftest(be) == 0, "%s: self-test failed", be->name);
	printf("%-10s %s (%zu vectors)\n", be->name,
	       test_failures == before ? "ok" : "FAILED", XTS_NVECTORS);
}

int main(void)
{
	int ran = 0;

	for (size_t i = 0; xts_backends[i]; i++) {
		if (!xts_backends[i]->probe()) {
			printf("%-10s UNAVAILABLE (needs %s)\n",
			       xts_backends[i]->name, xts_backends[i]->requires);
			continue;
		}
		run_core(xts_backends[i]);
		ran++;
	}
	CHECK(ran >= 1, "no core ran");
	return test_failures ? 1 : 0;
}
