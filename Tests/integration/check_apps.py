"""Small apps that reproduce what `bridged check` got wrong on real apps (issue 22), served by
Python on loopback. `serve()` starts them and returns the server; every app lives under its own
path:

- /ionic/    links the way Ionic draws them: `ion-item href` whose `<a>` is in an open shadow
             root, an `<a>` inside another element's shadow root; a tap pushes a history entry
             (react-router style) without pwa-navigate.
- /nolinks/  a page with nothing to tap.
- /slash/app/  a page served only with its slash (`/slash/app` answers 404).
- /e404/, /e401/  error start pages (with an HTML body, as servers send them).
- /slow/     a button whose fetch takes 3 s before the page changes; a link to a page whose
             server answers after 3 s.
- /hidden/   buttons a user cannot tap: display:none, 0×0, disabled, covered.
- /ext/      a link to another origin (`serve(other=…)` names it), and one inside the app.
- /dead/     a link to a page of the app whose server closes the connection without answering.
- /site/     a classic multi-page site: a home page with 10 links (one target=_blank) to pages
             that link back home.
- /later/    a link whose tap opens a page of the site in a new tab 150 ms later (window.open from
             a timer): the tap's navigation comes after the tap, with nothing in between; and a
             target=_blank link whose window opens a second after the tap (a loaded machine's
             Chromium reports a popup that late).
- /turbo/    a Turbo Drive site (Turbo 7.1.0, put in hotwire_app/vendor by scripts/fetch-turbo.sh):
             a home page with links to nine pages; a tap is a Turbo visit (fetch, pushState,
             render) that never sends pwa-navigate.
- /ua/       a page whose title says whether the user agent is a phone's (`Mobile`, and the
             client hints' `mobile`), and the user agent's last word.
"""
from __future__ import annotations

import http.server
import os
import threading
import time

TURBO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotwire_app", "vendor", "turbo-7.1.0.min.js")
TURBO_PAGES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]

SHADOW_DEFS = """
<script>
customElements.define("ion-item", class extends HTMLElement {
  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = '<style>a{display:block;padding:12px;color:inherit}</style><a part="native"><slot></slot></a>';
    this.addEventListener("click", (e) => {
      e.preventDefault();
      go(this.getAttribute("href"));
    });
  }
  connectedCallback() { this.shadowRoot.querySelector("a").setAttribute("href", this.getAttribute("href")); }
});
customElements.define("my-tabs", class extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: "open" }).innerHTML = '<nav><a href="/ionic/settings/" id="tab-settings">Settings</a></nav>';
    this.shadowRoot.addEventListener("click", (e) => {
      const a = e.composedPath().find((n) => n.localName === "a");
      if (a) { e.preventDefault(); go(a.getAttribute("href")); }
    });
  }
});
// The router: a push for every tap, no pwa-navigate.
function go(href) {
  history.pushState({}, "", href);
  render();
}
function render() {
  const p = location.pathname;
  document.title = p === "/ionic/" ? "Home" : p;
  document.getElementById("view").textContent = "view " + p;
}
addEventListener("popstate", render);
</script>
"""

IONIC = """<!doctype html><html><head><meta charset="utf-8"><title>Home</title>""" + SHADOW_DEFS + """</head>
<body>
<ion-list>
  <ion-item href="/ionic/one/">One</ion-item>
  <ion-item href="/ionic/two/">Two</ion-item>
</ion-list>
<my-tabs></my-tabs>
<div id="view">view /ionic/</div>
<script>render();</script>
</body></html>"""

NOLINKS = """<!doctype html><html><head><title>No links</title></head>
<body><h1>Welcome</h1><p>Nothing to tap here. <a>an anchor without href</a>
<a href="/nolinks/hidden" style="display:none">hidden</a></p></body></html>"""

SLASH = """<!doctype html><html><head><title>Slash app</title></head><body><p>served at /slash/app/ only</p></body></html>"""

ERROR_PAGE = """<!doctype html><html><head><title>{code}</title></head><body><h1>{code}</h1><p>{text}</p></body></html>"""

SLOW = """<!doctype html><html><head><title>Slow</title></head><body>
<button id="load" onclick="load()">Load</button>
<a id="slow-page" href="/slow/page">a page that takes 3 s</a>
<p id="out"></p>
<script>
async function load() {
  const r = await fetch("/slow/api");
  document.getElementById("out").textContent = await r.text();
  document.title = "Loaded";
}
</script></body></html>"""

SLOW_PAGE = """<!doctype html><html><head><title>Slow page</title></head><body><p>finally</p></body></html>"""

HIDDEN = """<!doctype html><html><head><title>Hidden</title>
<style>#cover{position:fixed;left:0;top:300px;width:100%;height:100px;background:#ccc} #under{position:fixed;top:330px;left:10px}</style>
</head><body>
<button id="gone" style="display:none" onclick="document.title='clicked'">gone</button>
<button id="tiny" style="width:0;height:0;padding:0;border:0;overflow:hidden" onclick="document.title='clicked'">tiny</button>
<button id="off" disabled onclick="document.title='clicked'">off</button>
<button id="under" onclick="document.title='clicked'">under</button>
<div id="cover" class="sheet"></div>
<button id="fine" onclick="document.title='clicked'">fine</button>
</body></html>"""

