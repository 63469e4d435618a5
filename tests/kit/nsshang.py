"""NSS whose group lookups hang, made real for one command at a time.

In a private mount namespace, /etc/nsswitch.conf sends the group lookups /etc/group cannot
answer to hesiod, and hesiod's DNS server is a UDP port that never answers (resolv.conf: one
try of HANG_S seconds), as an LDAP or NIS server gone silent would. Nothing outside the command
sees it. For the tests of every lookup a root hook makes (safeappend's writer, the PBS hooks'
user and group).
"""

from __future__ import annotations

import random
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

HANG_S = 4                       # how long one lookup of a group not in /etc/group takes
UNKNOWN_GROUP = "ljr-nss-hangs"  # not in /etc/group: asked of hesiod, which never answers


class HungGroupLookups:
    def __init__(self, d: Path, addr: str):
        self.d, self.addr = d, addr

    def command(self, argv: Sequence[str]) -> list[str]:
        """argv, run where group lookups hang."""
        return ["/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                'mount --bind "$0" /etc/nsswitch.conf && mount --bind "$1" /etc/resolv.conf && shift && exec "$@"',
                str(self.d / "nsswitch.conf"), str(self.d / "resolv.conf"), *map(str, argv)]

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """env, with hesiod's configuration."""
        return {**env, "HESIOD_CONFIG": str(self.d / "hesiod.conf")}


@contextmanager
def hung_group_lookups(d: Path) -> Iterator[HungGroupLookups]:
    """Files in d for NSS, hesiod and the resolver; a silent DNS server while the block runs."""
    addr = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
    hole = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    hole.bind((addr, 53))
    try:
        (d / "nsswitch.conf").write_text("passwd: files\ngroup: files hesiod\nhosts: files\n")
        (d / "resolv.conf").write_text(f"nameserver {addr}\noptions timeout:{HANG_S} attempts:1\n")
        (d / "hesiod.conf").write_text("lhs=.ns\nrhs=.ljr.invalid\nclasses=IN\n")
        yield HungGroupLookups(d, addr)
    finally:
        hole.close()
