"""Project-wide test settings."""
import tempfile

import pytest


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """Build logs and other temporary folders of a test go under its own tmp_path (which pytest
    rotates), never into the machine's /tmp: also in worker processes, which read TMPDIR."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
