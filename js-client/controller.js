// SPDX-License-Identifier: Apache-2.0
// controller.js — drive bridged from JavaScript test harnesses (Node 20 or newer): the same
// Daemon, Controller and Session as the Python client (docs/PYTHON-CLIENT.md), in Node's
// asynchronous style. No dependencies: the WebSocket is Node's own (global from Node 22; on
// Node 20 run node with --experimental-websocket, or pass {WebSocket}).
//
//   import { Daemon } from "./controller.js";
//   const d = await Daemon.start({ static: "js-client/demo" });
//   const c = await d.controller();
//   const s = await c.createSession(d.url("/app/astro.html"), { browser: true });
//   await s.click("#astro-deals");
//   await s.waitRendered();
//   assert.equal(await s.stack(), "P1 W1(*P)");
//   await d.stop();
//
// docs/JS-CLIENT.md, "Driving bridged from a Node harness", documents every name.

import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, sep } from "node:path";

/** How many unconsumed events a controller keeps by default; the oldest is dropped past it. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10000;
/** How long `call` waits for a reply by default, in milliseconds. */
export const DEFAULT_CALL_TIMEOUT_MS = 60000;

/** An error reply of the daemon: `code` (the protocol's), `message`, `method`. */
export class BridgeError extends Error {
  constructor(code, message, method = null) {
    super(`${method ? method + ": " : ""}${code}: ${message}`);
    this.name = "BridgeError";
    this.code = code;
    this.message = message;
    this.method = method;
  }
}

/** The daemon could not be found, did not start, or exited early; `stderr` holds its log. */
export class DaemonError extends Error {
  constructor(message, stderr = "", exitCode = null) {
    super(message);
    this.name = "DaemonError";
    this.stderr = stderr;
    this.exitCode = exitCode;
  }
}

/** A timeout of `call`, `waitEvent` or `waitRendered`. */
export class TimeoutError extends Error {
  constructor(message) {
    super(message);
    this.name = "TimeoutError";
  }
}

/** The seed's notation of a stack: `P1 W1(*P) W2(*C)~ N1` (docs/PROTOCOL.md section 4). */
export function renderStack(items) {
  return items.map((item) => {
    let text = String(item.id ?? "?");
    if (item.kind === "webview") {
      text += item.mode === "pwa" ? "(*P)" : "(*C)";
      if (item.connected === false) text += "~";
    }
    return text;
  }).join(" ");
}

function matches(params, match) {
  for (const [key, want] of Object.entries(match)) {
    if (!(key in params)) return false;
    const have = params[key];
    if (typeof want === "function") {
      if (!want(have)) return false;
    } else if (JSON.stringify(have) !== JSON.stringify(want)) {
      return false;
    }
  }
  return true;
}

// --------------------------------------------------------------------------------------------

