import os

import pytest


@pytest.fixture
def other_user():
    """(the test user's passwd entry, a directory every user may enter) for a test that runs a
    command as another user than root; skipped unless the tests run as root."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run as another user")
    from kit.hookkit import ensure_user, world_dir
    pw = ensure_user()
    with world_dir("ljr-records-") as w:
        yield pw, w
