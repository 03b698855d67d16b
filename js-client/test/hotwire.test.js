// The Hotwire Native emulation injected into hotwire-native sessions (js-client/hotwire/hotwire.js),
// run in a fake page against a fake Turbo; `node --test js-client/test/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const source = readFileSync(new URL("../hotwire/hotwire.js", import.meta.url), "utf8");

function makeTarget() {
  const listeners = new Map();
  return {
    addEventListener(type, fn) {
      if (!listeners.has(type)) listeners.set(type, new Set());
      listeners.get(type).add(fn);
    },
    removeEventListener(type, fn) {
      listeners.get(type)?.delete(fn);
    },
    dispatchEvent(event) {
      for (const fn of [...(listeners.get(event.type) ?? [])]) fn(event);
      return true;
    },
  };
}

function makeTurbo() {
  const calls = [];
  const navigator = {
    location: new URL("http://app.test/"),
    restorationIdentifier: "rid-1",
    startVisit: (url, rid, options) => calls.push(["startVisit", String(url), rid, JSON.parse(JSON.stringify(options))]),
    locationWithActionIsSamePage: (url) => String(url).includes("#"),
    view: { scrollToAnchorFromLocation: (url) => calls.push(["scroll", String(url)]) },
  };
  const session = {
    navigator,
    view: { cacheSnapshot: () => calls.push(["cacheSnapshot"]) },
    clearCache: () => calls.push(["clearCache"]),
  };
  return {
    calls,
    Turbo: { navigator, session, registerAdapter: (a) => { session.adapter = a; calls.push(["registerAdapter"]); } },
  };
}

/** Runs hotwire.js in a fake page; returns what it sent and a way to drive it. */
function load({ platform = "ios", readyState = "loading", withTurbo = true, components = ["form"] } = {}) {
  const sent = [];
  const handlers = new Map();
  const timers = [];
  const document = Object.assign(makeTarget(), { readyState, hidden: true, documentElement: { dataset: {} } });
  const window = Object.assign(makeTarget(), {
    location: { href: "http://app.test/" },
    __bridgedInjected: {
      bridge: {
        trigger: (name, params) => sent.push([name, JSON.parse(JSON.stringify(params))]),
        on: (name, fn) => handlers.set(name, fn),
      },
    },
  });
  window.top = window;
  const turbo = makeTurbo();
  if (withTurbo) window.Turbo = turbo.Turbo;
  const context = vm.createContext({
    window, document, URL, Event: class { constructor(type) { this.type = type; } },
    setTimeout: (fn, ms) => { timers.push({ fn, ms }); return timers.length; },
    clearTimeout: (id) => { if (timers[id - 1]) timers[id - 1].fn = null; },
    console, JSON, Date, WeakSet,
  });
  vm.runInContext(source.replace("/*@HOTWIRE_CONFIG@*/ null", JSON.stringify({ platform, components })), context);
  const messages = () => sent.filter(([n]) => n === "hotwire.message").map(([, p]) => p);
  return { sent, handlers, timers, window, document, turbo, messages, emit: (name, params) => handlers.get(name)(params) };
}

test("iOS: handlers and nativeBridge at document start, turboNative at document end", () => {
  const page = load({ platform: "ios" });
  assert.ok(page.window.webkit.messageHandlers.turbo.postMessage);
  assert.ok(page.window.webkit.messageHandlers.bridge.postMessage);
  assert.equal(page.window.nativeBridge.platform, "ios");
  assert.deepEqual(page.sent[0], ["bridge.ready", { location: "http://app.test/" }]);
  assert.deepEqual([...page.window.nativeBridge.supportedComponents], ["form"], "native registers on ready");
  assert.equal(page.window.turboNative, undefined, "not before document end");
  page.document.dispatchEvent({ type: "DOMContentLoaded" });
  assert.ok(page.window.turboNative);
  assert.deepEqual(page.messages().map((m) => m.name), ["turboIsReady", "pageLoaded"]);
  assert.equal(page.messages()[0].data.isReady, true);
  assert.equal(page.messages()[1].data.restorationIdentifier, "rid-1");
  assert.equal(typeof page.messages()[1].data.timestamp, "number");
  assert.equal(page.window.TurboSession, undefined);
});

