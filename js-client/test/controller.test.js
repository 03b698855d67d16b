// Tests of js-client/controller.js: the event buffer and errors with a fake socket, then the
// issue's scenario against the real daemon ($BRIDGED_BIN; `make test` sets it) and Chromium.
// The daemon part needs a WebSocket: Node 22, or Node 20 with --experimental-websocket (the
// Makefile's test-js passes it when this Node has it).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

import {
  BridgeError, Controller, Daemon, DaemonError, DEFAULT_MAX_BUFFERED_EVENTS, TimeoutError, findBinary, renderStack,
} from "../controller.js";

const DEMO = join(dirname(fileURLToPath(import.meta.url)), "..", "demo");

/** A socket that answers every request with `{}` (or what `replies[method]` says). */
function fakeSocketClass(replies = {}) {
  return class FakeWebSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.listeners = {};
      FakeWebSocket.last = this;
      queueMicrotask(() => this.emit("open", {}));
    }
    addEventListener(type, fn, options) {
      (this.listeners[type] ||= []).push({ fn, once: options?.once });
    }
    emit(type, e) {
      const ls = this.listeners[type] || [];
      this.listeners[type] = ls.filter((l) => !l.once);
      for (const l of ls) l.fn(e);
    }
    send(text) {
      const frame = JSON.parse(text);
      this.sent.push(frame);
      const reply = replies[frame.method];
      queueMicrotask(() => this.receive(reply ? { id: frame.id, ...reply } : { id: frame.id, result: {} }));
    }
    receive(frame) {
      this.emit("message", { data: JSON.stringify(frame) });
    }
    event(name, params) {
      this.receive({ event: name, params });
    }
    close() {
      queueMicrotask(() => this.emit("close", { code: 1000 }));
    }
  };
}

describe("controller.js with a fake socket", () => {
  test("hello, subscribe, call and error replies", async () => {
    const WebSocket = fakeSocketClass({ "session.get": { error: { code: "unknown-session", message: "no session \"s-x\"" } } });
    const c = await Controller.connect("ws://x/bridge", { WebSocket, token: "t" });
    const ws = WebSocket.last;
    assert.deepEqual(ws.sent.map((f) => f.method), ["hello", "session.subscribe"]);
    assert.deepEqual(ws.sent[0].params, { protocol: 1, role: "controller", token: "t" });
    assert.deepEqual(await c.call("ping"), {});
    await assert.rejects(c.call("session.get", { session: "s-x" }), (e) => {
      assert.ok(e instanceof BridgeError);
      assert.equal(e.code, "unknown-session");
      assert.equal(e.message, "no session \"s-x\"");
      assert.equal(e.method, "session.get");
      return true;
    });
    await c.close();
  });

  test("waitEvent finds an event that came before it, matches, consumes, times out", async () => {
    const WebSocket = fakeSocketClass();
    const c = await Controller.connect("ws://x/bridge", { WebSocket, subscribe: false });
    const ws = WebSocket.last;
    ws.event("stack.changed", { session: "a", cause: "hello", stack: [{ id: "W1" }] });
    ws.event("stack.changed", { session: "b", cause: "hello", stack: [{ id: "W1" }, { id: "W2" }] });
    assert.equal((await c.waitEvent("stack.changed", { session: "b" })).session, "b");
    const later = c.waitEvent("foreground.removed", { reason: "rendered" });
    ws.event("foreground.removed", { session: "a", reason: "timeout" });
    ws.event("foreground.removed", { session: "a", reason: "rendered" });
    assert.equal((await later).reason, "rendered");
    assert.equal((await c.waitEvent("stack.changed", { stack: (s) => s.length === 1 })).session, "a");
    await assert.rejects(c.waitEvent("stack.changed", {}, { timeout: 20 }), TimeoutError);
    assert.deepEqual(c.events().map((e) => e.params.reason), ["timeout"], "the rest is still there");
    await c.close();
  });

  test("the event buffer keeps the newest events up to its limit", async () => {
    assert.equal(DEFAULT_MAX_BUFFERED_EVENTS, 10000);
    const WebSocket = fakeSocketClass();
    const c = await Controller.connect("ws://x/bridge", { WebSocket, maxBufferedEvents: 3 });
    for (let i = 0; i < 3; i++) WebSocket.last.event("app.event", { i });
    assert.equal(c.events().length, 3);
    assert.equal(c.droppedEvents, 0, "at the limit nothing is dropped");
    for (let i = 3; i < 5; i++) WebSocket.last.event("app.event", { i });
    assert.deepEqual(c.events().map((e) => e.params.i), [2, 3, 4]);
    assert.equal(c.droppedEvents, 2);
    await c.close();
    await assert.rejects(Controller.connect("ws://x/bridge", { WebSocket, maxBufferedEvents: 0 }), RangeError);
  });

  test("without a WebSocket it says how to get one", async () => {
    await assert.rejects(Controller.connect("ws://x/bridge", { WebSocket: null }), /--experimental-websocket/);
  });

  test("renderStack is the seed's notation", () => {
    assert.equal(renderStack([{ id: "P1", kind: "placeholder" }, { id: "W1", kind: "webview", mode: "pwa", connected: true },
      { id: "W2", kind: "webview", mode: "classic", connected: false }, { id: "N1", kind: "native" }]), "P1 W1(*P) W2(*C)~ N1");
  });

  test("findBinary: a clear error", () => {
    assert.throws(() => findBinary("/nonexistent/bridged"), (e) => e instanceof DaemonError && /not an executable/.test(e.message));
    const saved = [process.env.BRIDGED_BIN, process.env.PATH];
    try {
      delete process.env.BRIDGED_BIN;
      process.env.PATH = "/nonexistent";
      assert.throws(() => findBinary(), /BRIDGED_BIN/);
    } finally {
      if (saved[0] === undefined) delete process.env.BRIDGED_BIN; else process.env.BRIDGED_BIN = saved[0];
      process.env.PATH = saved[1];
    }
  });
});