/** A controller connection: requests, replies, and a bounded buffer of unconsumed events. */
export class Controller {
  /**
   * Connects to `url` (ws://HOST:PORT/bridge), says hello as a controller and, with
   * `subscribe` (default true), subscribes to every session's events.
   */
  static async connect(url, { token = null, subscribe = true, handles = null, timeout = DEFAULT_CALL_TIMEOUT_MS,
    maxBufferedEvents = DEFAULT_MAX_BUFFERED_EVENTS, WebSocket = globalThis.WebSocket } = {}) {
    if (typeof WebSocket !== "function") {
      throw new TypeError("no WebSocket in this Node: use Node 22 or newer, run Node 20 with --experimental-websocket, or pass {WebSocket}");
    }
    if (!(maxBufferedEvents >= 1)) throw new RangeError(`maxBufferedEvents must be at least 1, not ${maxBufferedEvents}`);
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve, { once: true });
      ws.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)), { once: true });
    });
    const c = new Controller(ws, { timeout, maxBufferedEvents });
    const hello = { protocol: 1, role: "controller" };
    if (token) hello.token = token;
    if (handles) hello.handles = handles;
    try {
      c.hello = await c.call("hello", hello);
      if (subscribe) await c.call("session.subscribe", {});
    } catch (error) {
      ws.close();
      throw error;
    }
    return c;
  }

  constructor(ws, { timeout, maxBufferedEvents }) {
    this.ws = ws;
    this.timeout = timeout;
    this.maxBufferedEvents = maxBufferedEvents;
    this.droppedEvents = 0;
    this.hello = null;
    this._nextId = 1;
    this._seq = 0;
    this._events = []; // {name, params, seq}, oldest first
    this._pending = new Map(); // id → {resolve, reject, method}
    this._watchers = new Set(); // functions called with each new event
    this._sessions = [];
    this._closed = null;
    ws.addEventListener("message", (e) => this._receive(e.data));
    ws.addEventListener("close", (e) => {
      this._closed = Object.assign(new Error(`the daemon closed the connection (${e.code})`), { code: e.code });
      for (const p of this._pending.values()) p.reject(this._closed);
      this._pending.clear();
      for (const w of [...this._watchers]) w(null);
    });
  }

  _receive(data) {
    let frame;
    try { frame = JSON.parse(typeof data === "string" ? data : String(data)); } catch { return; }
    if (frame === null || typeof frame !== "object") return;
    if ("event" in frame && !("id" in frame)) {
      const event = { name: String(frame.event), params: frame.params && typeof frame.params === "object" ? frame.params : {}, seq: ++this._seq };
      this._events.push(event);
      if (this._events.length > this.maxBufferedEvents) {
        this._events.shift();
        this.droppedEvents += 1;
      }
      for (const w of [...this._watchers]) w(event);
    } else if (Number.isInteger(frame.id) && this._pending.has(frame.id)) {
      const p = this._pending.get(frame.id);
      this._pending.delete(frame.id);
      if ("error" in frame) {
        const err = frame.error || {};
        p.reject(new BridgeError(String(err.code ?? "internal"), String(err.message ?? ""), p.method));
      } else {
        p.resolve({ result: frame.result, seq: this._seq });
      }
    }
  }

  _request(method, params, timeout = this.timeout) {
    if (this._closed) return Promise.reject(this._closed);
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new TimeoutError(`${method}: no reply within ${timeout} ms`));
      }, timeout);
      const done = (fn) => (value) => { clearTimeout(timer); fn(value); };
      this._pending.set(id, { resolve: done(resolve), reject: done(reject), method });
      this.ws.send(JSON.stringify(params && Object.keys(params).length ? { id, method, params } : { id, method }));
    });
  }

  /** Sends request `method` with `params`; resolves with its result, rejects with a BridgeError. */
  async call(method, params = {}, { timeout } = {}) {
    return (await this._request(method, params, timeout)).result;
  }

  /**
   * Resolves with the params of the oldest event `name` whose params match `match` (values
   * compared as JSON, or called when they are functions), consuming it. Events that arrived
   * before the call and were not consumed by an earlier wait count.
   */
  waitEvent(name, match = {}, { timeout = 5000 } = {}) {
    const i = this._events.findIndex((e) => e.name === name && matches(e.params, match));
    if (i >= 0) return Promise.resolve(this._events.splice(i, 1)[0].params);
    return new Promise((resolve, reject) => {
      const watcher = (event) => {
        if (event === null) {
          this._watchers.delete(watcher);
          clearTimeout(timer);
          reject(this._closed);
          return;
        }
        if (event.name !== name || !matches(event.params, match)) return;
        const at = this._events.indexOf(event);
        if (at >= 0) this._events.splice(at, 1);
        this._watchers.delete(watcher);
        clearTimeout(timer);
        resolve(event.params);
      };
      const timer = setTimeout(() => {
        this._watchers.delete(watcher);
        const seen = this._events.slice(-5).map((e) => `${e.name} ${JSON.stringify(e.params)}`).join(", ") || "none";
        reject(new TimeoutError(`no event ${name} matching ${JSON.stringify(match)} within ${timeout} ms; the last unconsumed events: ${seen}`));
      }, timeout);
      this._watchers.add(watcher);
    });
  }

  /** The unconsumed events (of one name, or all), oldest first. */
  events(name = null) {
    return this._events.filter((e) => name === null || e.name === name);
  }

  /** An event after sequence number `after` that satisfies `predicate`, left in the buffer. */
  _waitSeen(predicate, after, timeout) {
    const found = this._events.find((e) => e.seq > after && predicate(e));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const watcher = (event) => {
        if (event !== null && !predicate(event)) return;
        this._watchers.delete(watcher);
        clearTimeout(timer);
        if (event === null) reject(this._closed); else resolve(event);
      };
      const timer = setTimeout(() => { this._watchers.delete(watcher); resolve(null); }, Math.max(0, timeout));
      this._watchers.add(watcher);
    });
  }

  /**
   * Creates a session; with `browser: true` bridged opens `url` in a Chromium tab, and this
   * resolves once its page connected and its document loaded.
   */
  async createSession(url, { browser = false, ...params } = {}) {
    const before = this._seq;
    const body = { url, ...params };
    if (browser) body.browser = true;
    const created = await this.call("session.create", body);
    const session = new Session(this, created);
    this._sessions.push(session);
    if (browser && /^https?:/.test(url)) {
      const connected = await this._waitSeen((e) => e.name === "page.connected" && e.params.session === session.id
        && e.params.webview === "W1", before, this.timeout);
      if (!connected) throw new TimeoutError(`the page of browser session ${session.id} did not connect within ${this.timeout} ms`);
      await session.waitLoaded("W1");
    }
    return session;
  }

  /** Closes the sessions this controller created (unless `closeSessions` is false), then the connection. */
  async close({ closeSessions = true } = {}) {
    if (closeSessions && !this._closed) {
      for (const s of this._sessions) {
        try { await s.close(); } catch { /* gone already */ }
      }
    }
    this._sessions = [];
    if (this._closed) return;
    const closed = new Promise((resolve) => this.ws.addEventListener("close", resolve, { once: true }));
    this.ws.close();
    await closed;
  }
}

