"""Native placeholder snapshots of hotwire-native sessions (docs/HOTWIRE.md, "Snapshots"): a
screen a visit covers keeps the browser's picture of it, taken before the visit, so
`placeholder.snapshot` answers with an image; a back shows that picture over the web view until
the restore visit has rendered (its `visitRendered`). Both platforms, on the test app with a
real Turbo."""
import base64
import struct

import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, wait_until
from hotwire_support import PLATFORMS, app_fixture, loaded, paths, rendered, stack_changed, start, tree  # noqa: F401

app = app_fixture()


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's start-of-frame segment."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    i = 2
    while i < len(data):
        assert data[i] == 0xFF, "broken JPEG"
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    raise AssertionError("no frame header")


# Records the overlay bridged puts over the page (its image) and, when it goes, what the page
# shows then; the page's document stays (Turbo visits), so the record survives the visits.
WATCH = """(() => {
  window.__overlays = [];
  new MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) if (n.id === "__bridged_foreground") __overlays.push(["shown", n.style.backgroundImage]);
      for (const n of r.removedNodes) if (n.id === "__bridged_foreground") __overlays.push(["removed", document.title, location.pathname]);
    }
  }).observe(document.documentElement, {childList: true});
  return 1;
})()"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_covered_screen_keeps_its_snapshot_and_back_shows_it_until_rendered(daemon, app, platform):  # noqa: F811
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await stack_changed(c, s, "push")
        await rendered(c, s, "W1", "/one")
        t = await tree(c, s)
        assert paths(t["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/one")]
        placeholder = t["tabs"][0]["stack"][0]["id"]
        snap = await c.request("placeholder.snapshot", {"session": s, "placeholder": placeholder})
        assert snap["mimeType"] == "image/jpeg"
        width, height = jpeg_size(base64.b64decode(snap["data"]))
        viewport = await evaluate(c, s, "W1", "[innerWidth, innerHeight]")
        assert [width, height] == viewport, "a picture of the tab as it was"

        # A modal over the main stack keeps the main stack's pictures.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
        assert (await c.request("placeholder.snapshot", {"session": s, "placeholder": placeholder}))["data"] == snap["data"]
        await c.request("navigation.back", {"session": s})
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == opened["webview"])

        # Back: the picture over the web view, until the restore visit has rendered.
        await evaluate(c, s, "W1", WATCH)
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop" and back["removed"] == [placeholder]
        await rendered(c, s, "W1", "/")
        await wait_until(c, s, "W1", "__overlays.some((o) => o[0] === 'removed')")
        log = await evaluate(c, s, "W1", "__overlays")
        assert [o[0] for o in log] == ["shown", "removed"], log
        assert snap["data"] in log[0][1], "the overlay is the screen's snapshot"
        assert log[1][1:] == ["Home", "/"], "it goes once the restore visit has rendered"
        assert await evaluate(c, s, "W1", "!document.getElementById('__bridged_foreground')") is True
        # Its placeholder went with the back.
        assert await c.error("placeholder.snapshot", {"session": s, "placeholder": placeholder}) == "invalid-params"
        await c.close()

    run(go())
