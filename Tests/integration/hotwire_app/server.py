"""A small Hotwire-style web app for the hotwire-native tests, served by Python.

Every page loads a real Turbo (7.1.0 from PyPI, put in vendor/ by scripts/fetch-turbo.sh) and
links to the flows the tests walk: advance, replace, a modal form that redirects, a GET
redirect, a slow page, a 404, a native screen, a page playing a `form` bridge component, a
server-driven back (recede_historical_location); `/path-configuration.json` is its path
configuration. Run alone: `python3 server.py --port 8790`.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
TURBO = os.path.join(HERE, "vendor", "turbo-7.1.0.min.js")

PATH_CONFIGURATION = {
    "settings": {},
    "rules": [
        {"patterns": [".*"], "properties": {"context": "default"}},
        {"patterns": ["/new$", "/edit$"], "properties": {"context": "modal"}},
        {"patterns": ["/numbers$"], "properties": {"view_controller": "numbers", "uri": "hotwire://fragment/numbers"}},
        {"patterns": ["/search"], "properties": {"query_string_presentation": "replace"}},
    ],
}

# Plays @hotwired/hotwire-native-bridge 1.0's web side from its message format: a Bridge with
# setAdapter/receive/send on window.Strada.web, gated on the user agent, and a `form` component
# sending `connect {submitTitle, metadata: {url}}`; the reply's data is written into #reply.
BRIDGE_PAGE_SCRIPT = r"""
(function () {
  if (!/bridge-components: \[.+\]/.test(navigator.userAgent)) return;
  let web = window.Strada && window.Strada.web;
  if (!web) {
    const callbacks = new Map();
    const queue = [];
    let lastId = 0;
    web = {
      adapter: null,
      setAdapter(adapter) {
        this.adapter = adapter;
        document.documentElement.dataset.bridgePlatform = adapter.platform;
        this.adapterDidUpdateSupportedComponents();
        while (queue.length) this.send(queue.shift());
      },
      adapterDidUpdateSupportedComponents() {
        if (this.adapter) document.documentElement.dataset.bridgeComponents = this.adapter.supportedComponents.join(" ");
      },
      supportsComponent(component) { return !!this.adapter && this.adapter.supportsComponent(component); },
      send(message) {
        if (!this.adapter) { queue.push(message); return null; }
        if (!this.supportsComponent(message.component)) return null;
        const id = String(++lastId);
        callbacks.set(id, message.callback);
        this.adapter.receive({ id, component: message.component, event: message.event, data: message.data });
        return id;
      },
      receive(message) {
        const callback = callbacks.get(message.id);
        if (callback) callback(message);
      },
    };
    window.Strada = { web };
    document.dispatchEvent(new Event("web-bridge:ready"));
  }
  const button = document.getElementById("submit");
  web.send({
    component: "form", event: "connect",
    data: { submitTitle: button ? button.textContent : "Submit", metadata: { url: window.location.href } },
    callback: (message) => { document.getElementById("reply").textContent = JSON.stringify(message.data); },
  });
})();
"""


def page(title: str, body: str, status: int = 200) -> tuple[int, str]:
    links = "".join(
        f'<li><a id="{i}" href="{h}"{a}>{t}</a></li>'
        for i, h, a, t in [
            ("to-one", "/one", "", "One"),
            ("to-two-replace", "/two", ' data-turbo-action="replace"', "Two (replace)"),
            ("to-new", "/items/new", "", "New item (modal)"),
            ("to-follow", "/follow", "", "Follow (GET redirect)"),
            ("to-slow", "/slow", "", "Slow"),
            ("to-missing", "/missing", "", "Missing (404)"),
            ("to-numbers", "/numbers", "", "Numbers (native)"),
            ("to-bridge", "/bridge", "", "Bridge component"),
            ("to-other-document", "/plain", ' data-turbo="false"', "Not a Turbo visit"),
            ("to-external", "http://external.invalid/", "", "Another host"),
        ]
    )
    document = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width">
<script src="/vendor/turbo.js"></script>
</head><body>
<h1 id="title">{html.escape(title)}</h1>
{body}
<ul>{links}</ul>
</body></html>"""
    return status, document


