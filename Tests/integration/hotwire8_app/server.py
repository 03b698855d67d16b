"""A Hotwire app the way a Rails importmap app ships: Turbo 8, Stimulus 3 and
@hotwired/hotwire-native-bridge loaded as the page's own ES modules through an import map, and a
`form` bridge component written in the app (a BridgeComponent subclass registered with Stimulus).
For test_hotwire8.py; nothing of bridged is in it.

The libraries are third-party code and are not in the repository: vendor/ (git-ignored) must be
populated by hand (test_hotwire8.py's docstring says how). Layout:

    vendor/turbo.js                    Turbo 8's ES module bundle (turbo-rails' app/assets/javascripts/turbo.js,
                                       or @hotwired/turbo's dist/turbo.es2017-esm.js); its first lines name the version
    vendor/stimulus.js                 Stimulus 3's ES module (stimulus-rails' stimulus.js, or @hotwired/stimulus's
                                       dist/stimulus.js)
    vendor/bridge-<version>/index.js   @hotwired/hotwire-native-bridge: its src/ tree (index.js, bridge.js, ...) or its
                                       dist/hotwire-native-bridge.js renamed index.js; package.json beside it names
                                       the version

The flows are those of hotwire_app (Turbo 7.1): advance, replace, a modal form that redirects,
a GET redirect, a native screen, and the `form` component, which also sits on the modal's form
(as in hotwire-native-demo). Run alone: `python3 server.py --port 8791 --bridge 1.0.0`.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
VENDOR = os.path.join(HERE, "vendor")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hotwire_app"))
import server as hotwire_app  # noqa: E402  (the Turbo 7.1 app: its handler, server and path configuration)

PATH_CONFIGURATION = hotwire_app.PATH_CONFIGURATION


def turbo_version() -> str | None:
    """The version Turbo's bundle names in its header (`Turbo 8.0.21`), or None without one."""
    try:
        with open(os.path.join(VENDOR, "turbo.js"), encoding="utf-8") as f:
            head = f.read(400)
    except OSError:
        return None
    m = re.search(r"Turbo (\d+\.\d+\.\d+\S*)", head)
    return m.group(1) if m else "unknown"


def bridge_versions() -> list[str]:
    """The bridge directories present (`1.0.0`, `1.1`, ...), sorted."""
    if not os.path.isdir(VENDOR):
        return []
    return sorted(d.removeprefix("bridge-") for d in os.listdir(VENDOR)
                  if d.startswith("bridge-") and os.path.exists(os.path.join(VENDOR, d, "index.js")))


def bridge_package_version(bridge: str) -> str:
    try:
        with open(os.path.join(VENDOR, f"bridge-{bridge}", "package.json"), encoding="utf-8") as f:
            return json.load(f).get("version", bridge)
    except (OSError, ValueError):
        return bridge


def bridge_listens_for_restore(bridge: str) -> bool:
    """Whether this bridge's components connect again on `native:restore` (newer than 1.0.0)."""
    for root, _, files in os.walk(os.path.join(VENDOR, f"bridge-{bridge}")):
        for name in files:
            if name.endswith(".js"):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    if "native:restore" in f.read():
                        return True
    return False


def missing() -> str | None:
    """Why the app cannot run (a sentence), or None when vendor/ has everything."""
    if turbo_version() is None:
        return f"{VENDOR}/turbo.js is missing"
    if not turbo_version().startswith("8."):
        return f"{VENDOR}/turbo.js is Turbo {turbo_version()}, not Turbo 8"
    if not os.path.exists(os.path.join(VENDOR, "stimulus.js")):
        return f"{VENDOR}/stimulus.js is missing"
    if not bridge_versions():
        return f"no {VENDOR}/bridge-<version>/index.js"
    return None


# The app's own JavaScript, as app/javascript/ of a Rails app.
APPLICATION_JS = """\
import "@hotwired/turbo"
import { Application } from "@hotwired/stimulus"
import FormController from "controllers/bridge/form_controller"

const application = Application.start()
application.register("bridge--form", FormController)
window.Stimulus = application
"""

# The demo's `form` component: `connect` sends the submit button's title; native's reply is
# written into #reply (the demo's reply clicks submit: a test does that itself).
FORM_CONTROLLER_JS = """\
import { BridgeComponent, BridgeElement } from "@hotwired/hotwire-native-bridge"

export default class extends BridgeComponent {
  static component = "form"
  static targets = ["submit"]

  connect() {
    super.connect()
    const submitButton = new BridgeElement(this.submitTarget)
    this.send("connect", { submitTitle: submitButton.title }, (message) => {
      const reply = document.getElementById("reply")
      if (reply) reply.textContent = JSON.stringify(message.data)
    })
  }
}
"""

