"""`GET /metrics`: the Prometheus text format, read by prometheus_client's own parser.

Each test drives the daemon through the protocol and checks that the counters moved by exactly
what was done (docs/METRICS.md lists every metric).
"""

from __future__ import annotations

import json
import threading

import pytest
from prometheus_client.parser import text_string_to_metric_families

import bridged
from conftest import OP_TEXT, Closed, RawWebSocket, client_frame, http_request


def scrape(daemon) -> dict:
    """{(sample name, frozenset(labels)): value} of a scrape, and checks the response."""
    status, headers, body = http_request(daemon, "/metrics")
    assert status == 200, body
    assert headers["content-type"].startswith("text/plain; version=0.0.4"), headers
    samples = {}
    families = {}
    for family in text_string_to_metric_families(body.decode()):
        families[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    samples["__types__"] = families
    return samples


def value(samples, name, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


class Page:
    """A page (the project's client, `bridged.Connection`): each request's whole reply frame."""

    def __init__(self, daemon, **hello):
        self.connection = bridged.Connection(daemon.ws_url, timeout=15)
        self.hello = self.call("hello", {"protocol": 1, "role": "page", **hello})

    def call(self, method, params=None):
        return self.connection.call_frame(method, params or {})

    def close_code(self):
        """Waits until the daemon closes the connection; its close code."""
        return self.connection.wait_closed(timeout=15)

    def close(self):
        self.connection.close()


def test_every_metric_counts_what_happened(daemon_factory):
    d = daemon_factory("--foreground-timeout-ms", "150")
    before = scrape(d)
    types = before["__types__"]
    assert types["bridged_connections"] == "gauge" and types["bridged_sessions"] == "gauge"
    assert types["bridged_render_latency_seconds"] == "histogram"
    for family in ("bridged_navigations", "bridged_backs", "bridged_foreground_removals", "bridged_late_renders",
                   "bridged_send_queue_overflows"):
        assert types[family] == "counter", (family, types)
    assert value(before, "bridged_sessions") == 0

    with bridged.Controller(d.ws_url) as ctl:
        page = Page(d, url="http://127.0.0.1/app/")
        session = page.hello["result"]["session"]
        # A rendered PWA navigation.
        assert "result" in page.call("pwa-navigate", {"url": "http://127.0.0.1/app/#/a"})
        rendered = page.call("pwa-rendered")
        assert rendered["result"]["removed"] is True
        latency_ms = rendered["result"]["latencyMs"]
        # A PWA navigation whose foreground times out, then a late pwa-rendered.
        assert "result" in page.call("pwa-navigate", {"url": "http://127.0.0.1/app/#/b"})
        ctl.wait_event("foreground.removed", session=session, reason="timeout")
        assert page.call("pwa-rendered")["result"]["removed"] is False
        ctl.wait_event("pwa-rendered", session=session, late=True)
        # A swap and a none, from the page and the controller.
        assert page.call("back")["result"]["action"] == "swap"
        # Errors: a controller method from a page, an unknown method from a controller.
        assert page.call("session.list")["error"]["code"] == "not-allowed"
        with pytest.raises(bridged.BridgeError):
            ctl.call("no.such.method")
        both = scrape(d)
        assert value(both, "bridged_connections") == 2  # the controller and the page
        # A classic navigation (single-tab: the page is sent `load` and closed with 1000), then
        # a pop from the controller.
        ctl.call("navigation.navigateToUrl", session=session, url="http://127.0.0.1/app/classic")
        assert ctl.call("navigation.back", session=session)["action"] == "pop"
        assert page.close_code() == 1000
        m = scrape(d)
        page.close()

    assert value(m, "bridged_sessions") == 1
    assert 1 <= value(m, "bridged_connections") <= 2  # the page's socket may still be closing
    assert value(m, "bridged_requests_total", method="hello", code="ok") == 2
    assert value(m, "bridged_requests_total", method="pwa-navigate", code="ok") == 2
    assert value(m, "bridged_requests_total", method="pwa-rendered", code="ok") == 2
    assert value(m, "bridged_requests_total", method="session.list", code="not-allowed") == 1
    assert value(m, "bridged_errors_total", method="session.list", code="not-allowed") == 1
    assert value(m, "bridged_requests_total", method="other", code="unknown-method") == 1
    assert value(m, "bridged_errors_total", method="other", code="unknown-method") == 1
    assert value(m, "bridged_errors_total", method="pwa-navigate", code="conflict") == 0
    assert value(m, "bridged_navigations_total", kind="pwa") == 2
    assert value(m, "bridged_navigations_total", kind="classic") == 1
    assert value(m, "bridged_backs_total", action="swap") == 1
    assert value(m, "bridged_backs_total", action="pop") == 1
    assert value(m, "bridged_backs_total", action="none") == 0
    assert value(m, "bridged_foreground_removals_total", reason="rendered") == 1
    assert value(m, "bridged_foreground_removals_total", reason="timeout") == 1
    # The back-swap's placeholder foreground was closed by the pop (or superseded by the push).
    assert value(m, "bridged_foreground_removals_total", reason="closed") + value(
        m, "bridged_foreground_removals_total", reason="superseded") == 1
    assert value(m, "bridged_late_renders_total") == 1
    assert value(m, "bridged_render_latency_seconds_count") == 1
    assert value(m, "bridged_render_latency_seconds_sum") == pytest.approx(latency_ms / 1000, abs=0.001)
    assert value(m, "bridged_render_latency_seconds_bucket", le="+Inf") == 1
    assert value(m, "bridged_closes_total", code="1000") == 1  # the page sent elsewhere by `load`
    assert value(m, "bridged_send_queue_overflows_total") == 0

    # Counters only grow: a second scrape after the clients left.
    after = scrape(d)
    assert value(after, "bridged_requests_total", method="hello", code="ok") == 2
    assert value(after, "bridged_connections") <= 2


def test_closes_by_code_and_parse_errors(daemon_factory):
    d = daemon_factory("--max-message-bytes", "1024")
    page = Page(d, url="http://127.0.0.1/app/")
    session = page.hello["result"]["session"]
    with bridged.Controller(d.ws_url, subscribe=False) as ctl:
        ctl.call("navigation.navigateToUrl", session=session, url="http://127.0.0.1/x")
        with bridged.Connection(d.ws_url, record=True) as raw:
            raw.send_text("{not json")
            raw.send_text("x" * 2000)
            assert raw.wait_closed(timeout=15) == 1009
            assert [f["error"]["code"] for f in raw.frames] == ["parse-error"]
        ctl.call("session.close", session=session)
        assert page.close_code() == 1000

    m = scrape(d)
    assert value(m, "bridged_closes_total", code="1009") == 1
    # The page sent `load` (single-tab) was closed with 1000 when the controller navigated.
    assert value(m, "bridged_closes_total", code="1000") == 1
    assert value(m, "bridged_errors_total", method="-", code="parse-error") == 1
    assert value(m, "bridged_sessions") == 0


def test_send_queue_overflow_is_counted(daemon_factory):
    d = daemon_factory("--max-send-queue-bytes", str(64 * 1024))
    slow = RawWebSocket.to(d, rcvbuf=4096, timeout=10)
    method = "m" * 500

    def frames(first, count):
        out = bytearray()
        for i in range(first, first + count):
            out += client_frame(OP_TEXT, json.dumps({"id": i, "method": method, "params": {}}).encode())
        return bytes(out)

    done = {}

    def flood():
        try:
            for batch in range(1000):
                slow.sock.sendall(frames(batch * 200, 200))
                if "too slow" in d.stderr():  # the daemon's log line is the event waited for
                    done["overflow"] = True
                    return
        except OSError as e:
            done["error"] = e

    flooder = threading.Thread(target=flood)
    flooder.start()
    flooder.join(120)
    assert done.get("overflow"), done
    with pytest.raises(Closed):
        while True:
            slow.recv_message()
    slow.close()
    m = scrape(d)
    assert value(m, "bridged_send_queue_overflows_total") == 1
    assert value(m, "bridged_closes_total", code="1008") == 1
    assert value(m, "bridged_requests_total", method="other", code="not-ready") >= 1


def test_no_metrics_flag(daemon_factory):
    d = daemon_factory("--no-metrics")
    status, _, _ = http_request(d, "/metrics")
    assert status == 404
