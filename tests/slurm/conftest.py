"""The real single-node Slurm of the end-to-end hook test (tests/kit/slurmkit.py): the tree's
hooks through wrappers, and one private pmcd with the real agent on a sim tree standing for the
node's Lustre client; the config maps the Slurm node name to it.
"""

from __future__ import annotations

import pytest

from kit.hookkit import ensure_user, is_root, world_dir
from kit.privpmcd import PrivatePmcd
from kit.slurmkit import Cluster, install_if_missing, job_users_tree


@pytest.fixture(scope="module")
def cluster():
    if not is_root():
        pytest.skip("the Slurm end-to-end test starts munged, slurmctld and slurmd and submits as another "
                    "user: it needs root (CI runs it as root)")
    install_if_missing()
    pw = ensure_user()
    with world_dir("ljr-slurm-") as base:
        tree = base / "tree"
        client = job_users_tree(tree, pw, version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=7)
        with PrivatePmcd(base / "pmcd", tree) as pmcd:
            c = Cluster(base, pw, tree, pmcd=pmcd)
            c.client = client
            c.write_files()
            c.startup_s = c.teardown_s = float("nan")
            try:
                c.startup_s = c.start()
                yield c
            finally:
                c.teardown_s = c.stop()
                print(f"\nslurm: startup {c.startup_s:.2f} s, teardown {c.teardown_s:.2f} s")
