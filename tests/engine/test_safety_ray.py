"""Ray through the CLI: an unreachable --ray-address fails in seconds with one line before any work; a local
instance is asked for the loopback address, the cores argsim was given, no dashboard, and no worker output."""

from __future__ import annotations

import logging
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def ws(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.chdir(tmp_path)
    shutil.copy(REPO / "examples" / "counter" / "arguments.jsonl", tmp_path / "counter.jsonl")
    return tmp_path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(argv: list[str]):
    start = time.monotonic()
    result = runner.invoke(app, ["--quiet", *argv])
    return result, time.monotonic() - start


def _one_error(result, phrase: str) -> None:
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and phrase in lines[0], result.stderr


RANK = ["rank", "counterargs", "-i", "counter.jsonl", "--out", "r.jsonl"]


def test_a_closed_port_fails_in_seconds(ws):
    result, seconds = _run(["--engine", "ray", "--ray-address", f"127.0.0.1:{_free_port()}", *RANK])
    _one_error(result, "cannot reach the Ray cluster")
    assert seconds < 10 and not (ws / "r.jsonl").exists()


@pytest.mark.slow
def test_a_listener_that_is_not_ray_fails_in_seconds(ws):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:  # accept and answer nonsense: an HTTP server, not a Ray head node
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            try:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        result, seconds = _run(["--engine", "ray", "--ray-address", f"127.0.0.1:{port}", *RANK])
    finally:
        stop.set()
        thread.join()
        server.close()
    _one_error(result, "not a Ray head node")
    assert seconds < 20 and not (ws / "r.jsonl").exists()


def test_a_local_instance_binds_loopback_uses_the_given_cores_and_is_quiet(ws, monkeypatch):
    import ray

    from argsim.engine import ray_engine

    asked = {}

    def fake_init(**kwargs):
        asked.update(kwargs)
        raise RuntimeError("stopped here by the test")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    result, _ = _run(["--engine", "ray", "--threads", "1", *RANK])
    _one_error(result, "cannot start or reach a local Ray instance")
    assert asked["num_cpus"] == 1 and asked["_node_ip_address"] == "127.0.0.1"
    assert asked["include_dashboard"] is False and asked["log_to_driver"] is False
    assert asked["logging_level"] == logging.ERROR
    asked.clear()
    result, _ = _run(["--engine", "ray", *RANK])
    assert asked["num_cpus"] == ray_engine.usable_cores()
