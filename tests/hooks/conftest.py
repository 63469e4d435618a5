import pytest

from hookkit import ensure_user, is_root, world_dir

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
