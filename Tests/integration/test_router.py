"""The router over WebSocket: `--config examples/app.yaml`, deep links, router actions, transitions."""
import asyncio
import pathlib

import pytest

from bridgeclient import Conn, controller, ids, page
from conftest import run_daemon_expect_exit

REPO = pathlib.Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "examples" / "app.yaml")


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def routed(daemon_factory):
    return daemon_factory("--config", CONFIG)


def test_resolve_is_a_dry_run(routed):
    async def scenario():
        ctl = await controller(routed.ws_url)
        r = await ctl.request("router.resolve", {"url": "tt://products/42?title=Shoe#tab=reviews"})
        assert r["route"]["name"] == "product"
        assert r["route"]["params"] == {"product_id": "42", "title": "Shoe", "tab": "reviews"}
        assert r["rule"] == "feature-flag-off" and r["screen"]["kind"] == "webview"
        assert r["screen"]["url"].startswith(routed.url + "/app/products/42")
        settings = await ctl.request("router.resolve", {"url": "tt://settings"})
        assert settings["screen"] == {"kind": "native", "screen": "SettingsScreen"} and settings["rule"] == "native-only"
        assert await ctl.error("router.resolve", {"url": "tt://nope"}) == "unknown-route"
        assert await ctl.error("router.resolve", {"url": "ftp://x/y"}) == "unknown-route"
        assert (await ctl.request("session.list"))["sessions"] == []

    run(scenario())


def test_deep_links_and_router_actions(routed):
    async def scenario():
        ws = routed.ws_url
        ctl = await controller(ws)
        p = await page(ws, url=routed.url + "/app/")
        sid = p.hello["session"]
        tree = (await ctl.request("router.get", {"session": sid}))["tree"]
        assert [t["name"] for t in tree["tabs"]] == ["home", "deals", "settings"]
        assert tree["active"] == "tab:home" and ids(tree["tabs"][0]["stack"]) == "W1"

        # A product (flag off: a web view) pushed on the home tab; single-tab mode: the page follows.
        r = await ctl.request("deeplink.open", {"session": sid, "url": "tt://products/42", "context": {"from": "test"}})
        assert r["action"] == "push" and ids(r["stack"]) == "W1 W3"
        assert [(t["type"], t["stack"]) for t in r["transitions"]] == [("push", "tab:home")]
        load = await p.next_event("load")
        assert load["webview"] == "W3" and "/app/products/42" in load["url"]
        changed = await ctl.next_event("stack.changed", where=lambda e: e["cause"] == "deeplink.open")
        assert changed["transitions"] == r["transitions"] and changed["tree"]["active"] == "tab:home"
        opened = await ctl.next_event("webview.open")
        assert opened["webview"] == "W3" and opened["context"] == {"from": "test"}
        # The reply came before the events it caused.
        frames = ctl.frames
        reply_at = next(i for i, f in enumerate(frames) if f.get("result", {}).get("action") == "push")
        assert reply_at < frames.index(next(f for f in frames if f.get("event") == "webview.open"))
        q = await page(ws, url=load["pageUrl"], claim=load)
        assert q.hello["context"] == {"from": "test"}

        # The cart is modal: pushed on the modal stack, which becomes active.
        r = await ctl.request("deeplink.open", {"session": sid, "url": "tt://cart"})
        assert [(t["type"], t.get("stack"), t.get("active")) for t in r["transitions"]] == [
            ("push", "modal", None), ("changeActive", None, "modal")]
        assert ids(r["stack"]) == "N2" and r["tree"]["active"] == "modal"

        # goBack dismisses it.
        r = await ctl.request("router.perform", {"session": sid, "action": "goBack"})
        assert r["action"] == "dismiss" and ids(r["stack"]) == "W1 W3"

        # An external link is never stacked.
        r = await ctl.request("router.perform", {"session": sid, "action": {"type": "navigate", "url": "https://example.org/"}})
        assert r["action"] == "external" and r["transitions"] == []
        ext = await ctl.next_event("external.open")
        assert ext["url"] == "https://example.org/"

        # Tabs: selecting the native settings tab makes its stack active.
        r = await ctl.request("router.selectTab", {"session": sid, "tab": "settings"})
        assert ids(r["stack"]) == "N1" and {"type": "changeActive", "node": "tabs", "active": "tab:settings"} in r["transitions"]
        assert await ctl.error("router.selectTab", {"session": sid, "tab": "nope"}) == "invalid-params"
        r = await ctl.request("router.selectTab", {"session": sid, "tab": "home"})
        assert ids(r["stack"]) == "W1 W3"

        # goBack on the web view stack uses the engine's back: W3 is popped, its page closed.
        r = await ctl.request("router.perform", {"session": sid, "action": "goBack"})
        assert r["action"] == "pop" and r["removed"] == ["W3"] and ids(r["stack"]) == "W1"
        assert (await q.next_event("closed"))["reason"] == "popped"
        assert await q.closed() == 1000
        assert await ctl.error("router.perform", {"session": sid, "action": {"type": "bogus"}}) == "invalid-params"
        assert ids((await ctl.request("session.get", {"session": sid}))["stack"]) == "W1"

    run(scenario())


