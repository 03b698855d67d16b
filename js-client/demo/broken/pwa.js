// A tiny PWA for `bridged check`'s tests, well-behaved except for the one rule its page's
// <body data-broken="RULE"> names (empty: breaks nothing). It runs inside a browser session,
// whose injected page client it uses (window.__bridgedInjected.bridge).
const broken = document.body.dataset.broken || "";
const bridge = window.__bridgedInjected ? window.__bridgedInjected.bridge : null;
const view = document.getElementById("view");

function stateName() {
  return new URL(location.href).searchParams.get("s") || "home";
}

function render() {
  const s = stateName();
  view.replaceChildren();
  const h1 = document.createElement("h1");
  h1.textContent = s;
  view.append(h1);
  document.title = s;
}

async function rendered() {
  if (bridge) await bridge.pwaRendered();
}

async function go(href) {
  const url = new URL(href, location.href).href;
  if (broken === "push-without-navigate") {
    history.pushState({}, "", url);
    render();
    await rendered();
    return;
  }
  if (broken === "dom-before-reply") {
    const reply = bridge.pwaNavigate({ url });  // not awaited: the DOM changes at once
    history.pushState({}, "", url);
    render();
    await reply;
    await rendered();
    return;
  }
  await bridge.pwaNavigate({ url });
  history.pushState({}, "", url);
  render();
  if (broken === "page-error") console.error("could not load the recommendations of", url);
  if (broken === "render-timeout") return;  // never reports the render
  await rendered();
}

document.addEventListener("click", (event) => {
  const a = event.target.closest("a[data-route]");
  if (!a) return;
  event.preventDefault();
  go(a.href);
});

window.addEventListener("popstate", async () => {
  if (broken === "navigate-on-pop-or-replace") await bridge.pwaNavigate({ url: location.href });
  render();
  if (broken === "no-render-after-back") return;
  await rendered();
});

if (broken === "back-wrong-state" && bridge) {
  // Told to go back, it shows its home state instead of going back one step.
  bridge.onBack(() => {
    history.replaceState({}, "", new URL("?s=home", location.href).href);
    render();
    rendered();
  });
}

render();
rendered();
