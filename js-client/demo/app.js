// The demo PWA: a single-page app with history.pushState routing, driven the way a hosted PWA
// is expected to drive bridged:
//   - before it changes the DOM to a new state it awaits bridge.pwaNavigate({url});
//   - after every render (also after a back, a POP) it calls bridge.pwaRendered();
//   - it never sends pwa-navigate for a POP or a REPLACE.
// Classic links (to classic.html) are left alone here: bridge.js turns them into `navigate`.
import { createBridge } from "/bridge.js";

const $ = (id) => document.getElementById(id);

// createBridge returns at once (calls are queued until the handshake), so the first render
// does not wait for the daemon. keepClaimInUrl keeps the claim in pushed urls: a reload in any
// state re-claims this web view.
const bridge = createBridge({ keepClaimInUrl: true });

const PRODUCTS = ["Teapot", "Kettle", "Mug"];
let renders = 0;
let navigating = false;

function log(text) {
  const li = document.createElement("li");
  li.textContent = `${new Date().toISOString().slice(11, 23)} ${text}`;
  $("log").prepend(li);
  while ($("log").children.length > 30) $("log").lastChild.remove();
}

function currentView() {
  const params = new URL(location.href).searchParams;
  return { view: params.get("view") || "home", id: params.get("id") };
}

function titleOf({ view, id }) {
  if (view === "product") return `Product: ${PRODUCTS[Number(id)] ?? "?"}`;
  return { home: "Home", products: "Products", about: "About" }[view] ?? "Not found";
}

function render() {
  const state = currentView();
  const main = $("view");
  main.replaceChildren();
  const h1 = document.createElement("h1");
  h1.textContent = titleOf(state);
  main.append(h1);
  if (state.view === "home") {
    main.append(paragraph("Welcome. Each state of this page is one step of its web view's history:"
      + " going to another state stacks a placeholder, going back swaps it away."));
  } else if (state.view === "products") {
    const ul = document.createElement("ul");
    PRODUCTS.forEach((name, i) => {
      const li = document.createElement("li");
      li.append(routeLink(`/app/?view=product&id=${i}`, name, `product-${i}`));
      ul.append(li);
    });
    main.append(ul);
  } else if (state.view === "product") {
    main.append(paragraph(`A fine ${(PRODUCTS[Number(state.id)] ?? "thing").toLowerCase()}.`));
  } else if (state.view === "about") {
    main.append(paragraph("A demo of bridged's js-client. Open the dashboard to watch the stack."));
  }
  document.title = `${titleOf(state)} – demo PWA`;
  renders += 1;
  document.body.dataset.view = state.view + (state.id != null ? `:${state.id}` : "");
  document.body.dataset.renders = String(renders);
}

function paragraph(text) {
  const p = document.createElement("p");
  p.textContent = text;
  return p;
}

function routeLink(href, text, id) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  a.id = id;
  a.dataset.route = "";
  return a;
}

async function rendered(why) {
  try {
    const r = await bridge.pwaRendered();
    log(`pwa-rendered (${why}): ${r.removed ? `foreground removed after ${r.latencyMs} ms` : "no foreground"}`);
  } catch (e) {
    log(`pwa-rendered failed: ${e.code}`);
  }
}

// A PUSH: tell the host first, then change the DOM.
async function go(href) {
  if (navigating) return;
  const url = new URL(href, location.href);
  navigating = true;
  try {
    const title = titleOf({ view: url.searchParams.get("view") || "home", id: url.searchParams.get("id") });
    const r = await bridge.pwaNavigate({ url: url.href, title });
    log(`pwa-navigate: placeholder ${r.placeholder}`);
    showStack();
  } catch (e) {
    log(`pwa-navigate failed (${e.code}); navigating anyway`);
  } finally {
    navigating = false;
  }
  history.pushState({}, "", url.href);
  render();
  await rendered("push");
}

document.addEventListener("click", (event) => {
  const a = event.target.closest?.("a[data-route]");
  if (!a || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  const target = new URL(a.href);
  const here = new URL(location.href);
  if (target.searchParams.get("view") === here.searchParams.get("view")
      && target.searchParams.get("id") === here.searchParams.get("id")) return; // already there
  go(a.href);
});

// A POP (the host's back made bridge.js call history.back(), or the browser's own back):
// render and report, no pwa-navigate.
window.addEventListener("popstate", () => {
  render();
  rendered("pop");
});

// Restored from the back/forward cache: bridge.js re-claims; show the state again.
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  render();
  rendered("pageshow");
});

$("back").addEventListener("click", async () => {
  try {
    const r = await bridge.back();
    log(`back: ${r.action}${r.removed.length ? " " + r.removed.join(",") : ""}`);
  } catch (e) {
    log(`back failed: ${e.code} ${e.message}`);
  }
});

function showConnection(state) {
  $("conn").textContent = state;
  $("conn").dataset.state = state;
}

function showStack() {
  $("stack").textContent = (bridge.stack ?? []).map((i) => i.id).join(" ") || "–";
}

bridge.on("connection", (e) => {
  showConnection(e.state);
  if (e.state === "open") {
    $("session").textContent = e.session;
    $("webview").textContent = e.webview;
    showStack();
  }
  log(`connection: ${e.state}${e.delayMs != null ? ` (retry in ${e.delayMs} ms)` : ""}`);
});
for (const name of ["back", "load", "closed", "navigate.failed"]) {
  bridge.on(name, (params) => log(`event ${name} ${JSON.stringify(params)}`));
}
bridge.ready.catch((e) => log(`bridge unavailable: ${e.code} ${e.message}`));

// For test harnesses and the curious: the bridge and a render counter.
window.demo = { bridge, get renders() { return renders; } };

render();
rendered("initial");