def test_one_back_whoever_asks(routed):
    """navigation.back and a page's back are router.perform goBack: the drawer closes, a modal
    of one is dismissed, else the back algorithm (docs/ROUTING.md §4, "One back")."""
    async def scenario():
        ws = routed.ws_url
        ctl = await controller(ws)
        p = await page(ws, url=routed.url + "/app/")
        sid = p.hello["session"]
        # The drawer open: a page's back closes it (the stack stays), navigation.back too.
        await ctl.request("router.perform", {"session": sid, "action": "openDrawer"})
        r = await p.request("back")
        assert r["action"] == "drawer" and r["removed"] == [] and ids(r["stack"]) == "W1"
        assert (await ctl.request("router.get", {"session": sid}))["tree"]["drawer"] == "closed"
        await ctl.request("router.perform", {"session": sid, "action": "openDrawer"})
        r = await ctl.request("navigation.back", {"session": sid})
        assert r["action"] == "drawer" and ids(r["stack"]) == "W1"
        # A modal of one (the native cart): navigation.back dismisses it.
        r = await ctl.request("deeplink.open", {"session": sid, "url": "tt://cart"})
        assert r["tree"]["active"] == "modal"
        r = await ctl.request("navigation.back", {"session": sid})
        assert r["action"] == "dismiss" and ids(r["stack"]) == "W1"
        assert (await ctl.request("router.get", {"session": sid}))["tree"]["active"] == "tab:home"
        # A tab's only screen (back_behavior none): nothing.
        r = await p.request("back")
        assert r["action"] == "none" and ids(r["stack"]) == "W1"

    run(scenario())


def test_page_navigation_goes_through_the_router(routed):
    async def scenario():
        ws = routed.ws_url
        ctl = await controller(ws)
        p = await page(ws, url=routed.url + "/app/")
        await p.event("navigate", {"url": "tt://nope"})
        failed = await p.next_event("navigate.failed")
        assert failed["code"] == "unknown-route" and failed["url"] == "tt://nope"
        # A PWA navigation keeps working on the active stack, with transitions.
        r = await p.request("pwa-navigate", {"url": routed.url + "/app/#/a"})
        assert ids(r["stack"]) == "P1 W1"
        changed = await ctl.next_event("stack.changed", where=lambda e: e["cause"] == "pwa-navigate")
        assert changed["transitions"][0]["type"] in ("push", "change")
        # A native screen from a page's own deep link.
        r = await p.request("deeplink.open", {"url": "tt://cart"})
        assert r["stack"][0]["kind"] == "native"

    run(scenario())


def test_bad_configuration_stops_the_daemon(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nweb_base: /app/\nroutes:\n  - name: a\n    template: 'products/:'\n")
    code, out, err = run_daemon_expect_exit("--config", str(bad))
    assert code != 0 and out == ""
    assert "bad.yaml:5" in err and "routes[0].template" in err


def test_router_methods_need_a_configuration(daemon):
    async def scenario():
        ctl = await controller(daemon.ws_url)
        assert await ctl.error("router.resolve", {"url": "tt://x"}) == "unknown-method"

    run(scenario())