test("Android: TurboSession and BridgeComponentsNative; turboNative and nativeBridge after load", () => {
  const page = load({ platform: "android" });
  assert.ok(page.window.TurboSession && page.window.BridgeComponentsNative);
  assert.equal(page.window.webkit, undefined);
  assert.equal(page.window.turboNative, undefined);
  page.document.dispatchEvent({ type: "DOMContentLoaded" });
  assert.equal(page.window.turboNative, undefined, "not at DOMContentLoaded");
  page.window.dispatchEvent({ type: "load" });
  assert.ok(page.window.turboNative && page.window.nativeBridge);
  assert.equal(page.window.nativeBridge.platform, "android");
  assert.deepEqual(page.messages().map((m) => m.name), ["turboIsReady", "pageLoaded"]);
  assert.ok(page.sent.some(([n]) => n === "bridge.ready"));
});

for (const platform of ["ios", "android"]) {
  test(`${platform}: the adapter's proposals and visit lifecycle`, () => {
    const page = load({ platform, readyState: "complete" });
    const turboNative = page.window.turboNative;
    assert.equal(page.turbo.Turbo.session.adapter, turboNative);
    turboNative.visitProposedToLocation(new URL("http://app.test/one"), { action: "advance" });
    turboNative.visitProposedToLocation(new URL("http://app.test/#top"), { action: "advance" });
    turboNative.visitProposedToLocation(new URL("http://app.test/"), { action: "replace" });
    const names = page.messages().map((m) => m.name);
    assert.deepEqual(names.slice(2), ["visitProposed", "visitProposalScrollingToAnchor", "visitProposalRefreshingPage"]);
    const proposed = page.messages()[2];
    assert.deepEqual([proposed.data.location, proposed.data.options], ["http://app.test/one", { action: "advance" }]);
    // The refresh visits by itself, with the current restoration identifier.
    assert.deepEqual(page.turbo.calls.find((c) => c[0] === "startVisit").slice(1, 3), ["http://app.test/", "rid-1"]);

    const calls = [];
    const visit = {
      identifier: "v1", location: new URL("http://app.test/one"), restorationIdentifier: "rid-2",
      hasCachedSnapshot: () => false,
      issueRequest: () => calls.push("issueRequest"), changeHistory: () => calls.push("changeHistory"),
      loadCachedSnapshot: () => calls.push("loadCachedSnapshot"), loadResponse: () => calls.push("loadResponse"),
    };
    turboNative.visitStarted(visit);
    turboNative.visitRequestStarted(visit);
    turboNative.visitRequestCompleted(visit);
    turboNative.visitRequestFinished(visit);
    turboNative.visitRendered(visit);
    turboNative.visitCompleted(visit);
    turboNative.visitRequestFailedWithStatusCode(visit, 404);
    turboNative.visitRequestFailedWithStatusCode(visit, 0);
    turboNative.formSubmissionStarted({ location: new URL("http://app.test/f") });
    turboNative.formSubmissionFinished({ location: new URL("http://app.test/f") });
    turboNative.pageInvalidated();
    assert.deepEqual(calls, ["issueRequest", "changeHistory", "loadCachedSnapshot", "loadResponse"]);
    const later = page.messages().slice(5);
    assert.deepEqual(later.map((m) => m.name), [
      "visitStarted", "visitRequestStarted", "visitRequestCompleted", "visitRequestFinished", "visitRendered",
      "visitCompleted", "visitRequestFailed", "visitRequestFailedWithNonHttpStatusCode", "formSubmissionStarted",
      "formSubmissionFinished", "pageInvalidated",
    ]);
    assert.equal(later[0].data.identifier, "v1");
    assert.equal(later[0].data.hasCachedSnapshot, false);
    assert.equal(later[5].data.restorationIdentifier, "rid-2");
    assert.deepEqual([later[6].data.statusCode, later[6].data.location], [404, "http://app.test/one"]);
    assert.equal(later[8].data.location, "http://app.test/f");
    assert.equal(turboNative.linkPrefetchingIsEnabledForLocation(), false);
  });

  test(`${platform}: the daemon's visit, cache and reply events`, () => {
    const page = load({ platform, readyState: "complete" });
    page.emit("hotwire.visit", { location: "http://app.test/two", options: { action: "restore" }, restorationIdentifier: "rid-9" });
    page.emit("hotwire.visit", { location: "http://app.test/#a", options: { action: "advance" }, restorationIdentifier: null });
    page.emit("hotwire.cacheSnapshot", {});
    page.emit("hotwire.clearSnapshotCache", {});
    const visits = page.turbo.calls.filter((c) => c[0] === "startVisit");
    assert.deepEqual(visits[0].slice(1), ["http://app.test/two", "rid-9", { action: "restore" }]);
    assert.deepEqual(visits[1][3], { action: "replace" }, "a same-page visit is forced to replace");
    assert.ok(page.turbo.calls.some((c) => c[0] === "cacheSnapshot"));
    assert.ok(page.turbo.calls.some((c) => c[0] === "clearCache"));

    // Bridge components: the web library sets the adapter on web-bridge:ready.
    const received = [];
    const web = { setAdapter: (a) => (web.adapter = a), adapterDidUpdateSupportedComponents() {}, receive: (m) => received.push(JSON.parse(JSON.stringify(m))) };
    page.window.Strada = { web };
    page.document.dispatchEvent({ type: "web-bridge:ready" });
    assert.equal(web.adapter, page.window.nativeBridge);
    assert.ok(web.adapter.supportsComponent("form") && !web.adapter.supportsComponent("menu"));
    web.adapter.receive({ id: "1", component: "form", event: "connect", data: { metadata: { url: "http://app.test/" } } });
    const message = page.sent.find(([n]) => n === "bridge.message")[1];
    assert.deepEqual(message, {
      id: "1", component: "form", event: "connect", data: { metadata: { url: "http://app.test/" } }, location: "http://app.test/",
    });
    page.emit("bridge.reply", { id: "1", component: "form", event: "connect", data: { ok: true } });
    assert.deepEqual(received, [{ id: "1", component: "form", event: "connect", data: { ok: true } }]);
  });
}

