// The injected client of browser sessions (js-client/inject.js): bridge.js turned into a classic
// script the way the daemon does it, run in a fake page; `node --test js-client/test/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

import { createBridge, installAstroShim } from "../bridge.js";
import { makeSocketClass, makePage } from "./fakes.js";

const here = new URL(".", import.meta.url);
const bridgeSource = readFileSync(new URL("../bridge.js", here), "utf8");
const template = readFileSync(new URL("../inject.js", here), "utf8");

// What InjectedClient.swift does: drop `export `, replace import.meta.url, fill the markers.
function injected(config) {
  const classic = bridgeSource
    .split("\n")
    .map((line) => (line.startsWith("export ") ? line.slice("export ".length) : line).replaceAll("import.meta.url", "__bridgedModuleUrl"))
    .join("\n");
  return template.replace("/*@CONFIG@*/ null", JSON.stringify(config)).replace("/*@BRIDGE_JS@*/", () => classic);
}

test("the injected client claims its web view at once and installs the Astro shim", () => {
  const page = makePage("http://127.0.0.1:9000/app/astro.html");
  const WebSocket = makeSocketClass();
  const window = page.window;
  window.top = window;
  const context = vm.createContext({
    window, document: page.document, location: window.location, history: window.history,
    WebSocket, setTimeout, clearTimeout, console, URL, URLSearchParams,
  });
  context.globalThis = context;
  Object.assign(window, { WebSocket });
  vm.runInContext(injected({
    url: "ws://127.0.0.1:8787/bridge", moduleUrl: "http://127.0.0.1:8787/bridge.js",
    claim: { session: "s-1", webview: "W2", token: "t2" },
  }), context);
  const ws = WebSocket.instances.at(-1);
  assert.equal(ws.url, "ws://127.0.0.1:8787/bridge?session=s-1", "the claimed session is in the url, for proxies");
  ws.open();
  const hello = ws.sent[0];
  assert.equal(hello.method, "hello");
  assert.deepEqual([hello.params.session, hello.params.webview, hello.params.token], ["s-1", "W2", "t2"]);
  assert.equal(hello.params.url, "http://127.0.0.1:9000/app/astro.html");
  assert.ok(window.Astro && window.Astro.__bridgeShim, "the shim is installed");
  assert.ok(window.__bridgedInjected.bridge, "the bridge is left for /bridge.js");
  // Running the script again (a second injection) opens nothing.
  const count = WebSocket.instances.length;
  vm.runInContext(injected({ url: "ws://x/bridge", moduleUrl: "http://x/bridge.js", claim: { session: "s", webview: "W1", token: "t" } }), context);
  assert.equal(WebSocket.instances.length, count);
});

test("an imported bridge.js finds the injected bridge and keeps its shim", () => {
  const injectedBridge = { injected: true };
  const shim = { __bridgeShim: true };
  globalThis.__bridgedInjected = { bridge: injectedBridge };
  try {
    assert.equal(createBridge(), injectedBridge);
    const win = { Astro: shim, __bridgedInjected: globalThis.__bridgedInjected };
    assert.equal(installAstroShim({ window: win }), shim);
  } finally {
    delete globalThis.__bridgedInjected;
  }
});

test("a document without an http(s) origin (about:blank, an error page) gets no client", () => {
  for (const href of ["about:blank", "chrome-error://chromewebdata/"]) {
    const page = makePage(href);
    const WebSocket = makeSocketClass();
    const window = page.window;
    window.top = window;
    const context = vm.createContext({
      window, document: page.document, location: window.location, history: window.history,
      WebSocket, setTimeout, clearTimeout, console, URL, URLSearchParams,
    });
    context.globalThis = context;
    vm.runInContext(injected({
      url: "ws://127.0.0.1:8787/bridge", moduleUrl: "http://127.0.0.1:8787/bridge.js",
      claim: { session: "s-1", webview: "W2", token: "t2" },
    }), context);
    assert.equal(WebSocket.instances.length, 0, href);
    assert.equal(window.__bridgedInjected, undefined, href);
  }
});
