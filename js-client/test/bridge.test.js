// Unit tests of js-client/bridge.js with a fake socket and a fake page: `node --test js-client/test/`.
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  Bridge, BridgeError, connect, createBridge, installAstroShim,
  stripClaim, addClaim, claimFromUrl, resolveBridgeUrl, sessionSocketUrl, CLAIM_PARAMS,
} from "../bridge.js";
import { makeSocketClass, makeTimers, makePage, makeStorage, element, domEvent, helloResult } from "./fakes.js";

const APP = "http://127.0.0.1:8787/app/";
const quiet = { warn() {}, error() {} };

/** A bridge on a fake page; `ws()` is the current fake socket. */
function setup({ href = APP, options = {} } = {}) {
  const WebSocket = makeSocketClass();
  const timers = makeTimers();
  const page = makePage(href);
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
  return { bridge, WebSocket, timers, page, events, warnings, ws: () => WebSocket.last };
}

/** Opens the current socket and answers its hello; returns the hello frame. */
function handshake(ws, result = helloResult()) {
  ws.open();
  const hello = ws.sent[ws.sent.length - 1];
  assert.equal(hello.method, "hello");
  ws.receive({ id: hello.id, result });
  return hello;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("handshake", () => {
  test("hello is the first frame; a page without a claim asks for a new session", async () => {
    const { bridge, ws, page } = setup({ href: APP + "?lang=en#top" });
    ws().open();
    assert.deepEqual(ws().sent, [
      { id: 1, method: "hello", params: { protocol: 1, role: "page", url: APP + "?lang=en#top" } },
    ]);
    ws().receive({ id: 1, result: helloResult({ url: APP + "?lang=en#top" }) });
    const b = await bridge.ready;
    assert.equal(b, bridge);
    assert.equal(bridge.state, "open");
    assert.equal(bridge.session, "s-1");
    assert.equal(bridge.webview, "W1");
    assert.equal(bridge.token, "tok1");
    // the pageUrl goes into the address bar so that a reload re-claims; nothing else changes
    assert.equal(page.location.href, APP + "?lang=en&bridge_session=s-1&bridge_webview=W1&bridge_token=tok1#top");
  });

  test("a pageUrl claims its web view and reports its url without the claim", async () => {
    const href = APP + "b?x=1&bridge_session=s-9&bridge_webview=W4&bridge_token=t%2B1#frag";
    const { bridge, ws, page } = setup({ href });
    ws().open();
    assert.deepEqual(ws().sent[0].params, {
      protocol: 1, role: "page", url: APP + "b?x=1#frag", session: "s-9", webview: "W4", token: "t+1",
    });
    ws().receive({ id: 1, result: helloResult({ session: "s-9", webview: "W4", token: "t+1", pageUrl: href }) });
    await bridge.ready;
    assert.equal(bridge.webview, "W4");
    assert.equal(page.location.href, href, "an address bar that already carries the claim is left alone");
  });

  test("connect() resolves with the bridge after hello", async () => {
    const WebSocket = makeSocketClass();
    const page = makePage(APP);
    const pending = connect({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document });
    handshake(WebSocket.last);
    const bridge = await pending;
    assert.ok(bridge instanceof Bridge);
    assert.equal(bridge.session, "s-1");
  });

  test("connect() rejects with the protocol's code when the claim is refused", async () => {
    const WebSocket = makeSocketClass();
    const page = makePage(APP + "?bridge_session=s-1&bridge_webview=W1&bridge_token=wrong");
    const pending = connect({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet });
    const ws = WebSocket.last;
    ws.open();
    ws.receive({ id: 1, error: { code: "not-allowed", message: "wrong token" } });
    await assert.rejects(pending, (e) => e instanceof BridgeError && e instanceof Error &&
      e.code === "not-allowed" && e.message === "wrong token");
    assert.deepEqual(ws.closedWith, { code: 1000, reason: "handshake refused" });
    assert.equal(WebSocket.instances.length, 1, "no reconnection after a refused handshake");
  });

  test("a claim on a session that no longer exists starts a new session on a fresh socket", async () => {
    const { bridge, ws, WebSocket, page, warnings } = setup({
      href: APP + "?bridge_session=s-old&bridge_webview=W2&bridge_token=t",
    });
    const first = ws();
    first.open();
    first.receive({ id: 1, error: { code: "unknown-session", message: "no such session" } });
    assert.equal(WebSocket.instances.length, 2);
    assert.equal(first.closedWith.code, 1000);
    assert.equal(page.location.href, APP, "the stale claim left the address bar");
    const second = ws();
    second.open();
    assert.deepEqual(second.sent[0].params, { protocol: 1, role: "page", url: APP });
    second.receive({ id: second.sent[0].id, result: helloResult({ session: "s-new" }) });
    await bridge.ready;
    assert.equal(bridge.session, "s-new");
    assert.match(warnings.join("\n"), /starting a new session/);
  });

  test("claimFallback: false makes an unknown session an error", async () => {
    const { bridge, ws } = setup({
      href: APP + "?bridge_session=s-old&bridge_webview=W2&bridge_token=t",
      options: { claimFallback: false },
    });
    ws().open();
    ws().receive({ id: 1, error: { code: "unknown-session", message: "no such session" } });
    await assert.rejects(bridge.ready, { code: "unknown-session" });
    assert.equal(bridge.state, "closed");
  });

  test("replaceUrl: false leaves the address bar alone", async () => {
    const { bridge, ws, page } = setup({ options: { replaceUrl: false } });
    handshake(ws());
    await bridge.ready;
    assert.equal(page.location.href, APP);
  });

  test("if the app moved on during the handshake, the claim is added where it is now", async () => {
    const { bridge, ws, page } = setup();
    ws().open();
    page.history.pushState(null, "", "/app/next");
    ws().receive({ id: 1, result: helloResult() });
    await bridge.ready;
    assert.equal(page.location.href, "http://127.0.0.1:8787/app/next?bridge_session=s-1&bridge_webview=W1&bridge_token=tok1");
  });
});

describe("requests", () => {
  test("requests and events made before the socket is open are queued, in order, after hello", async () => {
    const { bridge, ws } = setup();
    const r1 = bridge.request("custom.one", { a: 1 });
    bridge.trigger("app-ready", { v: 2 });
    const r2 = bridge.pwaNavigate({ url: "/app/two" });
    assert.equal(ws().sent.length, 0, "nothing can be sent before the socket opens");
    ws().open();
    assert.deepEqual(ws().sentMethods(), ["hello"], "hello goes first, alone");
    ws().receive({ id: ws().sent[0].id, result: helloResult() });
    assert.deepEqual(ws().sentMethods(), ["hello", "custom.one", "event:app-ready", "pwa-navigate"]);
    const [, one, ev, nav] = ws().sent;
    assert.deepEqual(one.params, { a: 1 });
    assert.deepEqual(ev, { event: "app-ready", params: { v: 2 } });
    assert.deepEqual(nav.params, { url: "http://127.0.0.1:8787/app/two" }, "relative urls are resolved");
    assert.ok(Number.isInteger(one.id) && Number.isInteger(nav.id) && one.id !== nav.id);
    ws().receive({ id: one.id, result: { ok: 1 } });
    ws().receive({ id: nav.id, result: { placeholder: "P1", stack: [] } });
    assert.deepEqual(await r1, { ok: 1 });
    assert.deepEqual(await r2, { placeholder: "P1", stack: [] });
  });

  test("replies are matched by id", async () => {
    const { bridge, ws } = setup();
    handshake(ws());
    const a = bridge.request("m.a");
    const b = bridge.request("m.b", null);
    const [, fa, fb] = ws().sent;
    assert.deepEqual(fb.params, {}, "null params are sent as {}");
    ws().receive({ id: fb.id, result: { who: "b" } });
    ws().receive({ id: fa.id, result: { who: "a" } });
    assert.deepEqual(await a, { who: "a" });
    assert.deepEqual(await b, { who: "b" });
  });

  test("an error reply rejects with an Error carrying the protocol's code", async () => {
    const { bridge, ws } = setup();
    handshake(ws());
    const p = bridge.pwaNavigate();
    const f = ws().sent.at(-1);
    ws().receive({ id: f.id, error: { code: "conflict", message: "W1 is not on top" } });
    await assert.rejects(p, (e) => e instanceof Error && e.name === "BridgeError" &&
      e.code === "conflict" && e.message === "W1 is not on top");
  });

  test("bad arguments are refused without sending anything", async () => {
    const { bridge, ws } = setup();
    handshake(ws());
    const before = ws().sent.length;
    await assert.rejects(bridge.request(""), { code: "invalid-request" });
    await assert.rejects(bridge.request(42), { code: "invalid-request" });
    await assert.rejects(bridge.request("m", [1, 2]), { code: "invalid-params" });
    await assert.rejects(bridge.request("m", "x"), { code: "invalid-params" });
    await assert.rejects(bridge.pwaNavigate(7), { code: "invalid-params" });
    assert.throws(() => bridge.trigger("", {}), TypeError);
    assert.throws(() => bridge.trigger("x", [1]), TypeError);
    assert.throws(() => bridge.on("x"), TypeError);
    assert.throws(() => bridge.onBack("nope"), TypeError);
    assert.equal(ws().sent.length, before);
  });

  test("an error reply with id null is reported as protocol-error; unknown frames are ignored", async () => {
    const { bridge, ws, warnings } = setup();
    handshake(ws());
    const seen = [];
    bridge.on("protocol-error", (e) => seen.push(e));
    ws().receive({ id: null, error: { code: "parse-error", message: "bad json" } });
    ws().receive("not json at all");
    ws().receive([1, 2]);
    ws().receive({ id: 999, result: {} });
    assert.deepEqual(seen, [{ code: "parse-error", message: "bad json" }]);
    assert.match(warnings.join("\n"), /not JSON/);
    assert.equal(bridge.state, "open");
  });

  test("close() rejects what is pending and queued with code closed and sends nothing more", async () => {
    const { bridge, ws, page } = setup();
    handshake(ws());
    const inflight = bridge.request("m.slow");
    bridge.close();
    await assert.rejects(inflight, { code: "closed" });
    await assert.rejects(bridge.request("m.after"), { code: "closed" });
    assert.equal(bridge.trigger("x"), false);
    assert.equal(bridge.navigate("/elsewhere"), false);
    assert.deepEqual(ws().closedWith, { code: 1000, reason: "closed by the page" });
    assert.equal(page.window.listenerCount("click"), 0, "the page's listeners are removed");
    assert.equal(bridge.state, "closed");
  });

  test("close() before the handshake rejects ready and the queue", async () => {
    const { bridge } = setup();
    const queued = bridge.request("m.queued");
    bridge.close();
    await assert.rejects(bridge.ready, { code: "closed" });
    await assert.rejects(queued, { code: "closed" });
  });

  test("a bad ?bridge= is a clear error", async () => {
    const WebSocket = makeSocketClass();
    const page = makePage(APP + "?bridge=ftp://x/y");
    const bridge = createBridge({ WebSocket, window: page.window, document: page.document });
    await assert.rejects(bridge.ready, (e) => e.code === "bad-url" && /ftp:\/\/x\/y/.test(e.message));
    assert.equal(WebSocket.instances.length, 0);
  });
});

describe("page protocol", () => {
  test("pwaNavigate resolves with the placeholder; pwaRendered sends pwa-rendered", async () => {
    const { bridge, ws } = setup();
    handshake(ws());
    const nav = bridge.pwaNavigate({ url: APP + "two", title: "Two" });
    const f = ws().sent.at(-1);
    assert.deepEqual(f, { id: f.id, method: "pwa-navigate", params: { url: APP + "two", title: "Two" } });
    const stack = [{ id: "P1", kind: "placeholder", of: "W1", url: APP }, { id: "W1", kind: "webview" }];
    ws().receive({ id: f.id, result: { placeholder: "P1", stack } });
    assert.equal((await nav).placeholder, "P1");
    assert.deepEqual(bridge.stack, stack);
    const rendered = bridge.pwaRendered();
    const g = ws().sent.at(-1);
    assert.deepEqual(g, { id: g.id, method: "pwa-rendered", params: {} });
    ws().receive({ id: g.id, result: { removed: true, reason: "rendered", latencyMs: 3 } });
    assert.deepEqual(await rendered, { removed: true, reason: "rendered", latencyMs: 3 });
  });

  test("pwaRendered first reports a url the daemon does not know (Astro's pwa-navigate has none)", async () => {
    const { bridge, ws, page } = setup();
    handshake(ws());
    bridge.pwaNavigate({}); // no url, like Astro.jsRpcMethod('pwa-navigate', [])()
    ws().receive({ id: ws().sent.at(-1).id, result: { placeholder: "P1", stack: [] } });
    page.history.pushState(null, "", "/app/three?q=1");
    bridge.pwaRendered();
    assert.deepEqual(ws().sent.slice(-2).map((f) => f.event ?? f.method), ["pwa-navigated", "pwa-rendered"]);
    assert.deepEqual(ws().sent.at(-2).params, { url: APP + "three?q=1", source: "pwa-rendered" });
    // the same url again: nothing more to report
    bridge.pwaRendered();
    assert.equal(ws().sent.at(-1).method, "pwa-rendered");
    assert.equal(ws().sent.at(-2).method, "pwa-rendered");
  });

  test("after a back, the url of the back event is known: no extra report", async () => {
    const { bridge, ws, page } = setup();
    handshake(ws());
    page.history.pushState(null, "", "/app/two");
    bridge.pwaNavigate({ url: "/app/two" });
    ws().receive({ id: ws().sent.at(-1).id, result: { placeholder: "P1", stack: [] } });
    ws().receive({ event: "back", params: { placeholder: "P1", url: APP } });
    page.history.replaceState(null, "", APP); // what history.back() would do
    const n = ws().sent.length;
    bridge.pwaRendered();
    assert.deepEqual(ws().sent.slice(n).map((f) => f.method), ["pwa-rendered"]);
  });

  test("reportUrl: false never reports", async () => {
    const { bridge, ws, page } = setup({ options: { reportUrl: false } });
    handshake(ws());
    page.history.pushState(null, "", "/app/x");
    bridge.pwaRendered();
    assert.deepEqual(ws().sentMethods(), ["hello", "pwa-rendered"]);
  });

  test("the back event goes back in the page's history by default", async () => {
    const { bridge, ws, page } = setup();
    handshake(ws());
    const seen = [];
    bridge.on("back", (p) => seen.push(p));
    ws().receive({ event: "back", params: { placeholder: "P2", url: APP + "one" } });
    assert.equal(page.history.backs, 1);
    assert.deepEqual(seen, [{ placeholder: "P2", url: APP + "one" }]);
  });

  test("onBack replaces the default; its return value restores it", async () => {
    const { bridge, ws, page } = setup();
    handshake(ws());
    const got = [];
    const restore = bridge.onBack((p) => got.push(p.placeholder));
    ws().receive({ event: "back", params: { placeholder: "P3", url: APP } });
    assert.deepEqual(got, ["P3"]);
    assert.equal(page.history.backs, 0);
    restore();
    ws().receive({ event: "back", params: { placeholder: "P4", url: APP } });
    assert.equal(page.history.backs, 1);
  });

  test("a page that cannot go back (Navigation API says so) loads the state's url with its claim", async () => {
    const { bridge, ws, page } = setup();
    page.window.navigation = { canGoBack: false };
    handshake(ws());
    ws().receive({ event: "back", params: { placeholder: "P1", url: APP + "one#x" } });
    assert.equal(page.history.backs, 0);
    assert.deepEqual(page.location.replaced, [APP + "one?bridge_session=s-1&bridge_webview=W1&bridge_token=tok1#x"]);
  });

  test("navigate() sends a navigate event with an absolute url", async () => {
    const { bridge, ws } = setup();
    handshake(ws());
    assert.equal(bridge.navigate("classic.html?a=1"), true);
    assert.deepEqual(ws().sent.at(-1), { event: "navigate", params: { url: APP + "classic.html?a=1" } });
  });

  test("load: the page goes to pageUrl (replacing its history entry) and never reconnects", async () => {
    const { bridge, ws, page, timers, WebSocket } = setup();
    handshake(ws());
    const loads = [];
    bridge.on("load", (p) => loads.push(p.webview));
    const pageUrl = APP + "classic.html?bridge_session=s-1&bridge_webview=W2&bridge_token=t2";
    ws().receive({ event: "load", params: { session: "s-1", webview: "W2", url: APP + "classic.html", token: "t2", pageUrl } });
    assert.deepEqual(loads, ["W2"]);
    assert.deepEqual(page.location.replaced, [pageUrl]);
    assert.equal(bridge.state, "closed");
    ws().drop(1000);
    assert.equal(timers.pending.length, 0);
    assert.equal(WebSocket.instances.length, 1);
  });

  test("closed with load: the page goes to the uncovered web view", async () => {
    const { bridge, ws, page, timers } = setup();
    handshake(ws());
    const pageUrl = APP + "?bridge_session=s-1&bridge_webview=W1&bridge_token=t1";
    const pending = bridge.request("m.x");
    ws().receive({ event: "closed", params: { reason: "popped", load: { session: "s-1", webview: "W1", url: APP, token: "t1", pageUrl } } });
    assert.deepEqual(page.location.replaced, [pageUrl]);
    await assert.rejects(pending, { code: "closed" });
    ws().drop(1000);
    assert.equal(timers.pending.length, 0, "no reconnection after closed");
  });

  test("closed (replaced): no navigation, no reconnection, state reported", async () => {
    const { bridge, ws, page, timers, events } = setup();
    handshake(ws());
    const closed = [];
    bridge.on("closed", (p) => closed.push(p));
    ws().receive({ event: "closed", params: { reason: "replaced" } });
    ws().drop(1000);
    assert.deepEqual(closed, [{ reason: "replaced" }]);
    assert.deepEqual(page.location.replaced, []);
    assert.equal(timers.pending.length, 0);
    assert.equal(events.at(-1).state, "closed");
    assert.match(bridge.closeReason.message, /replaced/);
  });

  test("followLoad: false leaves the going to the app", async () => {
    const { bridge, ws, page } = setup({ options: { followLoad: false } });
    handshake(ws());
    ws().receive({ event: "load", params: { webview: "W2", pageUrl: APP + "x" } });
    assert.deepEqual(page.location.replaced, []);
    assert.equal(bridge.state, "closed");
  });

  test("navigate.failed is delivered to listeners, or warned about when nobody listens", async () => {
    const { bridge, ws, warnings } = setup();
    handshake(ws());
    ws().receive({ event: "navigate.failed", params: { url: "tt://x", code: "unknown-route", message: "no route" } });
    assert.match(warnings.join("\n"), /tt:\/\/x failed: unknown-route/);
    const got = [];
    bridge.on("navigate.failed", (p) => got.push(p.code));
    ws().receive({ event: "navigate.failed", params: { url: "tt://y", code: "conflict" } });
    assert.deepEqual(got, ["conflict"]);
  });

  test("listeners: unsubscribe works; a throwing listener does not stop the others", async () => {
    const { bridge, ws, warnings } = setup();
    handshake(ws());
    const got = [];
    bridge.on("app.thing", () => {
      throw new Error("boom");
    });
    const off = bridge.on("app.thing", (p, frame) => got.push([p.n, frame.event]));
    ws().receive({ event: "app.thing", params: { n: 1 } });
    off();
    ws().receive({ event: "app.thing", params: { n: 2 } });
    assert.deepEqual(got, [[1, "app.thing"]]);
    assert.match(warnings.join("\n"), /"app.thing" listener failed/);
  });
});

describe("the session in the socket's url (routing behind a proxy)", () => {
  test("a page without a claim connects without ?session=; once it has one, every reconnection carries it", async () => {
    const { bridge, ws, timers } = setup();
    assert.equal(ws().url, "ws://127.0.0.1:8787/bridge");
    handshake(ws(), helloResult({ session: "s-b-0f3c", webview: "W1", token: "k" }));
    await bridge.ready;
    ws().drop(1006);
    timers.runNext();
    assert.equal(ws().url, "ws://127.0.0.1:8787/bridge?session=s-b-0f3c");
  });

  test("a claim from the pageUrl goes to ?session= of the very first connection", () => {
    const { ws } = setup({ href: APP + "?bridge_session=s-a-12ab&bridge_webview=W2&bridge_token=t" });
    assert.equal(ws().url, "ws://127.0.0.1:8787/bridge?session=s-a-12ab");
  });

  test("an unknown session falls back to a new session on a socket without ?session=", () => {
    const { ws, WebSocket } = setup({
      href: APP + "?bridge_session=s-c-77&bridge_webview=W2&bridge_token=t", options: { console: quiet },
    });
    ws().open();
    ws().receive({ id: 1, error: { code: "unknown-session", message: "no session here" } });
    assert.equal(WebSocket.instances.length, 2);
    assert.equal(ws().url, "ws://127.0.0.1:8787/bridge");
  });

  test("sessionSocketUrl adds or replaces the session and keeps the rest", () => {
    assert.equal(sessionSocketUrl("ws://h:1/bridge", "s-a-1"), "ws://h:1/bridge?session=s-a-1");
    assert.equal(sessionSocketUrl("ws://h:1/bridge?x=1&session=old", "s-a-1"), "ws://h:1/bridge?x=1&session=s-a-1");
    assert.equal(sessionSocketUrl("wss://h/bridge", null), "wss://h/bridge");
    assert.equal(sessionSocketUrl("ws://h/bridge", "s a&b"), "ws://h/bridge?session=s+a%26b");
  });
});

describe("reconnection", () => {
  test("a dropped socket reconnects with backoff and re-claims the same web view", async () => {
    const { bridge, ws, timers, events, WebSocket } = setup();
    handshake(ws(), helloResult({ session: "s-7", webview: "W3", token: "k" }));
    await bridge.ready;
    const inflight = bridge.request("m.inflight");
    ws().drop(1006);
    await assert.rejects(inflight, (e) => e.code === "disconnected");
    assert.equal(bridge.state, "reconnecting");
    assert.deepEqual(events.at(-1), { state: "reconnecting", attempt: 1, delayMs: 250, code: 1006, reason: "" });
    const queued = bridge.request("m.queued");
    bridge.trigger("ev.queued");
    // attempt 1 fails before opening: the next delay doubles
    assert.equal(timers.runNext(), 250);
    assert.equal(WebSocket.instances.length, 2);
    ws().drop(1006);
    assert.equal(events.at(-1).delayMs, 500);
    assert.equal(timers.runNext(), 500);
    const third = ws();
    third.open();
    const hello = third.sent[0];
    assert.equal(hello.params.session, "s-7");
    assert.equal(hello.params.webview, "W3");
    assert.equal(hello.params.token, "k");
    assert.equal(hello.params.url, APP, "the url is reported without the claim");
    assert.deepEqual(third.sentMethods(), ["hello"]);
    third.receive({ id: hello.id, result: helloResult({ session: "s-7", webview: "W3", token: "k" }) });
    assert.deepEqual(third.sentMethods(), ["hello", "m.queued", "event:ev.queued"]);
    assert.deepEqual(events.at(-1), { state: "open", session: "s-7", webview: "W3", reclaimed: true });
    third.receive({ id: third.sent[1].id, result: { ok: true } });
    assert.deepEqual(await queued, { ok: true });
    // after a success the backoff starts again from the beginning
    third.drop(1001);
    assert.equal(events.at(-1).delayMs, 250);
  });

  test("the backoff is capped and jittered", async () => {
    let r = 0.5;
    const { ws, timers, events } = setup({ options: { random: () => r, reconnect: { initialDelayMs: 100, maxDelayMs: 1000, factor: 3 } } });
    handshake(ws());
    const delays = [];
    for (let i = 0; i < 5; i++) {
      ws().drop();
      delays.push(events.at(-1).delayMs);
      timers.runNext();
    }
    // 100, 300, 900, 1000, 1000 times a jitter factor of 0.75
    assert.deepEqual(delays, [75, 225, 675, 750, 750]);
    r = 0;
    ws().drop();
    assert.equal(events.at(-1).delayMs, 500);
  });

  test("a refused re-claim closes the bridge and rejects the queue", async () => {
    const { bridge, ws, timers, events } = setup();
    handshake(ws());
    ws().drop();
    const queued = bridge.request("m.q");
    timers.runNext();
    ws().open();
    ws().receive({ id: ws().sent[0].id, error: { code: "unknown-session", message: "gone" } });
    await assert.rejects(queued, (e) => e.code === "closed" && /unknown-session: gone/.test(e.message));
    assert.equal(bridge.state, "closed");
    assert.equal(bridge.closeReason.code, "unknown-session");
    assert.deepEqual(events.at(-1), { state: "closed", code: "unknown-session", reason: "gone" });
    assert.equal(timers.pending.length, 0);
  });

  test("reconnect: false closes on the first drop", async () => {
    const { bridge, ws, timers } = setup({ options: { reconnect: false } });
    handshake(ws());
    ws().drop(1006);
    assert.equal(bridge.state, "closed");
    assert.equal(timers.pending.length, 0);
  });

  test("close() during the backoff cancels the pending attempt", async () => {
    const { bridge, ws, timers, WebSocket } = setup();
    handshake(ws());
    ws().drop();
    assert.equal(timers.pending.length, 1);
    bridge.close();
    assert.equal(timers.pending.length, 0);
    assert.equal(WebSocket.instances.length, 1);
  });

  test("the first connection is retried too", async () => {
    const { bridge, ws, timers } = setup();
    ws().drop(1006); // daemon not up yet
    timers.runNext();
    handshake(ws());
    await bridge.ready;
    assert.equal(bridge.state, "open");
  });
});

describe("the page's lifecycle", () => {
  test("pagehide (not persisted) closes the socket with 1000 for good", async () => {
    const { bridge, ws, page, timers } = setup();
    handshake(ws());
    page.window.dispatch("pagehide", { persisted: false });
    assert.equal(ws().closedWith.code, 1000);
    assert.equal(bridge.state, "closed");
    ws().drop(1000);
    assert.equal(timers.pending.length, 0);
  });

  test("pagehide into the back/forward cache suspends; pageshow re-claims", async () => {
    const { bridge, ws, page, WebSocket, events } = setup();
    handshake(ws());
    const pending = bridge.request("m.x");
    page.window.dispatch("pagehide", { persisted: true });
    await assert.rejects(pending, { code: "disconnected" });
    assert.equal(bridge.state, "suspended");
    assert.equal(events.at(-1).state, "suspended");
    page.window.dispatch("pageshow", { persisted: true });
    assert.equal(WebSocket.instances.length, 2);
    ws().open();
    assert.equal(ws().sent[0].params.webview, "W1");
    assert.equal(ws().sent[0].params.history, true, "a page restored from the cache came back by history");
  });

  test("a document loaded by Back/Forward says history in its first claim only", async () => {
    const href = APP + "?bridge_session=s-1&bridge_webview=W1&bridge_token=tok1";
    const page = makePage(href);
    page.window.performance = { getEntriesByType: (type) => (type === "navigation" ? [{ type: "back_forward" }] : []) };
    const WebSocket = makeSocketClass();
    const timers = makeTimers();
    const bridge = createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet,
      setTimeout: timers.setTimeout, clearTimeout: timers.clearTimeout });
    const first = handshake(WebSocket.last);
    assert.equal(first.params.history, true);
    assert.equal(first.params.webview, "W1");
    assert.equal(bridge.webview, "W1");
    WebSocket.last.drop(1006);
    await flush();
    assert.equal(bridge.state, "reconnecting");
    timers.runNext();
    WebSocket.last.open();
    const again = WebSocket.last.sent.at(-1);
    assert.equal(again.method, "hello");
    assert.equal(again.params.history, undefined, "a reconnection after a network drop is not history");
  });

  test("a reload or a first visit does not say history", async () => {
    const href = APP + "?bridge_session=s-1&bridge_webview=W1&bridge_token=tok1";
    for (const type of ["reload", "navigate"]) {
      const page = makePage(href);
      page.window.performance = { getEntriesByType: () => [{ type }] };
      const WebSocket = makeSocketClass();
      createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet });
      const hello = handshake(WebSocket.last);
      assert.equal(hello.params.history, undefined, type);
    }
    const { ws } = setup();
    assert.equal(handshake(ws()).params.history, undefined, "no claim, nothing to say");
  });

  test("a document Back/Forward loads at a pushed entry claims the web view remembered for it", async () => {
    const storage = makeStorage();
    // The first document: a new session, two states pushed without the claim, then left.
    const first = setup({ options: { sessionStorage: storage } });
    handshake(first.ws(), helloResult({ session: "s-7", webview: "W1", token: "t1" }));
    first.page.history.pushState({}, "", APP + "?view=1");
    first.page.window.dispatch("popstate", {}); // (a browser would fire currententrychange)
    first.page.history.pushState({}, "", APP + "?view=2");
    first.bridge.pwaRendered().catch(() => {}); // rejected by the pagehide below
    first.page.window.dispatch("pagehide", { persisted: false });
    assert.ok(!(storage.getItem("bridged.claims") ?? "").includes("bridge_"), "the store holds no URL with a claim");

    // The browser's Back reloads the tab at ?view=1: the claim comes from the tab's memory.
    const page = makePage(APP + "?view=1");
    page.window.performance = { getEntriesByType: () => [{ type: "back_forward" }] };
    const WebSocket = makeSocketClass();
    createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet,
      sessionStorage: storage });
    assert.match(WebSocket.last.url, /session=s-7/, "the upgrade names the session (routing)");
    const hello = handshake(WebSocket.last, helloResult({ session: "s-7", webview: "W1", token: "t1", url: APP + "?view=1" }));
    assert.deepEqual([hello.params.session, hello.params.webview, hello.params.token, hello.params.history],
      ["s-7", "W1", "t1", true]);
    assert.equal(hello.params.url, APP + "?view=1");
  });

  test("a remembered claim is used only when the document came by history", async () => {
    const storage = makeStorage();
    const first = setup({ options: { sessionStorage: storage } });
    handshake(first.ws(), helloResult({ session: "s-7" }));
    for (const type of ["navigate", "reload"]) {
      const page = makePage(APP);
      page.window.performance = { getEntriesByType: () => [{ type }] };
      const WebSocket = makeSocketClass();
      createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet,
        sessionStorage: storage });
      const hello = handshake(WebSocket.last);
      assert.equal(hello.params.session, undefined, type);
    }
    const page = makePage(APP);
    page.window.performance = { getEntriesByType: () => [{ type: "back_forward" }] };
    const WebSocket = makeSocketClass();
    createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet,
      sessionStorage: storage, rememberClaims: false });
    assert.equal(handshake(WebSocket.last).params.session, undefined, "rememberClaims: false");
  });

  test("a refused remembered claim is forgotten and a new session starts", async () => {
    const storage = makeStorage();
    const first = setup({ options: { sessionStorage: storage } });
    handshake(first.ws(), helloResult({ session: "s-gone" }));
    const page = makePage(APP);
    page.window.performance = { getEntriesByType: () => [{ type: "back_forward" }] };
    const WebSocket = makeSocketClass();
    const bridge = createBridge({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document,
      console: quiet, sessionStorage: storage });
    const refused = WebSocket.last;
    refused.open();
    const hello = refused.sent.at(-1);
    assert.equal(hello.params.session, "s-gone");
    refused.receive({ id: hello.id, error: { code: "not-allowed", message: "wrong token" } });
    assert.equal(WebSocket.instances.length, 2, "a fresh connection");
    const again = handshake(WebSocket.last, helloResult({ session: "s-new" }));
    assert.equal(again.params.session, undefined);
    await bridge.ready;
    assert.equal(bridge.session, "s-new");
    assert.ok(storage.getItem("bridged.claims").includes("s-new"));
    assert.ok(!storage.getItem("bridged.claims").includes("s-gone"));
  });

  test("the tab's memory keeps the newest 64 entries and survives a broken store", async () => {
    const storage = makeStorage();
    for (let n = 0; n < 70; n++) {
      const { ws } = setup({ href: APP + "?n=" + n, options: { sessionStorage: storage } });
      handshake(ws(), helloResult({ session: "s-" + n, url: APP + "?n=" + n }));
    }
    const kept = Object.keys(JSON.parse(storage.getItem("bridged.claims")));
    assert.equal(kept.length, 64);
    assert.ok(kept.at(-1).endsWith("?n=69") && kept[0].endsWith("?n=6"), kept[0]);
    storage.setItem("bridged.claims", "{not json");
    const { ws } = setup({ options: { sessionStorage: storage } });
    handshake(ws());
    assert.ok(JSON.parse(storage.getItem("bridged.claims")));
    const throwing = { getItem() { throw new Error("denied"); }, setItem() { throw new Error("denied"); } };
    const s = setup({ options: { sessionStorage: throwing } });
    handshake(s.ws());
    assert.equal(s.bridge.state, "open");
  });

  test("keepClaimInUrl keeps the claim in urls the app pushes (same origin only)", async () => {
    const { ws, page } = setup({ options: { keepClaimInUrl: true } });
    handshake(ws());
    page.history.pushState({ n: 1 }, "", "/app/two#t");
    assert.equal(page.location.href, APP + "two?bridge_session=s-1&bridge_webview=W1&bridge_token=tok1#t");
    page.history.pushState(null, "", "https://other.example/x");
    assert.equal(page.location.href, "https://other.example/x");
  });
});

