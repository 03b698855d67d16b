/// `GET /`: live sessions and their stacks, read from `/api/sessions` once a second.
enum Dashboard {
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>bridged</title>
    <style>
      body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
      h1 { font-size: 1.3em; margin: 0 0 .2em; }
      .muted { color: #777; }
      .session { border: 1px solid #ddd; border-radius: 6px; padding: .6em .8em; margin: .8em 0; }
      .stack { display: flex; flex-wrap: wrap; gap: .4em; margin-top: .4em; }
      .item { border-radius: 4px; padding: .2em .5em; font-family: ui-monospace, monospace; font-size: 12px; }
      .webview { background: #dbeafe; } .placeholder { background: #eee; color: #555; }
      .native { background: #fde68a; } .off { opacity: .55; }
      .fg { color: #b45309; }
      code { font-size: 12px; }
    </style>
    </head>
    <body>
    <h1>bridged</h1>
    <div class="muted">The native side of a hybrid app. Pages connect to <code>/bridge</code>; the page script is
    <a href="/bridge.js"><code>/bridge.js</code></a>; a PWA under test is served at <a href="/app/"><code>/app/</code></a>
    (<code>--static</code>). Health: <a href="/healthz"><code>/healthz</code></a>.</div>
    <h2 style="font-size:1.1em">Sessions <span id="count" class="muted"></span></h2>
    <div id="sessions" class="muted">loading…</div>
    <script>
    function esc(s) { return String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c])); }
    async function refresh() {
      try {
        const r = await fetch("/api/sessions", { cache: "no-store" });
        const { sessions } = await r.json();
        document.getElementById("count").textContent = "(" + sessions.length + ")";
        const root = document.getElementById("sessions");
        if (!sessions.length) { root.textContent = "No sessions yet: open /app/ or connect a page."; return; }
        root.innerHTML = sessions.map(s => {
          const items = s.stack.map(i => {
            const cls = "item " + i.kind + (i.kind === "webview" && !i.connected ? " off" : "");
            const label = i.id + (i.kind === "webview" ? (i.mode === "pwa" ? " (*P)" : " (*C)") : "");
            return '<span class="' + cls + '" title="' + esc(i.url) + '">' + esc(label) + "</span>";
          }).join("");
          const fg = s.foreground ? '<span class="fg"> foreground ' + esc(s.foreground.kind) + " over " +
            esc(s.foreground.webview) + " for " + s.foreground.sinceMs + " ms</span>" : "";
          return '<div class="session"><code>' + esc(s.session) + "</code>" + fg + '<div class="stack">' + items + "</div></div>";
        }).join("");
      } catch (e) {
        document.getElementById("sessions").textContent = "daemon unreachable: " + e;
      }
    }
    refresh();
    setInterval(refresh, 1000);
    </script>
    </body>
    </html>
    """#
}
