// Unit tests of Bridge.reclaim (js-client/bridge.js): a bridge the daemon closed is opened again,
// on the same object, for the web view a new claim names (hotwire-native's kept modal tab on iOS).
// `node --test js-client/test/`.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { createBridge, BridgeError } from "../bridge.js";
import { makeSocketClass, makeTimers, makePage, element, domEvent, helloResult } from "./fakes.js";

const APP = "http://127.0.0.1:8787/app/";
const NEW = Object.freeze({ session: "s-2", webview: "W9", token: "tok9" });

/** An open bridge on a fake page (first web view s-1/W1); `ws()` is the current fake socket. */
function openBridge(options = {}) {
  const WebSocket = makeSocketClass();
  const timers = makeTimers();
  const page = makePage(APP);
  const warnings = [];
  const bridge = createBridge({
    WebSocket,
    url: "ws://127.0.0.1:8787/bridge",
    window: page.window,
    document: page.document,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    random: () => 1,
    console: { warn: (...a) => warnings.push(a.join(" ")), error: (...a) => warnings.push(a.join(" ")) },
    ...options,
  });
  const events = [];
  bridge.on("connection", (p) => events.push(p));
  const ws = () => WebSocket.last;
  if (options.handshake !== false) answerHello(ws());
  return { bridge, WebSocket, timers, page, events, warnings, ws };
}

/** Opens `ws` and answers its hello with `result`; returns the hello frame. */
function answerHello(ws, result = helloResult()) {
  ws.open();
  const hello = ws.sent.find((f) => f.method === "hello");
  ws.receive({ id: hello.id, result });
  return hello;
}

/** The daemon closes the page's web view (e.g. the modal was dismissed) and its connection. */
function closeByDaemon(ws, reason = "closed") {
  ws.receive({ event: "closed", params: { reason } });
  ws.drop(1000);
}

const newHello = (url = APP) => helloResult({ ...NEW, url });