describe("classic navigation interception", () => {
  function clickSetup() {
    const s = setup();
    handshake(s.ws());
    const click = (link, props) => s.page.window.dispatch("click", domEvent(link, props));
    return { ...s, click };
  }

  test("a link to another document is prevented and sent as navigate", () => {
    const { click, ws } = clickSetup();
    const span = element("span", {}, element("a", { href: "classic.html" }));
    const ev = click(span);
    assert.equal(ev.defaultPrevented, true);
    assert.deepEqual(ws().sent.at(-1), { event: "navigate", params: { url: APP + "classic.html" } });
  });

  test("same-document changes, modifiers, other targets, downloads and app-handled clicks are left alone", () => {
    const { click, ws, page } = clickSetup();
    const n = ws().sent.length;
    const here = page.location.href;
    const cases = [
      [element("a", { href: "#section" })],
      [element("a", { href: here.split("#")[0] + "#x" })],
      [element("a", { href: "x.html", target: "_blank" })],
      [element("a", { href: "x.html", target: "other" })],
      [element("a", { href: "x.html", download: "" })],
      [element("a", { href: "x.html", "data-bridge-ignore": "" })],
      [element("a", { href: "mailto:a@b.c" })],
      [element("a", { href: "javascript:void 0" })],
      [element("a", {})],
      [element("a", { href: "x.html" }), { ctrlKey: true }],
      [element("a", { href: "x.html" }), { metaKey: true }],
      [element("a", { href: "x.html" }), { shiftKey: true }],
      [element("a", { href: "x.html" }), { altKey: true }],
      [element("a", { href: "x.html" }), { button: 1 }],
      [element("a", { href: "x.html" }), { defaultPrevented: true }],
      [element("div", {})],
    ];
    for (const [link, props] of cases) {
      const ev = click(link, props);
      if (!props?.defaultPrevented) assert.equal(ev.defaultPrevented, false, JSON.stringify([link.attributes, props]));
    }
    assert.equal(ws().sent.length, n);
  });

  test("_self, _top in a top-level page, area and SVG links, custom schemes are intercepted", () => {
    const { click, ws } = clickSetup();
    click(element("a", { href: "/a", target: "_self" }));
    click(element("a", { href: "/b", target: "_top" }));
    click(element("area", { href: "/c" }));
    click(element("a", { href: "tt://native/screen" }));
    click(element("a", { "xlink:href": "/svg" })); // an SVG link
    click(element("a", { href: APP.replace(/\/$/, "") + "/?q=1" })); // same path, other query: a new document
    assert.deepEqual(ws().sent.slice(-6).map((f) => f.params.url), [
      "http://127.0.0.1:8787/a", "http://127.0.0.1:8787/b", "http://127.0.0.1:8787/c", "tt://native/screen",
      "http://127.0.0.1:8787/svg", APP + "?q=1",
    ]);
  });

  test("<base target> applies to links without their own target", () => {
    const { click, ws, page } = clickSetup();
    page.document.querySelector = (sel) => (sel === "base[target]" ? element("base", { target: "_blank" }) : null);
    const n = ws().sent.length;
    assert.equal(click(element("a", { href: "/x" })).defaultPrevented, false);
    assert.equal(click(element("a", { href: "/y", target: "_self" })).defaultPrevented, true);
    assert.deepEqual(ws().sent.slice(n).map((f) => f.params.url), ["http://127.0.0.1:8787/y"]);
  });

  test("shouldIntercept decides when given", () => {
    const s = setup({ options: { shouldIntercept: (url) => url.pathname.startsWith("/ext/") } });
    handshake(s.ws());
    const click = (href) => s.page.window.dispatch("click", domEvent(element("a", { href }))).defaultPrevented;
    assert.equal(click("/ext/1"), true);
    assert.equal(click("/app/other"), false);
  });

  test("interceptNavigation: false installs no click handler; a closed bridge stops intercepting", async () => {
    const s = setup({ options: { interceptNavigation: false } });
    handshake(s.ws());
    assert.equal(s.page.window.listenerCount("click"), 0);
    const t = clickSetup();
    t.bridge.close();
    assert.equal(t.click(element("a", { href: "x.html" })).defaultPrevented, false);
  });

  test("a GET form is sent as navigate with its query; POST is left to the browser", () => {
    const { ws, page } = clickSetup();
    const form = element("form", { action: "/app/search?old=1#res", method: "get" });
    class FakeFormData {
      constructor(f, submitter) {
        this.entries = [["q", "a b"], ["n", "1"]];
        if (submitter) this.entries.push([submitter.getAttribute("name"), submitter.getAttribute("value")]);
        this.form = f;
      }
      [Symbol.iterator]() {
        return this.entries[Symbol.iterator]();
      }
    }
    page.window.FormData = FakeFormData;
    const submitter = element("button", { name: "go", value: "yes" });
    const ev = page.window.dispatch("submit", domEvent(form, { submitter }));
    assert.equal(ev.defaultPrevented, true);
    assert.deepEqual(ws().sent.at(-1), { event: "navigate", params: { url: "http://127.0.0.1:8787/app/search?q=a+b&n=1&go=yes#res" } });
    const n = ws().sent.length;
    const post = page.window.dispatch("submit", domEvent(element("form", { action: "/x", method: "post" })));
    const blank = page.window.dispatch("submit", domEvent(element("form", { action: "/x", target: "_blank" })));
    const overridden = page.window.dispatch("submit", domEvent(form, { submitter: element("button", { formmethod: "post" }) }));
    assert.equal(post.defaultPrevented || blank.defaultPrevented || overridden.defaultPrevented, false);
    assert.equal(ws().sent.length, n);
  });
});

