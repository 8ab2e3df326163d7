/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_volume.c - fuzz target for the volume header parser
 * (vol_from_disk). Built for libFuzzer with clang (-Dfuzz=enabled), and
 * replayed over tests/fuzz/corpus-volume by fuzz_replay.c in every test
 * run, under ASan+UBSan in the sanitizer build.
 *
 * Input: one header copy (the first 4096 bytes, zero-padded), optionally
 * followed by a control byte: if it is odd the CRC is recomputed, so the
 * fuzzer also reaches every check behind the checksum instead of dying
 * at it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"
#include "volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t copy[VOL_COPY_SIZE];
	static struct vol_header h;
	uint32_t crc;

	memset(copy, 0, sizeof(copy));
	memcpy(copy, data, size < sizeof(copy) ? size : sizeof(copy));
	if (size > VOL_COPY_SIZE && (data[VOL_COPY_SIZE] & 1)) {
		crc = crc32c(copy, VOL_CRC_OFF);
		for (int i = 0; i < 4; i++)
			copy[VOL_CRC_OFF + i] = (uint8_t)(crc >> (8 * i));
	}
	if (vol_from_disk(&h, copy) == 0) {
		/* what a parsed header promises */
		if (vol_slot_count(&h) < 1 || h.version < VOL_VERSION_MIN ||
		    h.version > VOL_VERSION)
			__builtin_trap();
		for (int i = 0; i < VOL_MAX_SLOTS; i++)
			if (h.slots[i].active &&
			    kdf_check_params(&h.slots[i].kdf) != 0)
				__builtin_trap();
	}
	return 0;
}
