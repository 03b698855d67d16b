"""Pages that stop answering, for `bridged check`'s bounds (test_check_bounded.py), served by
Python on loopback. `serve()` starts them and returns the server; every app lives under its own
path:

- /alert/        a start page that calls alert() once it has loaded (as the Hotwire demo's menu
                 page does when its component connects), with a link to a quiet page.
- /menu/         a home page with twelve links; one of them (/menu/alert) calls alert() on
                 load, the others are quiet pages that link home.
- /busy/         a start page whose script never returns (`while (true) {}`) as it loads.
- /busy-link/    a home page with a link to a page whose script never returns once it has
                 loaded (/busy-link/busy), and one to a quiet page.
- /slow-nav/     a home page with a link whose page the server answers after 3 s, and a form
                 whose submission (GET) the server answers after 3 s.
- /cycle/        a page whose title changes to "Ready" 1.5 s after load (an `expect` that holds
                 only after a while).
- /loop/         a page that loads the next one (`?n=` one more) 100 ms after it has loaded, without
                 end: a navigation loop, each page a new web view.
- /hwdemo/       a Turbo app laid out as the Hotwire Native demo: a home page with fourteen
                 links (Turbo visits), one of them to a menu page whose script calls alert() as
                 it renders, one to a page the server answers after 3 s (Turbo 7.1.0 from
                 hotwire_app/vendor, put there by scripts/fetch-turbo.sh).
"""
from __future__ import annotations

import http.server
import os
import threading
import time

TURBO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotwire_app", "vendor", "turbo-7.1.0.min.js")
HWDEMO_PAGES = ["navigation", "modals", "forms", "bridge", "native", "tabs", "reload", "errors", "search",
                "images", "links", "profile"]

MENU_PAGES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]

ALERT = """<!doctype html><html><head><title>Alert</title></head><body><h1>Alert</h1>
<a id="quiet" href="/alert/quiet">quiet</a>
<script>addEventListener("load", () => setTimeout(() => alert("Welcome to the menu"), 100));</script>
</body></html>"""

QUIET = """<!doctype html><html><head><title>Quiet {name}</title></head><body><h1>Quiet {name}</h1>
<a href="{home}">home</a></body></html>"""

MENU_HOME = """<!doctype html><html><head><title>Menu home</title></head><body><h1>Menu home</h1>
{links}
</body></html>"""

MENU_ALERT = """<!doctype html><html><head><title>Menu</title></head><body><h1>Menu</h1>
<a href="/menu/">home</a>
<script>addEventListener("load", () => setTimeout(() => alert("Menu connected"), 100));</script>
</body></html>"""

BUSY = """<!doctype html><html><head><title>Busy</title></head><body><h1>Busy</h1>
<a href="/busy/other">other</a>
<script>while (true) {}</script>
</body></html>"""

BUSY_HOME = """<!doctype html><html><head><title>Busy home</title></head><body><h1>Busy home</h1>
<p><a id="busy" href="/busy-link/busy">busy</a></p>
<p><a id="quiet" href="/busy-link/quiet">quiet</a></p>
</body></html>"""

BUSY_LATER = """<!doctype html><html><head><title>Busy later</title></head><body><h1>Busy later</h1>
<a href="/busy-link/">home</a>
<script>addEventListener("load", () => setTimeout(() => { while (true) {} }, 0));</script>
</body></html>"""

SLOW_HOME = """<!doctype html><html><head><title>Slow home</title></head><body><h1>Slow home</h1>
<p><a id="slow" href="/slow-nav/page">a page that takes 3 s</a></p>
<p><a id="slow-other" href="http://localhost:{port}/slow-nav/page">the same page on another origin (localhost)</a></p>
<form id="search" action="/slow-nav/results" method="get"><input name="q" id="q" value="shoes"><button id="go">Search</button></form>
</body></html>"""

SLOW_PAGE = """<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1><a href="/slow-nav/">home</a></body></html>"""

CYCLE = """<!doctype html><html><head><title>Starting</title></head><body><h1>Cycle</h1>
<script>addEventListener("load", () => setTimeout(() => { document.title = "Ready"; }, 1500));</script>
</body></html>"""