// --------------------------------------------------------------------------------------------

const BARRIER = (ms) => `(async () => {
  await new Promise((resolve) => document.readyState === "complete" ? resolve() : addEventListener("load", resolve, {once: true}));
  const injected = window.__bridgedInjected;
  if (!injected || !injected.bridge || injected.bridge.state === "closed") return false;
  await Promise.race([injected.bridge.request("ping", {}).catch(() => null), new Promise((resolve) => setTimeout(resolve, ${ms}))]);
  return true;
})()`;

const LOADED = `new Promise((resolve) => document.readyState === "complete" ? resolve(true)
  : addEventListener("load", () => resolve(true), {once: true}))`;

/** One session, driven through its controller. `webview` null means the top web view. */
export class Session {
  constructor(controller, created) {
    this.controller = controller;
    this.created = created;
    this.id = String(created.session);
    this.browser = created.browser === true;
  }

  /** `session.get`: {session, stack, foreground, handlers, canGoBack}. */
  get() { return this.controller.call("session.get", { session: this.id }); }

  /** The stack now, in the seed's notation: "P1 W1(*P)". */
  async stack() { return renderStack((await this.get()).stack); }

  /** The id of the topmost web view. */
  async topWebview() {
    const items = (await this.get()).stack;
    for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === "webview") return items[i].id;
    throw new BridgeError("unknown-webview", `session ${this.id} has no web view on its stack`);
  }

  async _webview(webview) { return webview ?? this.topWebview(); }

  async click(selector, webview = null) {
    await this.controller.call("webview.click", { session: this.id, webview: await this._webview(webview), selector });
  }

  async type(selector, text, webview = null) {
    await this.controller.call("webview.type", { session: this.id, webview: await this._webview(webview), selector, text });
  }

  async evaluate(expression, webview = null) {
    return (await this.controller.call("webview.evaluate", { session: this.id, webview: await this._webview(webview), expression })).value;
  }

  /** The screen as the user sees it, as JPEG bytes (a Buffer). */
  async screenshot() {
    const shot = await this.controller.call("session.screenshot", { session: this.id });
    return Buffer.from(shot.data, "base64");
  }

  async waitLoaded(webview = null) {
    await this.controller.call("webview.evaluate", { session: this.id, webview: await this._webview(webview), expression: LOADED });
  }

  back() { return this.controller.call("navigation.back", { session: this.id }); }

  navigate(url) { return this.controller.call("navigation.navigateToUrl", { session: this.id, url }); }

  /**
   * Resolves with `session.get`'s result once no foreground is up (event-driven: it waits for
   * `foreground.removed`). In a browser session it first has the top page ping the daemon over
   * its own connection, so a `pwa-navigate` the page sent before (from a click) is handled.
   */
  async waitRendered({ timeout = 5000 } = {}) {
    const deadline = Date.now() + timeout;
    if (this.browser) {
      try {
        await this.controller.call("webview.evaluate", { session: this.id, webview: await this.topWebview(), expression: BARRIER(timeout) },
          { timeout: timeout + 5000 });
      } catch (error) {
        if (!(error instanceof BridgeError)) throw error;
      }
    }
    for (;;) {
      const { result: state, seq } = await this.controller._request("session.get", { session: this.id });
      if (state.foreground === null || state.foreground === undefined) return state;
      const removed = await this.controller._waitSeen((e) => (e.name === "foreground.removed" || e.name === "session.closed")
        && e.params.session === this.id, seq, deadline - Date.now());
      if (!removed) {
        throw new TimeoutError(`session ${this.id}: a foreground is still up after ${timeout} ms: ${JSON.stringify(state.foreground)}`);
      }
    }
  }

  /** `session.close`; a session already gone is no error. */
  async close() {
    try {
      await this.controller.call("session.close", { session: this.id });
    } catch (error) {
      if (!(error instanceof BridgeError) || error.code !== "unknown-session") throw error;
    }
  }
}