LINKS = [
    ("to-one", "/one", "", "One"),
    ("to-two-replace", "/two", ' data-turbo-action="replace"', "Two (replace)"),
    ("to-new", "/items/new", "", "New item (modal)"),
    ("to-follow", "/follow", "", "Follow (GET redirect)"),
    ("to-numbers", "/numbers", "", "Numbers (native)"),
    ("to-bridge", "/bridge", "", "Bridge component"),
]


def page(bridge: str, title: str, body: str, status: int = 200, head: str = "") -> tuple[int, str]:
    importmap = {"imports": {
        "@hotwired/turbo": "/vendor/turbo.js",
        "@hotwired/stimulus": "/vendor/stimulus.js",
        "@hotwired/hotwire-native-bridge": f"/vendor/bridge-{bridge}/index.js",
        "application": "/app/application.js",
        "controllers/bridge/form_controller": "/app/controllers/bridge/form_controller.js",
    }}
    links = "".join(f'<li><a id="{i}" href="{h}"{a}>{t}</a></li>' for i, h, a, t in LINKS)
    document = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width">
<script type="importmap">{json.dumps(importmap)}</script>
<script type="module">import "application"</script>
{head}
</head><body>
<h1 id="title">{html.escape(title)}</h1>
{body}
<ul>{links}</ul>
</body></html>"""
    return status, document


FORM = ('<form id="item-form" method="post" action="/items" data-controller="bridge--form">'
        '<input id="item-title" name="title" value="Bread">'
        '<button id="submit" type="submit" data-bridge--form-target="submit">Save</button></form>')


# Turbo 8's page refreshes: a form that redirects to the page it is on refreshes it by morphing.
MORPH = '<meta name="turbo-refresh-method" content="morph"><meta name="turbo-refresh-scroll" content="preserve">'


class Handler(hotwire_app.Handler):
    server_version = "hotwire8-app/1"
    bridge = "1.0.0"

    def send_file(self, path: str, content_type: str = "text/javascript"):
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        path = url.path
        if path.startswith("/vendor/"):
            # The bridge's src/ imports "./bridge" with no extension, as its bundler resolves.
            local = os.path.normpath(os.path.join(VENDOR, path.removeprefix("/vendor/")))
            if not local.startswith(VENDOR + os.sep):
                return self.send_text(404, "no", "text/plain")
            if not os.path.isfile(local) and os.path.isfile(local + ".js"):
                local += ".js"
            if not os.path.isfile(local):
                return self.send_text(404, "not in vendor/", "text/plain")
            return self.send_file(local)
        if path == "/app/application.js":
            return self.send_text(200, APPLICATION_JS, "text/javascript")
        if path == "/app/controllers/bridge/form_controller.js":
            return self.send_text(200, FORM_CONTROLLER_JS, "text/javascript")
        if path == "/path-configuration.json":
            return self.send_text(200, json.dumps(PATH_CONFIGURATION), "application/json")
        if path == "/follow":
            return self.redirect(302, "/redirected")
        if path == "/items/new":
            return self.send_text(*page(self.bridge, "New item", FORM))
        if path.startswith("/items/"):
            title = query.get("title", ["?"])[0]
            return self.send_text(*page(self.bridge, f"Item {path.rsplit('/', 1)[1]}", f'<p id="item">{html.escape(title)}</p>'))
        if path == "/bridge":
            body = ('<div data-controller="bridge--form"><button id="submit" data-bridge--form-target="submit"'
                    ' data-bridge-title="Send">Send it</button></div><pre id="reply"></pre>')
            return self.send_text(*page(self.bridge, "Bridge", body))
        if path == "/counter":
            body = (f'<p id="count">{self.server.count}</p>'
                    '<form id="add" method="post" action="/counter"><button id="add-one" type="submit">Add</button></form>')
            return self.send_text(*page(self.bridge, "Counter", body, head=MORPH))
        names = {"/": "Home", "/one": "One", "/two": "Two", "/redirected": "Redirected", "/numbers": "Numbers"}
        if path in names:
            return self.send_text(*page(self.bridge, names[path], f'<p id="path">{html.escape(self.path)}</p>'))
        return self.send_text(*page(self.bridge, "Missing", "<p>not found</p>", 404))

    def do_POST(self):
        if self.path == "/counter":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with self.server.lock:
                self.server.count += 1
            return self.redirect(303, "/counter")
        return super().do_POST()


def start(bridge: str, host: str = "127.0.0.1", port: int = 0):
    """Starts the app with bridge `bridge` (a vendor/bridge-<version> directory) on a thread;
    returns the server (call shutdown()) and its base URL."""
    handler = type("Handler", (Handler,), {"bridge": bridge})
    server = hotwire_app.Server((host, port), handler)
    server.daemon_threads = True
    server.count = 0
    server.lock = threading.Lock()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--bridge", default="1.0.0")
    args = parser.parse_args()
    if missing():
        sys.exit(missing())
    server, base = start(args.bridge, port=args.port)
    print(base, f"(Turbo {turbo_version()}, bridge {bridge_package_version(args.bridge)})", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