EXT = """<!doctype html><html><head><title>Ext</title></head><body>
<a id="about" href="/ext/about">About</a>
<a id="out" href="{other}/elsewhere">Elsewhere</a>
</body></html>"""

EXT_ABOUT = """<!doctype html><html><head><title>About</title></head><body><a href="/ext/">home</a></body></html>"""

DEAD = """<!doctype html><html><head><title>Dead link</title></head><body><a id="gone" href="/dead/gone">gone</a></body></html>"""

SITE_HOME = """<!doctype html><html><head><title>Site</title></head><body>
{links}
</body></html>"""

LATER = """<!doctype html><html><head><title>Later</title></head><body><h1>Later</h1>
<a id="later" href="/site/p1.html" onclick="event.preventDefault(); setTimeout(() => window.open('/site/p1.html'), 150)">page 1, later</a>
<a id="popup-later" href="/site/p2.html" target="_blank" onclick="event.preventDefault(); setTimeout(() => window.open('/site/p2.html'), 1000)">page 2, a second later</a>
</body></html>"""
SITE_PAGE = """<!doctype html><html><head><title>Page {n}</title></head><body><h1>Page {n}</h1><a href="/site/">home</a></body></html>"""

TURBO_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<script src="/turbo/turbo.js"></script></head><body>
<h1>{title}</h1>
<nav>{links}</nav>
</body></html>"""

UA = """<!doctype html><html><head><title>?</title></head><body>
<script>document.title = (/Mobile/.test(navigator.userAgent) && navigator.userAgentData.mobile ? "mobile " : "desktop ")
  + navigator.userAgent.split(" ").pop();</script></body></html>"""

ELSEWHERE = """<!doctype html><html><head><title>Elsewhere</title></head><body><p>another site</p></body></html>"""


class Handler(http.server.BaseHTTPRequestHandler):
    other = ""

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="text/html; charset=utf-8", headers=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        p = self.path.split("?")[0]
        if p.startswith("/ionic/"):
            return self.send(200, IONIC)
        if p == "/nolinks/":
            return self.send(200, NOLINKS)
        if p == "/slash/app/":
            return self.send(200, SLASH)
        if p == "/slash/app":
            return self.send(404, ERROR_PAGE.format(code=404, text="only /slash/app/ is served"))
        if p == "/e404/":
            return self.send(404, ERROR_PAGE.format(code=404, text="Not Found"))
        if p == "/e401/":
            return self.send(401, ERROR_PAGE.format(code=401, text="Unauthorized"))
        if p == "/slow/":
            return self.send(200, SLOW)
        if p == "/slow/api":
            time.sleep(3)
            return self.send(200, "loaded after 3 s", "text/plain")
        if p == "/slow/page":
            time.sleep(3)
            return self.send(200, SLOW_PAGE)
        if p == "/hidden/":
            return self.send(200, HIDDEN)
        if p == "/ext/":
            return self.send(200, EXT.format(other=self.other))
        if p == "/ext/about":
            return self.send(200, EXT_ABOUT)
        if p == "/dead/":
            return self.send(200, DEAD)
        if p == "/dead/gone":
            # The connection closes without an answer: the browser cannot load the page.
            self.close_connection = True
            return
        if p == "/site/":
            links = "\n".join(
                f'<p><a href="/site/p{n}.html"{" target=_blank" if n == 10 else ""}>page {n}</a></p>' for n in range(1, 11))
            return self.send(200, SITE_HOME.format(links=links))
        if p == "/later/":
            return self.send(200, LATER)
        if p.startswith("/site/p") and p.endswith(".html"):
            return self.send(200, SITE_PAGE.format(n=p[len("/site/p"):-len(".html")]))
        if p == "/turbo/turbo.js":
            with open(TURBO) as f:
                return self.send(200, f.read(), "text/javascript")
        if p == "/turbo/":
            links = " ".join(f'<a href="/turbo/{n}/">{n}</a>' for n in TURBO_PAGES)
            return self.send(200, TURBO_PAGE.format(title="Turbo home", links=links))
        if p.startswith("/turbo/") and p.strip("/").split("/")[-1] in TURBO_PAGES:
            name = p.strip("/").split("/")[-1]
            return self.send(200, TURBO_PAGE.format(title=name, links='<a href="/turbo/">home</a>'))
        if p == "/ua/":
            return self.send(200, UA)
        if p == "/elsewhere":
            return self.send(200, ELSEWHERE)
        return self.send(404, ERROR_PAGE.format(code=404, text="Not Found"))


class Apps:
    def __init__(self, other: str = ""):
        handler = type("H", (Handler,), {"other": other})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def serve(other: str = "") -> Apps:
    return Apps(other)