LOOP = """<!doctype html><html><head><title>Loop {n}</title></head><body><h1>Loop {n}</h1>
<script>addEventListener("load", () => setTimeout(() => {{ location.href = "/loop/?n={next}"; }}, 100));</script>
</body></html>"""

HWDEMO_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<script src="/hwdemo/turbo.js"></script></head><body>
<h1>{title}</h1>
<nav>{links}</nav>
{script}
</body></html>"""

ERROR_PAGE = """<!doctype html><html><head><title>404</title></head><body><h1>Not Found</h1></body></html>"""


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="text/html; charset=utf-8"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        p = self.path.split("?")[0]
        if p == "/alert/":
            return self.send(200, ALERT)
        if p == "/alert/quiet":
            return self.send(200, QUIET.format(name="alert", home="/alert/"))
        if p == "/menu/":
            links = "\n".join(f'<p><a href="/menu/{n}">page {n}</a></p>' for n in MENU_PAGES[:5])
            links += '\n<p><a id="menu" href="/menu/alert">menu</a></p>\n'
            links += "\n".join(f'<p><a href="/menu/{n}">page {n}</a></p>' for n in MENU_PAGES[5:])
            return self.send(200, MENU_HOME.format(links=links))
        if p == "/menu/alert":
            return self.send(200, MENU_ALERT)
        if p.startswith("/menu/") and p[len("/menu/"):] in MENU_PAGES:
            return self.send(200, QUIET.format(name=p[len("/menu/"):], home="/menu/"))
        if p == "/busy/":
            return self.send(200, BUSY)
        if p == "/busy-link/":
            return self.send(200, BUSY_HOME)
        if p == "/busy-link/busy":
            return self.send(200, BUSY_LATER)
        if p == "/busy-link/quiet":
            return self.send(200, QUIET.format(name="busy", home="/busy-link/"))
        if p == "/slow-nav/":
            return self.send(200, SLOW_HOME.replace("{port}", str(self.server.server_address[1])))
        if p == "/slow-nav/page":
            time.sleep(3)
            return self.send(200, SLOW_PAGE.format(title="Slow page"))
        if p == "/slow-nav/results":
            time.sleep(3)
            return self.send(200, SLOW_PAGE.format(title="Results"))
        if p == "/loop/":
            q = self.path.split("?", 1)[1] if "?" in self.path else ""
            n = int(q[2:]) if q.startswith("n=") and q[2:].isdigit() else 0
            return self.send(200, LOOP.format(n=n, next=n + 1))
        if p == "/cycle/":
            return self.send(200, CYCLE)
        if p == "/hwdemo/turbo.js":
            with open(TURBO) as f:
                return self.send(200, f.read(), "text/javascript")
        if p == "/hwdemo/":
            links = " ".join(f'<a id="to-{n}" href="/hwdemo/{n}">{n}</a>' for n in HWDEMO_PAGES)
            links += ' <a id="to-menu" href="/hwdemo/menu">menu</a> <a id="to-slow" href="/hwdemo/slow">slow</a>'
            links += ' <a id="to-slow-cold" data-turbo="false" href="/hwdemo/slow">slow, a new document</a>'
            return self.send(200, HWDEMO_PAGE.format(title="Hotwire demo", links=links, script=""))
        if p == "/hwdemo/menu":
            # The demo's menu component says hello when it connects.
            return self.send(200, HWDEMO_PAGE.format(title="menu", links='<a href="/hwdemo/">home</a>',
                                                     script='<script>setTimeout(() => alert("Menu connected"), 100)</script>'))
        if p == "/hwdemo/slow":
            time.sleep(3)
            return self.send(200, HWDEMO_PAGE.format(title="slow", links='<a href="/hwdemo/">home</a>', script=""))
        if p.startswith("/hwdemo/") and p[len("/hwdemo/"):] in HWDEMO_PAGES:
            name = p[len("/hwdemo/"):]
            return self.send(200, HWDEMO_PAGE.format(title=name, links='<a href="/hwdemo/">home</a>', script=""))
        return self.send(404, ERROR_PAGE)


class Apps:
    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def serve() -> Apps:
    return Apps()


if __name__ == "__main__":
    import sys
    a = serve()
    print(a.url, flush=True)
    try:
        threading.Event().wait(float(sys.argv[1]) if len(sys.argv) > 1 else 3600)
    finally:
        a.stop()
