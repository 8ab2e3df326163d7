#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The known answers of tests/unit/test_xattr.c (and doc/FORMAT.md 6.4),
# computed from the text of FORMAT.md section 6 alone with Python's
# cryptography (AESSIV, RFC 5297, OpenSSL underneath), not from src/.
# Run: python3 tests/tools/xattr-kat.py
import base64

from cryptography.hazmat.primitives.ciphers.aead import AESSIV

K_NAMES = bytes(range(64))  # the names key 00 01 02 .. 3f


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b'=').decode()


def pad(s):  # 4.1 step 1: to a multiple of 16, at least 16
    p = max(16, (len(s) + 15) // 16 * 16)
    return s + b'\0' * (p - len(s))


def stored_name(name):  # 6.2
    for ns in (b'user.', b'trusted.'):
        if name.startswith(ns):
            vc = AESSIV(K_NAMES).encrypt(pad(name[len(ns):]),
                                         [b'xtsfs-xattr-name', ns])
            return ns + b'xtsfs.' + b64url(vc).encode()
    raise ValueError('not user.* or trusted.*')


def stored_value(lower, value):  # 6.3
    return AESSIV(K_NAMES).encrypt(value, [b'xtsfs-xattr-value', lower])


for name, value in ((b'user.test', b'hello world'), (b'trusted.x', b''),
                    (b'user.0123456789abcdefg', b'\0\1\2')):
    lower = stored_name(name)
    print(name.decode(), lower.decode(), stored_value(lower, value).hex())