describe("reclaim", () => {
  test("a bridge the daemon closed is reclaimed: the hello carries the new claim and the page's current url", async () => {
    const { bridge, ws, WebSocket, page, events } = openBridge();
    const firstReady = bridge.ready;
    assert.match(page.location.href, /bridge_webview=W1/, "the first claim is in the address bar");
    closeByDaemon(ws());
    assert.equal(bridge.state, "closed");
    // the document lives on (JS state kept) and moves on before the next presentation
    page.history.pushState(null, "", APP + "items/7?tab=2#top");

    assert.equal(bridge.reclaim({ ...NEW, extra: "not sent" }), true);
    assert.equal(bridge.state, "connecting");
    for (const key of ["session", "webview", "token", "pageUrl", "stack", "closeReason"]) {
      assert.equal(bridge[key], null, key);
    }
    assert.notEqual(bridge.ready, firstReady, "a new ready");
    assert.equal(WebSocket.instances.length, 2);
    assert.equal(new URL(ws().url).searchParams.get("session"), "s-2", "the socket is routed to the new session");
    ws().open();
    assert.deepEqual(ws().sent, [{
      id: ws().sent[0].id, method: "hello",
      params: { protocol: 1, role: "page", url: APP + "items/7?tab=2#top", session: "s-2", webview: "W9", token: "tok9" },
    }]);
    ws().receive({ id: ws().sent[0].id, result: newHello(APP + "items/7?tab=2#top") });
    assert.equal(await bridge.ready, bridge);
    assert.equal(bridge.state, "open");
    assert.equal(bridge.webview, "W9");
    assert.equal(bridge.token, "tok9");
    assert.deepEqual(events.at(-1), { state: "open", session: "s-2", webview: "W9", reclaimed: true });
    assert.equal(page.location.href, APP + "items/7?tab=2&bridge_session=s-2&bridge_webview=W9&bridge_token=tok9#top",
      "the new claim replaces the old one in the address bar");
  });

  test("listeners and the back handler registered before the close keep working after the reclaim", async () => {
    const { bridge, ws } = openBridge();
    const got = [];
    bridge.on("hotwire.visit", (p) => got.push(p.n));
    const backs = [];
    bridge.onBack((p) => backs.push(p.placeholder));
    ws().receive({ event: "hotwire.visit", params: { n: 1 } });
    closeByDaemon(ws());
    bridge.reclaim(NEW);
    answerHello(ws(), newHello());
    ws().receive({ event: "hotwire.visit", params: { n: 2 } });
    ws().receive({ event: "back", params: { placeholder: "P3", url: APP } });
    assert.deepEqual(got, [1, 2]);
    assert.deepEqual(backs, ["P3"]);
  });

  test("requests and events made between reclaim() and the hello's answer are sent after it", async () => {
    const { bridge, ws } = openBridge();
    closeByDaemon(ws());
    assert.equal(bridge.reclaim(NEW), true);
    const queued = bridge.request("m.queued", { a: 1 });
    assert.equal(bridge.trigger("ev.queued"), true);
    ws().open();
    assert.deepEqual(ws().sentMethods(), ["hello"]);
    ws().receive({ id: ws().sent[0].id, result: newHello() });
    assert.deepEqual(ws().sentMethods(), ["hello", "m.queued", "event:ev.queued"]);
    assert.deepEqual(ws().sent[1].params, { a: 1 });
    ws().receive({ id: ws().sent[1].id, result: { ok: true } });
    assert.deepEqual(await queued, { ok: true });
  });

  test("a bridge that is not closed is not reclaimed: false, nothing sent, nothing changed", async () => {
    const { bridge, ws, WebSocket, timers } = openBridge();
    const ready = bridge.ready;
    const sent = ws().sent.length;
    assert.equal(bridge.reclaim(NEW), false);
    assert.equal(bridge.state, "open");
    assert.equal(bridge.webview, "W1");
    assert.equal(bridge.ready, ready);
    assert.equal(ws().sent.length, sent);
    assert.equal(WebSocket.instances.length, 1);
    // nor while it reconnects, nor before its first hello
    ws().drop(1006);
    assert.equal(bridge.state, "reconnecting");
    assert.equal(bridge.reclaim(NEW), false);
    assert.equal(timers.pending.length, 1);
    assert.equal(WebSocket.instances.length, 1);
    const fresh = openBridge({ handshake: false });
    assert.equal(fresh.bridge.state, "connecting");
    assert.equal(fresh.bridge.reclaim(NEW), false);
    fresh.ws().open();
    assert.equal(fresh.ws().sent[0].params.session, undefined, "the first hello keeps its own (no) claim");
  });

  test("a bad claim throws invalid-params and changes nothing", async () => {
    const { bridge, ws, WebSocket } = openBridge();
    closeByDaemon(ws());
    const ready = bridge.ready;
    const reason = bridge.closeReason;
    const bad = [
      undefined, null, "s-2", 42, [], {}, [NEW.session, NEW.webview, NEW.token],
      { session: "s-2", webview: "W9" },
      { session: "s-2", webview: "W9", token: "" },
      { session: "", webview: "W9", token: "t" },
      { session: "s-2", webview: 9, token: "t" },
      { session: "s-2", webview: "W9", token: null },
    ];
    for (const claim of bad) {
      assert.throws(() => bridge.reclaim(claim), (e) => e instanceof BridgeError && e.code === "invalid-params",
        JSON.stringify(claim));
    }
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.closeReason, reason);
    assert.equal(bridge.ready, ready);
    assert.equal(WebSocket.instances.length, 1);
    // and an open bridge throws for a bad claim too (checked before the state)
    const other = openBridge();
    assert.throws(() => other.bridge.reclaim({}), { code: "invalid-params" });
  });

  test("a refused hello after a reclaim closes the bridge again: no new session in its place", async () => {
    const { bridge, ws, WebSocket, timers, events, warnings } = openBridge();
    closeByDaemon(ws());
    bridge.reclaim(NEW);
    const queued = bridge.request("m.q");
    const second = ws();
    second.open();
    second.receive({ id: second.sent[0].id, error: { code: "unknown-session", message: "no such session" } });
    await assert.rejects(bridge.ready, { code: "unknown-session" });
    await assert.rejects(queued, (e) => e.code === "closed" && /unknown-session/.test(e.message));
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.closeReason.code, "unknown-session");
    assert.deepEqual(second.closedWith, { code: 1000, reason: "handshake refused" });
    assert.equal(WebSocket.instances.length, 2, "no socket for a new session");
    assert.equal(timers.pending.length, 0);
    assert.deepEqual(events.at(-1), { state: "closed", code: "unknown-session", reason: "no such session" });
    assert.doesNotMatch(warnings.join("\n"), /starting a new session/);
  });

  test("a bridge whose first hello was refused, reclaimed, is not given a new session either", async () => {
    const { bridge, ws, WebSocket } = openBridge({ handshake: false, claim: { session: "s-1", webview: "W1", token: "bad" } });
    ws().open();
    ws().receive({ id: ws().sent[0].id, error: { code: "not-allowed", message: "wrong token" } });
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.reclaim(NEW), true);
    ws().open();
    ws().receive({ id: ws().sent[0].id, error: { code: "unknown-session", message: "gone" } });
    assert.equal(bridge.state, "closed");
    assert.equal(WebSocket.instances.length, 2);
    await assert.rejects(bridge.ready, { code: "unknown-session" });
  });

  test("close() after a reclaim closes as usual; a closed bridge can be reclaimed again", async () => {
    const { bridge, ws, events } = openBridge();
    closeByDaemon(ws());
    bridge.reclaim(NEW);
    const pending = bridge.request("m.x");
    bridge.close();
    assert.equal(bridge.state, "closed");
    assert.deepEqual(ws().closedWith, { code: 1000, reason: "closed by the page" });
    await assert.rejects(bridge.ready, { code: "closed" });
    await assert.rejects(pending, { code: "closed" });
    assert.deepEqual(events.at(-1), { state: "closed", code: "closed", reason: "closed by the page" });
    assert.equal(bridge.reclaim({ session: "s-3", webview: "W10", token: "t10" }), true);
    answerHello(ws(), helloResult({ session: "s-3", webview: "W10", token: "t10" }));
    await bridge.ready;
    assert.equal(bridge.webview, "W10");
    bridge.close();
    assert.equal(bridge.state, "closed");
  });

  test("the page's hooks come back with the reclaim (click interception, pagehide), once each", async () => {
    const { bridge, ws, page } = openBridge();
    const click = () => page.window.dispatch("click", domEvent(element("a", { href: "next.html" }))).defaultPrevented;
    assert.equal(click(), true);
    closeByDaemon(ws());
    assert.equal(page.window.listenerCount("click"), 0);
    assert.equal(page.window.listenerCount("pagehide"), 0);
    bridge.reclaim(NEW);
    answerHello(ws(), newHello());
    assert.equal(page.window.listenerCount("click"), 1);
    assert.equal(page.window.listenerCount("pagehide"), 1);
    assert.equal(click(), true);
    assert.deepEqual(ws().sent.at(-1), { event: "navigate", params: { url: APP + "next.html" } });
    page.window.dispatch("pagehide", { persisted: false });
    assert.equal(bridge.state, "closed");
  });

  test("interceptNavigation: false stays so after a reclaim", async () => {
    const { bridge, ws, page } = openBridge({ interceptNavigation: false });
    closeByDaemon(ws());
    bridge.reclaim(NEW);
    answerHello(ws(), newHello());
    assert.equal(page.window.listenerCount("click"), 0);
    assert.equal(page.window.listenerCount("submit"), 0);
    assert.equal(page.window.listenerCount("pagehide"), 1);
  });

  test("after a reclaim, a drop reconnects to the new web view; the old socket is not heard", async () => {
    const { bridge, ws, timers, WebSocket } = openBridge();
    const old = ws();
    closeByDaemon(old);
    const got = [];
    bridge.on("app.thing", (p) => got.push(p.from));
    bridge.reclaim(NEW);
    answerHello(ws(), newHello());
    old.receive({ event: "app.thing", params: { from: "old" } });
    ws().receive({ event: "app.thing", params: { from: "new" } });
    assert.deepEqual(got, ["new"]);
    ws().drop(1006);
    assert.equal(bridge.state, "reconnecting");
    timers.runNext();
    assert.equal(WebSocket.instances.length, 3);
    ws().open();
    const hello = ws().sent[0].params;
    assert.deepEqual([hello.session, hello.webview, hello.token], ["s-2", "W9", "tok9"]);
  });

  test("reclaim() from a listener of the close keeps its new ready", async () => {
    const { bridge, ws } = openBridge();
    let reclaimed = null;
    bridge.on("connection", (e) => {
      if (e.state === "closed" && reclaimed === null) reclaimed = bridge.reclaim(NEW);
    });
    closeByDaemon(ws());
    assert.equal(reclaimed, true);
    assert.equal(bridge.state, "connecting");
    answerHello(ws(), newHello());
    assert.equal(await bridge.ready, bridge);
  });

  test("a bridge without a WebSocket URL is not reclaimed", () => {
    const page = makePage(APP + "?bridge=ftp://nope");
    const bridge = createBridge({ WebSocket: makeSocketClass(), window: page.window, document: page.document });
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.url, null);
    assert.equal(bridge.reclaim(NEW), false);
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.closeReason.code, "bad-url");
  });
});