// --------------------------------------------------------------------------------------------

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The bridged executable: `binary`, else $BRIDGED_BIN, else `bridged` on PATH. */
export function findBinary(binary = null) {
  const origin = binary ? "binary=" : "$BRIDGED_BIN=";
  binary = binary || process.env.BRIDGED_BIN || null;
  if (!binary) {
    for (const dir of (process.env.PATH || "").split(delimiter)) {
      if (dir && executable(join(dir, "bridged"))) return join(dir, "bridged");
    }
    throw new DaemonError("no bridged binary: pass Daemon.start({binary}), set BRIDGED_BIN=PATH, or put bridged on PATH "
      + "(apt install ./bridged_VERSION_amd64.deb, or build it: swift build -c release)");
  }
  if (!binary.includes(sep)) {
    for (const dir of (process.env.PATH || "").split(delimiter)) {
      if (dir && executable(join(dir, binary))) return join(dir, binary);
    }
  }
  if (!executable(binary)) throw new DaemonError(`${origin}${binary} is not an executable file`);
  return binary;
}

/** A `bridged serve --port 0` of its own: `await Daemon.start({...})`, then `await d.stop()`. */
export class Daemon {
  static async start({ binary = null, static: staticDir = null, config = null, args = [], env = process.env,
    startTimeout = 30000, stopGrace = 15000 } = {}) {
    const d = new Daemon(findBinary(binary), { staticDir, config, args, env, stopGrace });
    await d._start(startTimeout);
    return d;
  }

  constructor(binary, { staticDir, config, args, env, stopGrace }) {
    this.binary = binary;
    this.argv = ["serve"];
    if (!args.some((a) => a === "--port" || String(a).startsWith("--port="))) this.argv.push("--port", "0");
    if (staticDir !== null) this.argv.push("--static", staticDir);
    if (config !== null) this.argv.push("--config", config);
    this.argv.push(...args.map(String));
    this.env = env;
    this.token = env.BRIDGED_TOKEN || null;
    args.forEach((a, i) => {
      if (a === "--token" && i + 1 < args.length) this.token = String(args[i + 1]);
      else if (String(a).startsWith("--token=")) this.token = String(a).slice("--token=".length);
    });
    this.stopGrace = stopGrace;
    this.host = "";
    this.port = 0;
    this.exitCode = null;
    this._stderr = "";
    this._controllers = [];
  }

