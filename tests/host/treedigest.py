#!/usr/bin/env python3
# The input digest of docs/envelope.md ("Inputs by digest"), written from the
# document alone: sha256 of a file, or of "tether-tree-v1\n" and one record
# per entry below a directory, depth first, names in byte order.  The host
# tests compare `tether check --digest` with it.
#   treedigest.py PATH...   prints "sha256:HEX  PATH" per path
import hashlib
import os
import stat
import sys


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def tree_digest(root):
    h = hashlib.sha256(b"tether-tree-v1\n")

    def walk(d, rel):
        for name in sorted(os.listdir(os.fsencode(d))):
            p = os.path.join(os.fsencode(d), name)
            r = rel + b"/" + name if rel else name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                h.update(b"l " + r + b"\0" + os.readlink(p) + b"\0\n")
            elif stat.S_ISDIR(st.st_mode):
                h.update(b"d " + r + b"\0\n")
                walk(p, r)
            elif stat.S_ISREG(st.st_mode):
                kind = b"x" if st.st_mode & 0o111 else b"f"
                h.update(kind + b" " + r + b"\0" + file_digest(p).encode() + b"\n")
            else:
                raise SystemExit(f"{p!r}: cannot be verified")

    walk(root, b"")
    return h.hexdigest()


for path in sys.argv[1:]:
    d = tree_digest(path) if os.path.isdir(path) else file_digest(path)
    print(f"sha256:{d}  {path}")
