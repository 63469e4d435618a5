from types import SimpleNamespace

import pytest

from kit.hookkit import ensure_user, is_root, world_dir

NEEDS_ROOT = ("the hooks run as root and write as the job user (setuid/setgid, chown): "
              "run the tests as root (CI does)")


@pytest.fixture(scope="session")
def job_user():
    if not is_root():
        pytest.skip(NEEDS_ROOT)
    return ensure_user()


@pytest.fixture
def wdir():
    """A world-traversable scratch directory (pytest's tmp tree is root-only)."""
    with world_dir("ljr-hooks-") as d:
        yield d


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """One compute node's Lustre client: the real agent in a private pmcd, on a sim tree."""
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    tmp = tmp_path_factory.mktemp("hooknode")
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)],
                              seed=5)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        yield SimpleNamespace(client=client, pmcd=pmcd)


@pytest.fixture
def two_hosts(wdir):
    """A PBS job's nodeA (the primary) and nodeB (kit.pbskit.NODES), each a private pmcd with the
    real agent sampling every pbskit.WIDTH s, its unix socket at <where>/<host>/pmcd.socket for
    the hosts' local stores: (where, {host: SimClient}, {host: PrivatePmcd})."""
    from lustre_sim import SimClient
    from kit.pbskit import NODES, WIDTH
    from kit.privpmcd import DEFAULT_ACCESS, PrivatePmcd

    clients, pmcds = {}, {}
    where = wdir / "nodes"
    try:
        for i, n in enumerate(NODES):
            clients[n] = SimClient.create(where / f"tree-{n}", version="2.15.4",
                                          filesystems=[("scratch", 4, 1), ("home", 4, 1)], seed=70 + i)
            pmcds[n] = PrivatePmcd(where / n, where / f"tree-{n}", access=DEFAULT_ACCESS, interval=WIDTH).start()
        yield where, clients, pmcds
    finally:
        for p in pmcds.values():
            p.stop()