  /** The daemon's standard error so far. */
  stderr() { return this._stderr; }

  url(path = "/") { return `http://${this.host}:${this.port}${path.startsWith("/") ? path : "/" + path}`; }

  get wsUrl() { return `ws://${this.host}:${this.port}/bridge`; }

  /** A new Controller on this daemon (with its token); options go to Controller.connect. */
  async controller(options = {}) {
    const c = await Controller.connect(this.wsUrl, { token: this.token, ...options });
    this._controllers.push(c);
    return c;
  }

  async _start(timeout) {
    const proc = spawn(this.binary, this.argv, { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    this.process = proc;
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk) => { this._stderr += chunk; });
    this._exited = new Promise((resolve) => proc.on("exit", (code, signal) => {
      this.exitCode = code ?? (signal ? `${signal}` : null);
      resolve(this.exitCode);
    }));
    const fail = async (what) => {
      if (this.exitCode === null) {
        proc.kill("SIGKILL");
      }
      await this._exited;
      return new DaemonError(`${this.binary} ${this.argv.join(" ")}: ${what}; its stderr:\n${this._stderr || "(empty)"}`, this._stderr, this.exitCode);
    };
    const line = await new Promise((resolve) => {
      let buffered = "";
      const timer = setTimeout(() => resolve(null), timeout);
      proc.stdout.setEncoding("utf8");
      proc.stdout.on("data", (chunk) => {
        if (buffered === null) return; // later output is read and dropped, so the pipe never fills
        buffered += chunk;
        const nl = buffered.indexOf("\n");
        if (nl >= 0) { clearTimeout(timer); resolve(buffered.slice(0, nl)); buffered = null; }
      });
      proc.on("error", () => { clearTimeout(timer); resolve(""); });
      proc.on("exit", () => { clearTimeout(timer); resolve(""); });
    });
    if (line === null) throw await fail(`no 'listening on' line within ${timeout} ms`);
    const m = /^listening on http:\/\/(\[[0-9a-fA-F:]+\]|[^:/\s]+):(\d+)\s*$/.exec(line);
    if (!m) throw await fail(line ? `unexpected first line ${JSON.stringify(line)}` : "the daemon exited early");
    this.host = m[1] === "0.0.0.0" ? "127.0.0.1" : m[1];
    this.port = Number(m[2]);
    const deadline = Date.now() + timeout;
    let delay = 10;
    for (;;) {
      if (this.exitCode !== null) throw await fail("the daemon exited early");
      try {
        const r = await fetch(this.url("/healthz"));
        if ((await r.json()).ok === true) return;
      } catch { /* not yet */ }
      if (Date.now() > deadline) throw await fail(`/healthz not healthy within ${timeout} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay)); // /healthz sends no event: poll it
      delay = Math.min(delay * 2, 200);
    }
  }

  /** Closes its controllers, SIGTERM, SIGKILL after `stopGrace` ms; resolves with the exit code. */
  async stop() {
    for (const c of this._controllers) {
      try { await c.close({ closeSessions: false }); } catch { /* closed */ }
    }
    this._controllers = [];
    if (!this.process) return null;
    if (this.exitCode === null) {
      this.process.kill("SIGTERM");
      const timer = setTimeout(() => this.process.kill("SIGKILL"), this.stopGrace);
      await this._exited;
      clearTimeout(timer);
    }
    return this.exitCode;
  }
}

// The Python library's names (clients/python), for harnesses ported from it: the same calls
// in snake_case, with the same shapes — keyword arguments as one object, timeouts in seconds.
Controller.prototype.wait_event = function (name, { timeout = 5, ...match } = {}) {
  return this.waitEvent(name, match, { timeout: timeout * 1000 });
};
Controller.prototype.create_session = function (url, params = {}) { return this.createSession(url, params); };
Session.prototype.wait_rendered = function ({ timeout = 5 } = {}) { return this.waitRendered({ timeout: timeout * 1000 }); };
Object.defineProperty(Daemon.prototype, "ws_url", { get() { return this.wsUrl; } });