# Turbo arriving late, as an app's own bundle may bring it: `module` (a module script, run
# before DOMContentLoaded), `async` (an async script, whenever it arrives) or `after-load` (a
# script added once the document completed: Turbo then never sends the first turbo:load). The
# page records, when Turbo's script has run, whether the native adapter was registered by then
# (window.adapterAtTurboLoad), and links to itself for a Turbo visit (same head: no new script).
def late_page(load: str, step: str) -> tuple[int, str]:
    record = "window.adapterAtTurboLoad = !!(window.Turbo && window.Turbo.session && window.Turbo.session.adapter === window.turboNative && window.turboNative)"
    if load == "module":
        script = f'<script type="module" src="/vendor/turbo.js"></script><script type="module">{record}</script>'
    elif load == "async":
        script = f'<script async src="/vendor/turbo.js" onload="queueMicrotask(() => {{ {record} }})"></script>'
    else:
        script = ("<script>addEventListener('load', () => { const s = document.createElement('script');"
                  f" s.src = '/vendor/turbo.js'; s.onload = () => queueMicrotask(() => {{ {record} }});"
                  " document.head.appendChild(s); });</script>")
    document = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Late {html.escape(step)}</title>
<meta name="viewport" content="width=device-width">
{script}
</head><body>
<h1 id="title">Late {html.escape(step)}</h1>
<a id="to-next" href="/late?load={urllib.parse.quote(load)}&amp;step=2">Next</a>
</body></html>"""
    return 200, document


class Handler(BaseHTTPRequestHandler):
    server_version = "hotwire-app/1"

    def log_message(self, *args):  # quiet
        pass

    def send_text(self, status: int, text: str, content_type: str = "text/html; charset=utf-8", headers=None):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def redirect(self, status: int, location: str):
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        path = url.path
        if path == "/vendor/turbo.js":
            if not os.path.exists(TURBO):
                return self.send_text(404, "run scripts/fetch-turbo.sh", "text/plain")
            with open(TURBO, "rb") as f:
                data = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if path == "/late":
            return self.send_text(*late_page(query.get("load", ["module"])[0], query.get("step", ["1"])[0]))
        if path == "/path-configuration.json":
            return self.send_text(200, json.dumps(PATH_CONFIGURATION), "application/json")
        if path == "/path-configuration-moved":  # a redirect to it (the daemon's fetch follows it)
            return self.redirect(301, "/path-configuration.json")
        if path == "/path-configuration-signed-in.json":  # only with the cookie /?sign-in=1 sets
            if "pc=1" not in (self.headers.get("Cookie") or ""):
                return self.send_text(403, "sign in first", "text/plain")
            return self.send_text(200, json.dumps(PATH_CONFIGURATION), "application/json")
        if path == "/follow":
            return self.redirect(302, "/redirected")
        if path == "/recede":
            return self.redirect(303, "/recede_historical_location")
        if path == "/slow":
            time.sleep(int(query.get("ms", ["300"])[0]) / 1000)
        if path == "/missing":
            return self.send_text(*page("Missing", "<p>not found</p>", 404))
        if path == "/items/new":
            body = (
                '<form id="item-form" method="post" action="/items">'
                '<input id="item-title" name="title" value="Bread">'
                '<button id="submit" type="submit">Save</button></form>'
            )
            return self.send_text(*page("New item", body))
        if path.startswith("/items/"):
            title = query.get("title", ["?"])[0]
            return self.send_text(*page(f"Item {path.rsplit('/', 1)[1]}", f'<p id="item">{html.escape(title)}</p>'))
        if path == "/bridge":
            body = f'<button id="submit">Send</button><pre id="reply"></pre><script>{BRIDGE_PAGE_SCRIPT}</script>'
            return self.send_text(*page("Bridge", body))
        if path in ("/recede_historical_location", "/resume_historical_location", "/refresh_historical_location"):
            return self.send_text(*page("Historical", "<p>Going back…</p>"))
        names = {"/": "Home", "/one": "One", "/two": "Two", "/redirected": "Redirected", "/slow": "Slow",
                 "/numbers": "Numbers", "/plain": "Plain"}
        if path in names:
            cookie = {"Set-Cookie": "pc=1; Path=/; SameSite=Lax"} if "sign-in" in query else None
            return self.send_text(*page(names[path], f'<p id="path">{html.escape(self.path)}</p>'), headers=cookie)
        if path == "/search":
            return self.send_text(*page("Search", f'<p id="path">{html.escape(self.path)}</p>'))
        return self.send_text(*page("Missing", "<p>not found</p>", 404))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        if self.path == "/items":
            title = form.get("title", [""])[0]
            return self.redirect(303, "/items/1?" + urllib.parse.urlencode({"title": title}))
        if self.path == "/items/recede":
            return self.redirect(303, "/recede_historical_location")
        return self.send_text(404, "no", "text/plain")


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A visit Turbo cancelled closes its request early: not an error of the app.
        import sys
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def start(host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Starts the app on a thread; returns the server (call shutdown()) and its base URL."""
    server = Server((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8790)
    args = parser.parse_args()
    server, base = start(port=args.port)
    print(base, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
