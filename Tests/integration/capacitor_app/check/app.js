// An Ionic-style Capacitor app in one web view, for `bridged check --profile capacitor`
// (Tests/integration/test_check_capacitor.py). No npm: the runtime is the core-8 stand-in
// (runtime-v8.js, on window.capacitorExports), and the few Ionic elements it uses are small
// custom elements of its own with open shadow roots (ion-item with router-link, ion-tab-button
// with tab, ion-button, ion-menu-button, ion-menu-toggle), so the checker meets what a real
// Ionic build shows it: taps that land in shadow DOM, client-side routes (pushState), a split
// pane at 992 CSS pixels and more, a menu button below.
//
// Routes: / (replaced by /home, as Ionic's redirect), /home, /items, /items/1, /account,
// /settings (the tab without href), /about (a plain button inside a shadow root).
//
// ?mode= picks a fault (none: a healthy app):
//   exit-on-back   the backButton listener calls App.exitApp() even at an inner route
//   stuck-back     the backButton listener ignores the press
//   reject         /items calls Preferences.get({}) (native rejects: no key) without a catch
//   unavailable    /items calls a plugin the device lacks (BarcodeScanner), rejection caught
//   ignore-links   the appUrlOpen listener does nothing with the link
(function () {
  "use strict";
  const { Capacitor, registerPlugin } = window.capacitorExports;
  const mode = new URLSearchParams(location.search).get("mode") || "healthy";
  const App = registerPlugin("App");
  const Preferences = registerPlugin("Preferences");
  const Device = registerPlugin("Device");
  const BarcodeScanner = registerPlugin("BarcodeScanner");

  // --- the router ------------------------------------------------------------------------------
  const routes = {
    "/home": () => `<h2>Home</h2><p>Welcome.</p>
      <ion-item router-link="/items">Browse items</ion-item>
      <ion-button data-go="/account">Your account</ion-button>
      <ion-button data-noop="1">Refresh</ion-button>
      <ion-item href="https://example.com/docs">Docs (another site)</ion-item>
      <x-card></x-card>`,
    "/items": () => `<h2>Items</h2><ion-item router-link="/items/1">Item one</ion-item>`,
    "/items/1": () => `<h2>Item one</h2><p>The first item.</p>`,
    "/account": () => `<h2>Account</h2><p>Signed in.</p>`,
    "/settings": () => `<h2>Settings</h2><p>Nothing to set.</p>`,
    "/about": () => `<h2>About</h2><p>A test app.</p>`,
  };
  function render() {
    const page = routes[location.pathname];
    document.getElementById("content").innerHTML = page ? page() : `<h2>Not found</h2>`;
    document.getElementById("title").textContent = "Check test app " + location.pathname;
    if (location.pathname === "/items") onItems();
  }
  function push(path) {
    closeMenu();
    if (path === location.pathname) return;
    history.pushState({}, "", path);
    render();
  }
  window.addEventListener("popstate", render);

  function onItems() {
    if (mode === "reject") Preferences.get({}); // rejected by native (no key), not handled
    if (mode === "unavailable") BarcodeScanner.scan().catch(() => {}); // not implemented: handled
    // A healthy app handles what a device may refuse.
    Device.getInfo().catch(() => {});
  }

  // --- the menu --------------------------------------------------------------------------------
  const menu = () => document.getElementById("menu");
  const closeMenu = () => menu() && menu().classList.remove("open");
  const menuOpen = () => menu() && menu().classList.contains("open");

  // --- Ionic-like elements (open shadow roots) ---------------------------------------------------
  class Item extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      const href = this.getAttribute("router-link") || this.getAttribute("href");
      root.innerHTML = `<a part="native" href="${href}" style="display:block;padding:10px;color:inherit"><slot></slot></a>`;
      root.querySelector("a").addEventListener("click", (e) => {
        const url = new URL(href, location.href);
        if (url.origin !== location.origin) return; // another site: the web view's own navigation
        e.preventDefault();
        push(url.pathname);
      });
    }
  }
  class Button extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<button style="padding:8px 12px"><slot></slot></button>`;
      root.querySelector("button").addEventListener("click", () => {
        if (this.dataset.go) push(this.dataset.go);
      });
    }
  }
  class TabButton extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<a style="display:block;cursor:pointer"><slot></slot></a>`;
      this.addEventListener("click", () => push("/" + this.getAttribute("tab")));
    }
  }
  class MenuButton extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<button aria-label="menu" style="font-size:20px">&#9776;</button>`;
      root.querySelector("button").addEventListener("click", () => menu().classList.toggle("open"));
    }
  }
  class Card extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<div style="border:1px solid #ccc;padding:8px"><p>More</p><button>About this app</button></div>`;
      root.querySelector("button").addEventListener("click", () => push("/about"));
    }
  }
  customElements.define("ion-item", Item);
  customElements.define("ion-button", Button);
  customElements.define("ion-tab-button", TabButton);
  customElements.define("ion-menu-button", MenuButton);
  customElements.define("ion-menu-toggle", class extends HTMLElement {});
  customElements.define("x-card", Card);

  // --- native ------------------------------------------------------------------------------------
  App.addListener("backButton", ({ canGoBack }) => {
    if (mode === "exit-on-back") return App.exitApp();
    if (mode === "stuck-back") return;
    // As Ionic: an open menu closes first; then the router goes back; at the root the app exits.
    if (menuOpen()) return closeMenu();
    if (canGoBack) history.back();
    else App.exitApp();
  });
  App.addListener("appUrlOpen", ({ url }) => {
    if (mode === "ignore-links") return;
    const path = new URL(url).pathname;
    if (routes[path]) push(path);
  });

  function start() {
    // Ionic's redirect from / to the start route (a replace, as <Redirect>).
    if (!routes[location.pathname]) history.replaceState({}, "", "/home" + location.search);
    render();
    App.getInfo().then(() => {}, () => {});
    Preferences.get({ key: "seen" }).then(() => Preferences.set({ key: "seen", value: "1" })).catch(() => {});
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  void Capacitor;
})();
