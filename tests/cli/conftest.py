"""What the CLI tests share: the repository, its test fixtures folder and one `CliRunner` (each file's `ws`
fixture builds its own working folder)."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.conftest import FIXTURES, REPO

__all__ = ["FIXTURES", "REPO", "runner"]

runner = CliRunner()