describe("Astro shim", () => {
  function astroSetup(extra = {}) {
    const WebSocket = makeSocketClass();
    const page = makePage(APP);
    const Astro = installAstroShim({
      WebSocket, url: "ws://h/bridge", window: page.window, document: page.document, console: quiet, ...extra,
    });
    return { Astro, WebSocket, page, ws: () => WebSocket.last };
  }

  test("installs window.Astro synchronously; calls before the handshake are queued", async () => {
    const { Astro, page, ws } = astroSetup();
    assert.equal(page.window.Astro, Astro);
    assert.equal(Astro.isRunningInApp(), true);
    const navigated = Astro.jsRpcMethod("pwa-navigate", [])();
    handshake(ws());
    const f = ws().sent.at(-1);
    assert.deepEqual(f, { id: f.id, method: "pwa-navigate", params: {} });
    ws().receive({ id: f.id, result: { placeholder: "P1", stack: [] } });
    assert.equal((await navigated).placeholder, "P1");
  });

  test("jsRpcMethod maps argument names to params; pwa-rendered goes through pwaRendered", async () => {
    const { Astro, ws, page } = astroSetup();
    handshake(ws());
    Astro.jsRpcMethod("app.open", ["url", "title"])("/x", "X");
    assert.deepEqual(ws().sent.at(-1).params, { url: "/x", title: "X" });
    page.history.pushState(null, "", "/app/after");
    Astro.jsRpcMethod("pwa-rendered", [])();
    assert.deepEqual(ws().sent.slice(-2).map((f) => f.event ?? f.method), ["pwa-navigated", "pwa-rendered"]);
  });

  test("jsRpcMethod rejects with the error code, or calls a node-style callback", async () => {
    const { Astro, ws } = astroSetup();
    handshake(ws());
    const p = Astro.jsRpcMethod("nope", [])();
    ws().receive({ id: ws().sent.at(-1).id, error: { code: "unknown-method", message: "nope" } });
    await assert.rejects(p, { code: "unknown-method" });
    const calls = [];
    const q = Astro.jsRpcMethod("ok.method", ["a"])(1, (err, res) => calls.push([err, res]));
    ws().receive({ id: ws().sent.at(-1).id, result: { fine: true } });
    await q;
    const r = Astro.jsRpcMethod("bad.method", [])((err, res) => calls.push([err?.code, res]));
    ws().receive({ id: ws().sent.at(-1).id, error: { code: "conflict", message: "x" } });
    assert.equal(await r, undefined);
    assert.deepEqual(calls, [[null, { fine: true }], ["conflict", null]]);
  });

  test("trigger sends events; on receives the daemon's events", async () => {
    const { Astro, ws } = astroSetup();
    handshake(ws());
    Astro.trigger("pwa-rendered");
    Astro.trigger("cart-updated", { count: 2 });
    assert.deepEqual(ws().sent.slice(-2), [
      { event: "pwa-rendered", params: {} },
      { event: "cart-updated", params: { count: 2 } },
    ]);
    const got = [];
    const off = Astro.on("app.menu", (p) => got.push(p));
    ws().receive({ event: "app.menu", params: { open: true } });
    off();
    ws().receive({ event: "app.menu", params: { open: false } });
    assert.deepEqual(got, [{ open: true }]);
  });

  test("an existing window.Astro (a real app's) is left alone", () => {
    const WebSocket = makeSocketClass();
    const page = makePage(APP);
    const real = { native: true };
    page.window.Astro = real;
    const got = installAstroShim({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document });
    assert.equal(got, real);
    assert.equal(page.window.Astro, real);
    assert.equal(WebSocket.instances.length, 0, "no connection was made");
  });

  test("installing twice reuses the shim's bridge only through the returned object", () => {
    const { Astro, page, WebSocket } = astroSetup();
    const again = installAstroShim({ WebSocket, url: "ws://h/bridge", window: page.window, document: page.document });
    assert.notEqual(again, Astro, "a second install replaces the shim");
    assert.equal(page.window.Astro, again);
  });
});

