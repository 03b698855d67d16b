"""A Hotwire-style app for `bridged check --profile hotwire-native` (Tests/integration/
test_check_hotwire.py), served by Python on loopback with the real Turbo 7.1.0 of the
hotwire-native tests (scripts/fetch-turbo.sh puts it in hotwire_app/vendor).

- /hw/good/   a clean app: advance links, a modal (`/new$`), a native screen (`/numbers$`), a
              page playing the `form` bridge component with its own url. Its good paths pass.
- /hw/bad/    one link per rule of the profile, each breaking exactly that rule:
              #to-missing      a visit the server answers 404 (visit-failed)
              #to-plain        data-turbo="false": a new document, not a Turbo visit (cold-boot-link)
              #to-stale-bridge a bridge message carrying the previous page's url (bridge-message-ignored)
              #to-throws       a page whose script throws (page-error)
              #to-trap         after it, back to the home page moves the page elsewhere with
                               history.replaceState on turbo:load (back-wrong-page)
              #to-stuck        a render paused by turbo:before-render and never resumed (visit-not-rendered)
- /hw/bad/missing  a 404 start page.
- /hw/path-configuration.json  the path configuration (also PATH_CONFIGURATION, for a file).
"""
from __future__ import annotations

import html
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
TURBO = os.path.join(HERE, "hotwire_app", "vendor", "turbo-7.1.0.min.js")
sys.path.insert(0, os.path.join(HERE, "hotwire_app"))
from server import BRIDGE_PAGE_SCRIPT  # noqa: E402  (plays the web side of the `form` component)

PATH_CONFIGURATION = {
    "settings": {},
    "rules": [
        {"patterns": [".*"], "properties": {"context": "default"}},
        {"patterns": ["/new$"], "properties": {"context": "modal"}},
        {"patterns": ["/numbers$"], "properties": {"view_controller": "numbers", "uri": "hotwire://fragment/numbers"}},
    ],
}

GOOD_LINKS = [
    ("to-one", "/hw/good/one", "", "One"),
    ("to-two", "/hw/good/two", "", "Two"),
    ("to-new", "/hw/good/items/new", "", "New item (modal)"),
    ("to-numbers", "/hw/good/numbers", "", "Numbers (native)"),
    ("to-bridge", "/hw/good/bridge", "", "Bridge component"),
]

BAD_LINKS = [
    ("to-missing", "/hw/bad/missing", "", "Missing (404)"),
    ("to-plain", "/hw/bad/plain", ' data-turbo="false"', "Not a Turbo visit"),
    ("to-stale-bridge", "/hw/bad/stale-bridge", "", "Stale bridge message"),
    ("to-throws", "/hw/bad/throws", "", "Throws"),
    ("to-trap", "/hw/bad/trap", "", "Back trap"),
    ("to-stuck", "/hw/bad/stuck", "", "Never renders"),
]

# Installed once per document (head scripts run at the cold boot only): the two app bugs that
# need a listener on the document.
BAD_HEAD_SCRIPT = r"""
if (!window.__badApp) {
  window.__badApp = true;
  // A render paused and never resumed.
  document.addEventListener("turbo:before-render", (event) => {
    if (location.pathname === "/hw/bad/stuck") event.preventDefault();
  });
  // After /hw/bad/trap, the home page moves itself elsewhere once it is shown again.
  document.addEventListener("turbo:load", () => {
    if (location.pathname === "/hw/bad/" && sessionStorage.getItem("trap")) {
      sessionStorage.removeItem("trap");
      history.replaceState(history.state, "", "/hw/bad/elsewhere");
    }
  });
}
"""

# A `form` bridge message sent with the url of the page before (what a component that cached
# its url would send): native ignores it.
STALE_BRIDGE_SCRIPT = BRIDGE_PAGE_SCRIPT.replace("metadata: { url: window.location.href }",
                                                 'metadata: { url: new URL("/hw/bad/", location.href).href }')
assert STALE_BRIDGE_SCRIPT != BRIDGE_PAGE_SCRIPT


def page(title: str, body: str, links, head: str = "") -> str:
    items = "".join(f'<li><a id="{i}" href="{h}"{a}>{t}</a></li>' for i, h, a, t in links)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width">
<script src="/vendor/turbo.js"></script>
{f"<script>{head}</script>" if head else ""}
</head><body>
<h1 id="title">{html.escape(title)}</h1>
{body}
<ul>{items}</ul>
</body></html>"""


# Requests a test waits for: the full request path -> (set when it comes, answered once set).
HITS: dict[str, tuple[threading.Event, threading.Event]] = {}


class Handler(BaseHTTPRequestHandler):
    server_version = "hotwire-check-app/1"

    def log_message(self, *args):
        pass

    def send_text(self, status: int, text: str, content_type: str = "text/html; charset=utf-8"):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        hit = HITS.get(self.path)
        if hit:  # a test waits for this request, then lets it be answered
            hit[0].set()
            hit[1].wait(60)
        path = urllib.parse.urlsplit(self.path).path
        if path == "/vendor/turbo.js":
            if not os.path.exists(TURBO):
                return self.send_text(404, "run scripts/fetch-turbo.sh", "text/plain")
            with open(TURBO, "rb") as f:
                return self.send_text(200, f.read().decode(), "text/javascript")
        if path == "/hw/path-configuration.json":
            return self.send_text(200, json.dumps(PATH_CONFIGURATION), "application/json")
        if path.startswith("/hw/good/"):
            name = path[len("/hw/good/"):]
            body = f'<p id="path">{html.escape(path)}</p>'
            if name == "bridge":
                body = f'<button id="submit">Send</button><pre id="reply"></pre><script>{BRIDGE_PAGE_SCRIPT}</script>'
            titles = {"": "Home", "one": "One", "two": "Two", "items/new": "New item", "numbers": "Numbers", "bridge": "Bridge"}
            if name in titles:
                return self.send_text(200, page(titles[name], body, GOOD_LINKS))
        if path.startswith("/hw/bad/"):
            name = path[len("/hw/bad/"):]
            bodies = {
                "": ("Home", '<p id="path">home</p>'),
                "plain": ("Plain", "<p>a new document</p>"),
                "stale-bridge": ("Stale bridge", f'<button id="submit">Send</button><pre id="reply"></pre><script>{STALE_BRIDGE_SCRIPT}</script>'),
                "throws": ("Throws", '<script>throw new Error("boom on the throws page")</script>'),
                "trap": ("Trap", '<script>sessionStorage.setItem("trap", "1")</script>'),
                "stuck": ("Stuck", "<p>never shown</p>"),
                "elsewhere": ("Elsewhere", "<p>elsewhere</p>"),
            }
            if name in bodies:
                title, body = bodies[name]
                return self.send_text(200, page(title, body, BAD_LINKS, BAD_HEAD_SCRIPT))
            return self.send_text(404, page("Missing", "<p>not found</p>", BAD_LINKS, BAD_HEAD_SCRIPT))
        return self.send_text(404, "not found", "text/plain")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def start(host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, str]:
    """Starts the app on a thread; returns the server (call shutdown()) and its base URL."""
    server = Server((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"
