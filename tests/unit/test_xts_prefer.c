/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_xts_prefer.c - "auto" and the cores that defer to a later one. The
 * zmm core runs wherever AVX-512 does, but "auto" takes it only where
 * 512-bit vectors cost no clock speed (cpu.h zmm_fast). With the argument
 * "slow" the CPU is made to look like one that downclocks (XTSFS_CPU_MASK
 * hides zmm_fast before the first probe): "auto" must then take the next
 * core that runs (vaes), and a forced zmm must still run. Without it,
 * "auto" takes zmm exactly when this CPU has zmm_fast. Skipped (77) on a
 * CPU that cannot run the zmm core.
 */
#include "cpu.h"
#include "testutil.h"
#include "xts.h"

/* What "auto" should give: the first core that runs and is preferred. */
static const struct xts_backend *expected_auto(void)
{
	for (size_t i = 0; xts_backends[i]; i++)
		if (xts_backends[i]->probe() &&
		    (xts_backends[i] != &xts_backend_zmm ||
		     cpu_features()->zmm_fast))
			return xts_backends[i];
	return NULL;
}

int main(int argc, char **argv)
{
	int slow = argc > 1 && !strcmp(argv[1], "slow");
	const struct xts_backend *be = NULL;

	if (slow)
		setenv("XTSFS_CPU_MASK", "zmm_fast", 1);
	else
		unsetenv("XTSFS_CPU_MASK");
	unsetenv("XTSFS_CIPHER");
	if (!xts_backend_zmm.probe()) {
		printf("zmm UNAVAILABLE (needs %s): skipped\n",
		       xts_backend_zmm.requires);
		return TEST_SKIP;
	}
	CHECK(xts_backends[0] == &xts_backend_zmm, "zmm is not tried first");
	if (slow)
		CHECK(!cpu_features()->zmm_fast, "XTSFS_CPU_MASK=zmm_fast "
		      "ignored");
	CHECK(xts_choose("auto", &be) == 0, "auto failed: %s",
	      xts_choose_error());
	CHECK(be == expected_auto(), "auto took %s", be ? be->name : "none");
	if (slow)
		CHECK(be == &xts_backend_vaes, "auto took %s on a CPU that "
		      "downclocks for zmm, not vaes", be ? be->name : "none");
	printf("auto on this CPU%s: %s\n", slow ? " (zmm made slow)" : "",
	       be ? be->name : "none");
	be = NULL;
	CHECK(xts_choose("zmm", &be) == 0 && be == &xts_backend_zmm,
	      "forced zmm refused: %s", xts_choose_error());
	setenv("XTSFS_CIPHER", "zmm", 1);
	be = NULL;
	CHECK(xts_choose(NULL, &be) == 0 && be == &xts_backend_zmm,
	      "XTSFS_CIPHER=zmm refused: %s", xts_choose_error());
	unsetenv("XTSFS_CIPHER");
	printf("%s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
