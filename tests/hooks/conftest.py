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