test("no Turbo before the load timeout: turboIsReady(false) then pageLoadFailed", () => {
  for (const [platform, ms] of [["ios", 30000], ["android", 4000]]) {
    const page = load({ platform, readyState: "complete", withTurbo: false });
    const timer = page.timers.find((t) => t.fn);
    assert.equal(timer.ms, ms);
    timer.fn();
    assert.deepEqual(page.messages().map((m) => [m.name, m.data.isReady]), [["turboIsReady", false], ["pageLoadFailed", undefined]]);
  }
});

test("Turbo arriving later sets up on turbo:load", () => {
  const page = load({ platform: "ios", readyState: "complete", withTurbo: false });
  page.window.Turbo = page.turbo.Turbo;
  page.document.dispatchEvent({ type: "turbo:load" });
  assert.deepEqual(page.messages().map((m) => m.name), ["turboIsReady", "pageLoaded"]);
});

test("no page fetches the path configuration or reports one (the daemon fetches pathConfigurationUrl)", async () => {
  const sent = [];
  const fetched = [];
  const fetch = async (url) => {
    fetched.push(url);
    return { ok: true, json: async () => ({ rules: [] }) };
  };
  const document = Object.assign(makeTarget(), { readyState: "complete", hidden: true });
  const window = Object.assign(makeTarget(), {
    location: { href: "http://app.test/" },
    __bridgedInjected: { bridge: { trigger: (n, p) => sent.push([n, JSON.parse(JSON.stringify(p))]), on() {} } },
  });
  window.top = window;
  const context = vm.createContext({ window, document, URL, fetch, setTimeout: () => 0, clearTimeout() {}, console, JSON, Date, WeakSet, Event: class {} });
  // Even a config that names one (an older daemon's) makes the page fetch nothing.
  vm.runInContext(source.replace("/*@HOTWIRE_CONFIG@*/ null", JSON.stringify({ platform: "android", components: [], pathConfigurationUrl: "http://app.test/pc.json" })), context);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(fetched, []);
  assert.deepEqual(sent.filter(([n]) => n === "hotwire.pathConfiguration"), []);
});

test("Android: hotwire.restoreCurrentVisit dispatches native:restore on the document", () => {
  const page = load({ platform: "android", readyState: "complete" });
  const seen = [];
  page.document.addEventListener("native:restore", (event) => seen.push(event.type));
  page.emit("hotwire.restoreCurrentVisit", {});
  assert.deepEqual(seen, ["native:restore"]);
  assert.deepEqual(page.turbo.calls.filter(([name]) => name === "startVisit"), [], "no visit");
});