function daemonMissing() {
  if (typeof WebSocket !== "function") return "no WebSocket in this Node (Node 20: --experimental-websocket)";
  try { findBinary(); } catch (e) { return e.message; }
  return false;
}

describe("controller.js against the daemon", { skip: daemonMissing() }, () => {
  test("the Astro demo in a browser session: click, waitRendered, stack, screenshot, back", async () => {
    const d = await Daemon.start({ static: DEMO, args: ["--drain-ms", "0"] });
    try {
      const c = await d.controller();
      const s = await c.createSession(d.url("/app/astro.html"), { browser: true });
      assert.equal(await s.stack(), "W1(*C)");
      await s.click("#astro-deals");
      const state = await s.waitRendered();
      assert.equal(state.foreground, null);
      assert.equal(await s.stack(), "P1 W1(*P)");
      assert.equal(await s.evaluate("document.body.dataset.view"), "deals");
      assert.equal((await c.waitEvent("foreground.removed", { session: s.id })).reason, "rendered");
      const jpeg = await s.screenshot();
      assert.deepEqual([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      assert.equal((await s.back()).action, "swap");
      await s.waitRendered();
      assert.equal(await s.stack(), "W1(*P)");
      await s.evaluate("document.body.insertAdjacentHTML('beforeend', '<input id=q>'); 1");
      await s.type("#q", "tea pot");
      assert.equal(await s.evaluate("document.getElementById('q').value"), "tea pot");
      await assert.rejects(s.click("#nope"), (e) => e instanceof BridgeError && e.code === "browser-error");
      await assert.rejects(c.call("session.get", { session: "s-0" }), (e) => e.code === "unknown-session");
      await c.close();
      await assert.rejects(c.call("ping"), /closed/);
    } finally {
      assert.equal(await d.stop(), 0);
    }
  });

  test("the Python library's snake_case names: create_session, wait_rendered, wait_event, ws_url", async () => {
    const d = await Daemon.start({ static: DEMO, args: ["--drain-ms", "0"] });
    try {
      assert.equal(d.ws_url, d.wsUrl);
      const c = await d.controller();
      const s = await c.create_session(d.url("/app/astro.html"), { browser: true });
      await s.click("#astro-deals");
      assert.equal((await s.wait_rendered({ timeout: 5 })).foreground, null);
      assert.equal((await c.wait_event("foreground.removed", { session: s.id, timeout: 5 })).reason, "rendered");
      await assert.rejects(c.wait_event("foreground.removed", { session: s.id, timeout: 0.2 }), TimeoutError);
      await c.close();
    } finally {
      assert.equal(await d.stop(), 0);
    }
  });

  test("a daemon that exits early shows its stderr", async () => {
    await assert.rejects(Daemon.start({ args: ["--instance", "NOT VALID"] }), (e) => {
      assert.ok(e instanceof DaemonError);
      assert.match(e.stderr, /--instance/);
      assert.notEqual(e.exitCode, 0);
      return true;
    });
  });
});
