"""The command line: subcommands, `serve` as the default, `--help` everywhere."""
from __future__ import annotations

import subprocess

from conftest import bridged_bin, http_request, run_daemon_expect_exit, start_daemon


def run_help(*args: str) -> tuple[int, str]:
    proc = subprocess.run([bridged_bin(), *args], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout.decode(errors="replace")


def test_root_help_lists_serve_as_default():
    code, out = run_help("--help")
    assert code == 0
    assert "SUBCOMMANDS:" in out
    assert "serve (default)" in out


def test_serve_help_lists_the_daemon_flags():
    for argv in (("serve", "--help"), ("help", "serve")):
        code, out = run_help(*argv)
        assert code == 0, argv
        assert "USAGE: bridged serve" in out
        for flag in ("--port", "--static", "--token", "--max-sessions", "--log-level"):
            assert flag in out, (argv, flag)


def test_serve_subcommand_and_bare_flags_start_the_same_daemon(daemon_factory):
    explicit = start_daemon("serve", "--port", "0")
    try:
        status, _, body = http_request(explicit, "/healthz")
        assert status == 200
    finally:
        assert explicit.stop() == 0
    bare = daemon_factory("--max-sessions", "5")
    status, _, _ = http_request(bare, "/healthz")
    assert status == 200


def test_bad_flag_is_refused_with_and_without_serve():
    for prefix in ((), ("serve",)):
        code, _, err = run_daemon_expect_exit(*prefix, "--port", "99999")
        assert code == 64, prefix
        assert "--port must be between 0 and 65535" in err


def test_unknown_subcommand_like_word_is_an_error():
    code, _, err = run_daemon_expect_exit("serv")
    assert code != 0
    assert "serv" in err
