/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kdf.c - Argon2id through libargon2: the RFC 9106 section 5.3
 * known answer (checks the library we link against), our wrapper against
 * the library's own API, the parameter bounds that protect us from
 * hostile headers, calibration honouring fixed values, and the working
 * memory allocator's fallback when memory cannot be locked.
 */
#include <argon2.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdf.h"
#include "testutil.h"

static void rfc9106_vector(void)
{
	/*
	 * RFC 9106, 5.3 (Argon2id): password 32 x 0x01, salt 16 x 0x02,
	 * secret 8 x 0x03, associated data 12 x 0x04, t = 3, m = 32 KiB,
	 * p = 4, version 0x13, 32-byte tag.
	 */
	static const uint8_t want[32] = {
		0x0d, 0x64, 0x0d, 0xf5, 0x8d, 0x78, 0x76, 0x6c,
		0x08, 0xc0, 0x37, 0xa3, 0x4a, 0x8b, 0x53, 0xc9,
		0xd0, 0x1e, 0xf0, 0x45, 0x2d, 0x75, 0xb6, 0x5e,
		0xb5, 0x25, 0x20, 0xe9, 0x6b, 0x01, 0xe6, 0x59,
	};
	uint8_t pwd[32], salt[16], secret[8], ad[12], out[32];
	argon2_context ctx = {
		.out = out, .outlen = 32, .pwd = pwd, .pwdlen = 32,
		.salt = salt, .saltlen = 16, .secret = secret, .secretlen = 8,
		.ad = ad, .adlen = 12, .t_cost = 3, .m_cost = 32, .lanes = 4,
		.threads = 4, .version = ARGON2_VERSION_13,
		.flags = ARGON2_DEFAULT_FLAGS,
	};

	memset(pwd, 1, sizeof(pwd));
	memset(salt, 2, sizeof(salt));
	memset(secret, 3, sizeof(secret));
	memset(ad, 4, sizeof(ad));
	CHECK(argon2id_ctx(&ctx) == ARGON2_OK, "argon2id_ctx failed");
	test_memeq("RFC 9106 5.3 Argon2id tag", out, want, 32);
}

static void wrapper(void)
{
	struct kdf_params p = { .t_cost = 2, .m_cost_kib = 64, .lanes = 2 };
	uint8_t salt[KDF_SALT_SIZE], a[32], b[32];

	for (int i = 0; i < KDF_SALT_SIZE; i++)
		salt[i] = (uint8_t)i;
	CHECK(kdf_derive(a, "password", 8, salt, &p) == 0, "derive");
	CHECK(argon2id_hash_raw(2, 64, 2, "password", 8, salt, KDF_SALT_SIZE,
				b, 32) == ARGON2_OK, "library");
	test_memeq("kdf_derive vs argon2id_hash_raw", a, b, 32);
	CHECK(kdf_derive(b, "passwore", 8, salt, &p) == 0 && memcmp(a, b, 32),
	      "different passphrases give the same key");
	salt[0] ^= 1;
	CHECK(kdf_derive(b, "password", 8, salt, &p) == 0 && memcmp(a, b, 32),
	      "different salts give the same key");
}

static void bounds(void)
{
	static const struct kdf_params bad[] = {
		{ 0, 64, 1 }, { 1001, 64, 1 }, { 1, 7, 1 }, { 1, 127, 16 },
		{ 1, (4u << 20) + 1, 1 }, { 1, 0xffffffff, 1 }, { 1, 64, 0 },
		{ 1, 1024, 17 },
	};
	static const struct kdf_params good[] = {
		{ 1, 8, 1 }, { 1000, 64, 1 }, { 1, 4u << 20, 16 }, { 3, 65536, 4 },
	};
	uint8_t out[32], salt[KDF_SALT_SIZE] = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(kdf_check_params(&bad[i]) == -EINVAL,
		      "accepted t=%u m=%u p=%u", bad[i].t_cost, bad[i].m_cost_kib,
		      bad[i].lanes);
		CHECK(kdf_derive(out, "x", 1, salt, &bad[i]) == -EINVAL,
		      "derived with t=%u m=%u p=%u", bad[i].t_cost,
		      bad[i].m_cost_kib, bad[i].lanes);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(kdf_check_params(&good[i]) == 0, "refused t=%u m=%u p=%u",
		      good[i].t_cost, good[i].m_cost_kib, good[i].lanes);
}

static void calibration(void)
{
	struct kdf_params p = { .t_cost = 4, .m_cost_kib = 256, .lanes = 1 };

	/* both fixed: nothing measured, nothing changed */
	CHECK(kdf_calibrate(&p, 1000) == 0 && p.t_cost == 4 &&
	      p.m_cost_kib == 256 && p.lanes == 1, "fixed values changed");
	/* memory fixed, small target: t chosen, memory kept */
	p = (struct kdf_params){ .m_cost_kib = 1024, .lanes = 1 };
	CHECK(kdf_calibrate(&p, 50) == 0 && p.m_cost_kib == 1024 &&
	      p.t_cost >= 1, "memory-fixed calibration: t=%u m=%u", p.t_cost,
	      p.m_cost_kib);
	/* time fixed: memory chosen, never below the 64 MiB floor */
	p = (struct kdf_params){ .t_cost = 1, .lanes = 1 };
	CHECK(kdf_calibrate(&p, 30) == 0 && p.t_cost == 1 &&
	      p.m_cost_kib >= KDF_M_DEFAULT_MIN, "time-fixed: m=%u",
	      p.m_cost_kib);
	p = (struct kdf_params){ .t_cost = 0, .m_cost_kib = 5, .lanes = 1 };
	CHECK(kdf_calibrate(&p, 100) == -EINVAL, "m=5 KiB accepted");
}

/*
 * With RLIMIT_MEMLOCK at 0 (and, as root, without the CAP_IPC_LOCK that
 * ignores it: run as nobody) the working memory cannot be locked; the
 * derivation must still work, unlocked, and give the same bytes.
 */
static void unlockable_memory(void)
{
	struct kdf_params p = { .t_cost = 1, .m_cost_kib = 1024, .lanes = 1 };
	uint8_t salt[KDF_SALT_SIZE] = { 7 }, want[32];
	int status;
	pid_t pid;

	CHECK(kdf_derive(want, "pw", 2, salt, &p) == 0, "derive");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		uint8_t got[32];
		static uint8_t page[4096];

		if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 ||
		    (geteuid() == 0 && (setgid(65534) || setuid(65534))))
			_exit(2);
		if (mlock(page, sizeof(page)) == 0)
			_exit(3); /* could still lock: the test would prove nothing */
		if (kdf_derive(got, "pw", 2, salt, &p) != 0)
			_exit(4);
		_exit(memcmp(got, want, 32) ? 5 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "unlocked fallback: child status %#x (2 setup, 3 mlock still "
	      "works, 4 derive failed, 5 wrong bytes)", status);
}

int main(void)
{
	rfc9106_vector();
	wrapper();
	unlockable_memory();
	bounds();
	calibration();
	printf("%s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