describe("url helpers", () => {
  test("stripClaim removes only the claim and keeps every other byte", () => {
    assert.equal(stripClaim("http://h/p?a=%20b+c&bridge_session=s&x=1&bridge_webview=W1&bridge_token=t#f?g"),
      "http://h/p?a=%20b+c&x=1#f?g");
    assert.equal(stripClaim("http://h/p?bridge_session=s&bridge_webview=W&bridge_token=t"), "http://h/p");
    assert.equal(stripClaim("http://h/p#bridge_session=s"), "http://h/p#bridge_session=s");
    assert.equal(stripClaim("http://h/p"), "http://h/p");
  });

  test("addClaim puts the claim before the fragment, replacing an old one", () => {
    const claim = { session: "s 1", webview: "W2", token: "a&b" };
    assert.equal(addClaim("http://h/p#f", claim), "http://h/p?bridge_session=s%201&bridge_webview=W2&bridge_token=a%26b#f");
    assert.equal(addClaim("http://h/p?q=1&bridge_session=old#f", claim),
      "http://h/p?q=1&bridge_session=s%201&bridge_webview=W2&bridge_token=a%26b#f");
    assert.deepEqual(claimFromUrl(addClaim("http://h/p?q=1", claim)), claim);
    assert.equal(claimFromUrl("http://h/p?bridge_session=s&bridge_webview=W1"), null);
    assert.deepEqual(CLAIM_PARAMS, ["bridge_session", "bridge_webview", "bridge_token"]);
  });

  test("resolveBridgeUrl: explicit, ?bridge=, then the host that served the module", () => {
    const mod = "http://127.0.0.1:8787/bridge.js";
    assert.equal(resolveBridgeUrl("http://x/app/", mod), "ws://127.0.0.1:8787/bridge");
    assert.equal(resolveBridgeUrl("http://x/app/", "https://d.example/bridge.js?astro"), "wss://d.example/bridge");
    assert.equal(resolveBridgeUrl("http://x/app/?bridge=ws://10.0.0.2:9000/bridge", mod), "ws://10.0.0.2:9000/bridge");
    assert.equal(resolveBridgeUrl("http://x/app/?bridge=127.0.0.1:9001", mod), "ws://127.0.0.1:9001/bridge");
    assert.equal(resolveBridgeUrl("http://x/app/?bridge=http%3A%2F%2Fh%3A1", mod), "ws://h:1/bridge");
    assert.equal(resolveBridgeUrl("http://x/app/?bridge=1", mod, "wss://e/bridge"), "wss://e/bridge");
    assert.throws(() => resolveBridgeUrl("http://x/", "file:///tmp/bridge.js"), { code: "bad-url" });
    assert.throws(() => resolveBridgeUrl("http://x/?bridge=ftp://h/", mod), { code: "bad-url" });
  });
});

test("a Bridge works without a page at all (a Node or worker client)", async () => {
  const WebSocket = makeSocketClass();
  const bridge = new Bridge({ WebSocket, url: "ws://h/bridge", window: null, document: null, location: null, history: null });
  WebSocket.last.open();
  assert.deepEqual(WebSocket.last.sent[0].params, { protocol: 1, role: "page" });
  WebSocket.last.receive({ id: 1, result: helloResult() });
  await bridge.ready;
  assert.equal(bridge.state, "open");
  await flush();
});
