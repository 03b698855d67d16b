// SPDX-License-Identifier: Apache-2.0
// bridge.js — the page side of bridged (protocol v1). An ES module with no dependencies and
// no build step; the daemon serves it at /bridge.js.
//
//   import { connect } from "/bridge.js";
//   const bridge = await connect();
//   await bridge.pwaNavigate({ url });   // before the DOM changes to a new state
//   await bridge.pwaRendered();          // after every render, also after a back
//
// Loading it as "/bridge.js?astro" also installs the window.Astro shim (see installAstroShim).
// The documentation is docs/JS-CLIENT.md; the types are in bridge.d.ts.

export const PROTOCOL_VERSION = 1;

/** The query parameters that carry a claim on a web view (a daemon `pageUrl` has them). */
export const CLAIM_PARAMS = Object.freeze(["bridge_session", "bridge_webview", "bridge_token"]);

const CLAIM_KEYS = { session: "bridge_session", webview: "bridge_webview", token: "bridge_token" };

/** Schemes a click or form never hands to the daemon: the browser keeps them. */
const UNINTERCEPTED_SCHEMES = new Set([
  "javascript:", "mailto:", "tel:", "sms:", "data:", "blob:", "about:", "file:",
]);

const DEFAULT_RECONNECT = Object.freeze({ initialDelayMs: 250, maxDelayMs: 5000, factor: 2, jitter: true });

/** An error of the protocol (`code` is the contract's error code) or of the client. */
export class BridgeError extends Error {
  constructor(code, message, data) {
    super(message || code);
    this.name = "BridgeError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

// ---------------------------------------------------------------------------------------------
// URL helpers. They edit the query as a string so that nothing else of the app's URL changes
// (URLSearchParams would re-encode every other parameter).

function splitUrl(href) {
  const hashAt = href.indexOf("#");
  const fragment = hashAt === -1 ? "" : href.slice(hashAt);
  const beforeHash = hashAt === -1 ? href : href.slice(0, hashAt);
  const queryAt = beforeHash.indexOf("?");
  const base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? null : beforeHash.slice(queryAt + 1);
  return { base, query, fragment };
}

function paramName(part) {
  const eq = part.indexOf("=");
  const raw = eq === -1 ? part : part.slice(0, eq);
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}

/** `href` without the claim parameters; everything else untouched. */
export function stripClaim(href) {
  const { base, query, fragment } = splitUrl(String(href));
  if (query === null) return base + fragment;
  const kept = query.split("&").filter((part) => part !== "" && !CLAIM_PARAMS.includes(paramName(part)));
  return base + (kept.length ? "?" + kept.join("&") : "") + fragment;
}

/** `href` with the claim `{session, webview, token}` in its query, before any fragment. */
export function addClaim(href, claim) {
  const stripped = stripClaim(href);
  const { base, query, fragment } = splitUrl(stripped);
  const parts = query ? [query] : [];
  for (const [key, name] of Object.entries(CLAIM_KEYS)) {
    parts.push(name + "=" + encodeURIComponent(claim[key]));
  }
  return base + "?" + parts.join("&") + fragment;
}

/** The claim carried by `href`'s query, or null unless all three parameters are present. */
export function claimFromUrl(href) {
  let params;
  try {
    params = new URL(String(href)).searchParams;
  } catch {
    return null;
  }
  const claim = {};
  for (const [key, name] of Object.entries(CLAIM_KEYS)) {
    const value = params.get(name);
    if (!value) return null;
    claim[key] = value;
  }
  return claim;
}

/**
 * The WebSocket URL of the daemon: `explicit` if given, else the page's `?bridge=` parameter,
 * else `/bridge` on the host that served this module. `?bridge=` takes a ws(s) or http(s) URL
 * (an empty path means `/bridge`) or a bare `host:port`.
 */
export function resolveBridgeUrl(pageHref, moduleUrl, explicit) {
  let raw = explicit;
  if (raw == null && pageHref) {
    try {
      raw = new URL(String(pageHref)).searchParams.get("bridge");
    } catch {
      raw = null;
    }
  }
  if (raw == null || raw === "") {
    const from = new URL(moduleUrl);
    if (from.protocol !== "http:" && from.protocol !== "https:") {
      throw new BridgeError("bad-url", `cannot derive the bridge URL from ${moduleUrl}; pass {url} or ?bridge=`);
    }
    return (from.protocol === "https:" ? "wss://" : "ws://") + from.host + "/bridge";
  }
  let url;
  try {
    url = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? new URL(raw) : new URL("ws://" + raw);
  } catch {
    throw new BridgeError("bad-url", `not a bridge URL: ${raw}`);
  }
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new BridgeError("bad-url", `not a bridge URL: ${raw}`);
  }
  if (url.pathname === "" || url.pathname === "/") url.pathname = "/bridge";
  return url.href;
}

/**
 * The WebSocket URL for a connection that claims `session`: `?session=ID` added to (or replaced
 * in) the query, so that a proxy in front of several daemons routes the upgrade to the daemon
 * that owns the session before any frame is read. Without a session, the url unchanged.
 */
export function sessionSocketUrl(url, session) {
  if (!session) return url;
  const u = new URL(url);
  u.searchParams.set("session", session);
  return u.href;
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------

/**
 * One page's connection to the daemon. Create it with `connect()` (which waits for the
 * handshake) or `createBridge()` (which returns at once; calls made before the handshake are
 * queued).
 */
export class Bridge {
  constructor(options = {}) {
    const g = globalThis;
    this._WebSocket = options.WebSocket ?? g.WebSocket;
    this._window = options.window !== undefined ? options.window : (g.window ?? null);
    this._location = options.location ?? this._window?.location ?? g.location ?? null;
    this._history = options.history ?? this._window?.history ?? g.history ?? null;
    this._document = options.document !== undefined ? options.document : (g.document ?? null);
    this._setTimeout = options.setTimeout ?? g.setTimeout.bind(g);
    this._clearTimeout = options.clearTimeout ?? g.clearTimeout.bind(g);
    this._random = options.random ?? Math.random;
    this._console = options.console ?? g.console;
    this._reconnect = options.reconnect === false ? null : { ...DEFAULT_RECONNECT, ...(options.reconnect ?? {}) };
    this._replaceUrl = options.replaceUrl !== false;
    this._keepClaimInUrl = options.keepClaimInUrl === true;
    this._followLoad = options.followLoad !== false;
    this._reportUrl = options.reportUrl !== false;
    this._claimFallback = options.claimFallback !== false;
    this._shouldIntercept = options.shouldIntercept ?? null;
    this._intercept = options.interceptNavigation !== false; // kept for reclaim(), which installs the hooks again
    // Came back by the browser's Back/Forward: the first hello says so (`history: true`), and
    // the daemon brings its stack in step with the tab (docs/PROTOCOL.md, "The browser's history").
    this._fromHistory = options.fromHistory ?? cameByHistory(this._window);

    /** "connecting" | "open" | "reconnecting" | "suspended" | "closed" */
    this.state = "connecting";
    this.session = null;
    this.webview = null;
    this.token = null;
    this.pageUrl = null;
    this.stack = null;
    /** Why the bridge closed (a BridgeError), once state is "closed". */
    this.closeReason = null;

    this._nextId = 1;
    this._pending = new Map(); // id -> {resolve, reject, method, sent}
    this._queue = []; // frames waiting for the handshake
    this._listeners = new Map(); // name -> Set<callback>
    this._backHandler = null;
    this._ws = null;
    this._attempt = 0; // consecutive failed connection attempts
    this._timer = null;
    this._helloId = null;
    this._everOpen = false;
    this._byReclaim = false; // reclaim() gave the claim: never a new session in its place
    this._knownUrl = null; // the daemon's idea of this web view's url
    this._domCleanup = [];

    const href = this._location ? String(this._location.href) : null;
    this._claim = options.claim ?? (href ? claimFromUrl(href) : null);
    this._claimFromUrl = options.claim == null && this._claim !== null;
    // The tab's memory of which web view each of its history entries showed (sessionStorage,
    // never a URL): a document Back/Forward loads at an entry whose URL carries no claim (one
    // the app pushed) claims that entry's web view again, instead of starting a new session.
    this._rememberClaims = options.rememberClaims !== false;
    this._storage = options.sessionStorage !== undefined ? options.sessionStorage : sessionStorageOf(this._window);
    this._claimRecalled = false;
    if (this._claim === null && this._fromHistory && this._rememberClaims) {
      this._claim = recallClaim(this._storage, this._entryKey());
      this._claimRecalled = this._claim !== null;
    }

    this._newReady();

    try {
      this.url = resolveBridgeUrl(href, options.moduleUrl ?? import.meta.url, options.url);
    } catch (error) {
      this.url = null;
      this._shutdown(error instanceof BridgeError ? error : new BridgeError("bad-url", String(error)));
      return;
    }
    if (typeof this._WebSocket !== "function") {
      this._shutdown(new BridgeError("bad-url", "no WebSocket implementation (pass {WebSocket})"));
      return;
    }
    this._installDom(this._intercept);
    this._open();
  }

  _newReady() {
    this.ready = new Promise((resolve, reject) => {
      this._resolveReady = resolve;
      this._rejectReady = reject;
    });
    this.ready.catch(() => {}); // a caller that never awaits `ready` must not see an unhandled rejection
  }

  // --- public API ----------------------------------------------------------------------------

  /** Sends a request; resolves with its result, rejects with a BridgeError carrying `code`. */
  request(method, params) {
    if (typeof method !== "string" || method === "") {
      return Promise.reject(new BridgeError("invalid-request", "method must be a non-empty string"));
    }
    if (params != null && !isPlainObject(params)) {
      return Promise.reject(new BridgeError("invalid-params", `params of ${method} must be an object`));
    }
    if (this.state === "closed") return Promise.reject(this._closedError());
    const id = this._nextId++;
    const frame = { id, method, params: params ?? {} };
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve, reject, method, sent: false });
      this._send(frame);
    });
  }

  /** Sends an event (no reply). Returns false when the bridge is closed and nothing was sent. */
  trigger(name, params) {
    if (typeof name !== "string" || name === "") throw new TypeError("event name must be a non-empty string");
    if (params != null && !isPlainObject(params)) throw new TypeError(`params of ${name} must be an object`);
    if (this.state === "closed") return false;
    this._send({ event: name, params: params ?? {} });
    return true;
  }

  /** The PWA is about to change its DOM to a new state; resolves once the placeholder is stacked. */
  async pwaNavigate(params = {}) {
    if (typeof params === "string") params = { url: params };
    if (!isPlainObject(params)) throw new BridgeError("invalid-params", "pwaNavigate takes {url?, title?}");
    const sent = { ...params };
    if (typeof sent.url === "string") sent.url = this._absolute(sent.url);
    const result = await this.request("pwa-navigate", sent);
    if (typeof sent.url === "string") this._knownUrl = sent.url;
    if (result && Array.isArray(result.stack)) this.stack = result.stack;
    return result;
  }

  /**
   * The PWA finished rendering its current state. When the address bar no longer shows the
   * url the daemon knows for this web view (e.g. Astro's `pwa-navigate` carries no url), a
   * `pwa-navigated` event reports it first.
   */
  async pwaRendered() {
    if (this._reportUrl && this._location && this.state !== "closed") {
      const here = stripClaim(String(this._location.href));
      if (this._knownUrl !== null && here !== this._knownUrl) {
        this.trigger("pwa-navigated", { url: here, source: "pwa-rendered" });
        this._knownUrl = here;
      }
    }
    this._rememberClaim();
    return this.request("pwa-rendered", {});
  }

  /** Asks the host to go back (like a header back button). */
  back() {
    return this.request("back", {});
  }

  /** Asks for a classic navigation to `url` (resolved against the page). */
  navigate(url) {
    return this.trigger("navigate", { url: this._absolute(String(url)) });
  }

  /**
   * Sets what happens on the daemon's `back` event (`{placeholder, url}`). The default goes
   * back one step in the page's history. `null` restores the default. Returns a function that
   * restores the previous handler.
   */
  onBack(handler) {
    if (handler != null && typeof handler !== "function") throw new TypeError("onBack takes a function or null");
    const previous = this._backHandler;
    this._backHandler = handler ?? null;
    return () => {
      this._backHandler = previous;
    };
  }

  /** Listens to an event of the daemon (or "connection"); returns a function that unsubscribes. */
  on(name, callback) {
    if (typeof callback !== "function") throw new TypeError("on takes an event name and a function");
    let set = this._listeners.get(name);
    if (!set) this._listeners.set(name, (set = new Set()));
    const entry = (params, frame) => callback(params, frame);
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /**
   * Opens a closed bridge again, on this same object, for the web view `claim` names
   * (`{session, webview, token}`, three non-empty strings; an invalid claim throws a BridgeError
   * "invalid-params"). The daemon does this when it hands a kept document to a new web view
   * (hotwire-native's modal on iOS). Listeners and the `onBack` handler stay; `ready` is a new
   * promise; requests made before the new `hello` is answered are queued. A refused claim closes
   * the bridge again (never a new session in its place). Returns true when the connection attempt
   * started; false, changing nothing, when the bridge is not closed (it speaks for a web view
   * already) or has no WebSocket URL or implementation.
   */
  reclaim(claim) {
    const valid = isPlainObject(claim) &&
      ["session", "webview", "token"].every((key) => typeof claim[key] === "string" && claim[key] !== "");
    if (!valid) throw new BridgeError("invalid-params", "reclaim takes {session, webview, token}, three non-empty strings");
    if (this.state !== "closed" || this.url === null || typeof this._WebSocket !== "function") return false;
    this.state = "connecting";
    this.session = null;
    this.webview = null;
    this.token = null;
    this.pageUrl = null;
    this.stack = null;
    this.closeReason = null;
    this._claim = { session: claim.session, webview: claim.webview, token: claim.token };
    this._claimFromUrl = false;
    this._claimRecalled = false;
    this._fromHistory = false;
    this._byReclaim = true;
    this._knownUrl = null;
    this._attempt = 0;
    this._helloId = null;
    this._queue = [];
    this._newReady();
    this._installDom(this._intercept);
    this._open();
    return this.state !== "closed"; // false only if the WebSocket could not even be created
  }

  /** Closes the bridge for good (until a `reclaim`): pending requests reject with code "closed". */
  close() {
    if (this.state === "closed") return;
    this._shutdown(new BridgeError("closed", "closed by the page"), 1000, "closed by the page");
  }

  // --- connection ----------------------------------------------------------------------------

  _open() {
    this._timer = null;
    let ws;
    try {
      ws = new this._WebSocket(sessionSocketUrl(this.url, this.session ?? this._claim?.session));
    } catch (error) {
      this._shutdown(new BridgeError("bad-url", `cannot open ${this.url}: ${error && error.message}`));
      return;
    }
    this._ws = ws;
    ws.onopen = () => {
      if (this._ws === ws) this._sendHello();
    };
    ws.onmessage = (message) => {
      if (this._ws === ws) this._onText(message.data);
    };
    ws.onclose = (event) => {
      if (this._ws === ws) this._onSocketClosed(event);
    };
    ws.onerror = () => {}; // a close event always follows
  }

  _sendHello() {
    const params = { protocol: PROTOCOL_VERSION, role: "page" };
    if (this._location) params.url = stripClaim(String(this._location.href));
    const claim = this.session ? { session: this.session, webview: this.webview, token: this.token } : this._claim;
    if (claim) Object.assign(params, claim);
    if (claim && this._fromHistory) params.history = true;
    const id = this._nextId++;
    this._helloId = id;
    this._pending.set(id, {
      method: "hello",
      sent: true,
      resolve: (result) => this._onHello(result, params),
      reject: (error) => this._onHelloFailed(error, claim),
    });
    this._ws.send(JSON.stringify({ id, method: "hello", params }));
  }

  _onHello(result, sent) {
    const reclaimed = this._everOpen || this._byReclaim;
    this.session = result.session;
    this.webview = result.webview;
    this.token = result.token;
    this.pageUrl = result.pageUrl ?? null;
    if (Array.isArray(result.stack)) this.stack = result.stack;
    this._knownUrl = sent.url ?? null; // a hello sets the web view's url
    this.state = "open";
    this._fromHistory = false;
    this._attempt = 0;
    this._everOpen = true;
    this._putClaimInAddressBar(sent.url);
    this._claimRecalled = false;
    this._rememberClaim();
    const queued = this._queue;
    this._queue = [];
    for (const frame of queued) this._send(frame);
    this._emit("connection", { state: "open", session: this.session, webview: this.webview, reclaimed });
    this._resolveReady(this);
  }

  _onHelloFailed(error, claim) {
    // A claim on a session that no longer exists (e.g. the daemon restarted and the page was
    // reloaded from its pageUrl): start a new session rather than fail, on the first connect only.
    // A claim recalled for this history entry (not the page's own) that is refused for any
    // reason: forgotten, and a new session rather than an error.
    const recalled = this._claimRecalled && claim === this._claim;
    if (!this._everOpen && !this._byReclaim && claim && (recalled || (this._claimFallback && error.code === "unknown-session"))) {
      this._console?.warn?.(`bridge: ${error.message}; starting a new session`);
      if (recalled) forgetClaim(this._storage, this._entryKey());
      this._claimRecalled = false;
      this._claim = null;
      if (this._claimFromUrl && this._history && this._location) {
        this._history.replaceState(this._history.state, "", stripClaim(String(this._location.href)));
      }
      // A fresh connection: whether a failed hello counts as "the" hello is the daemon's business.
      const ws = this._ws;
      this._ws = null;
      ws?.close(1000, "claim refused");
      this._open();
      return;
    }
    this._shutdown(error, 1000, "handshake refused");
  }

  _onSocketClosed(event) {
    this._ws = null;
    this._helloId = null;
    const dropped = new BridgeError("disconnected", `connection lost (${event?.code ?? "?"})`);
    for (const [id, pending] of this._pending) {
      if (pending.sent) {
        this._pending.delete(id);
        if (pending.method !== "hello") pending.reject(dropped);
      }
    }
    if (this.state === "closed" || this.state === "suspended") return;
    if (!this._reconnect) {
      this._shutdown(dropped);
      return;
    }
    const r = this._reconnect;
    let delay = Math.min(r.maxDelayMs, r.initialDelayMs * Math.pow(r.factor, this._attempt));
    if (r.jitter) delay = Math.round(delay * (0.5 + this._random() / 2));
    this._attempt += 1;
    this.state = "reconnecting";
    this._emit("connection", {
      state: "reconnecting", attempt: this._attempt, delayMs: delay, code: event?.code, reason: event?.reason,
    });
    this._timer = this._setTimeout(() => this._open(), delay);
  }

  /** Leaves for good: rejects what is waiting, closes the socket, detaches from the page. */
  _shutdown(error, code = 1000, reason = "") {
    if (this.state === "closed") return;
    this.state = "closed";
    this.closeReason = error;
    if (this._timer !== null) {
      this._clearTimeout(this._timer);
      this._timer = null;
    }
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      try {
        ws.close(code, reason);
      } catch {
        // already closing
      }
    }
    const failure = error.code === "disconnected" || error.code === "closed" ? error : this._closedError();
    for (const [, pending] of this._pending) {
      if (pending.method !== "hello") pending.reject(failure);
    }
    this._pending.clear();
    this._queue = [];
    for (const undo of this._domCleanup.splice(0)) undo();
    // Taken before the listeners run: one of them may reclaim() the bridge, which makes a new `ready`.
    const rejectReady = this._rejectReady;
    this._emit("connection", { state: "closed", code: error.code, reason: error.message });
    rejectReady(error);
  }

  _closedError() {
    const why = this.closeReason;
    return new BridgeError("closed", why ? `the bridge is closed (${why.code}: ${why.message})` : "the bridge is closed");
  }

  _send(frame) {
    const ws = this._ws;
    if (this.state !== "open" || !ws) {
      this._queue.push(frame);
      return;
    }
    if (frame.id !== undefined) {
      const pending = this._pending.get(frame.id);
      if (pending) pending.sent = true;
    }
    ws.send(JSON.stringify(frame));
  }

  // --- incoming frames -----------------------------------------------------------------------

  _onText(data) {
    let frame;
    try {
      frame = JSON.parse(String(data));
    } catch {
      this._console?.warn?.("bridge: ignoring a frame that is not JSON");
      return;
    }
    if (!isPlainObject(frame)) return;
    if ("id" in frame && ("result" in frame || "error" in frame) && !("method" in frame)) {
      this._onReply(frame);
    } else if (typeof frame.event === "string" && !("id" in frame)) {
      this._onEvent(frame.event, isPlainObject(frame.params) ? frame.params : {}, frame);
    }
  }

  _onReply(frame) {
    const pending = frame.id === null ? undefined : this._pending.get(frame.id);
    if (!pending) {
      if (frame.error) this._emit("protocol-error", frame.error, frame);
      return;
    }
    this._pending.delete(frame.id);
    if (frame.error) {
      const e = isPlainObject(frame.error) ? frame.error : {};
      pending.reject(new BridgeError(String(e.code ?? "internal"), String(e.message ?? e.code ?? "error"), e.data));
    } else {
      pending.resolve(frame.result ?? {});
    }
  }

  _onEvent(name, params, frame) {
    switch (name) {
      case "back":
        if (typeof params.url === "string") this._knownUrl = params.url;
        this._emit(name, params, frame);
        this._runBack(params);
        return;
      case "load":
        this._emit(name, params, frame);
        this._leave(new BridgeError("closed", "the page was sent elsewhere (load)"), params.pageUrl);
        return;
      case "closed": {
        this._emit(name, params, frame);
        const load = isPlainObject(params.load) ? params.load : null;
        this._leave(new BridgeError("closed", `closed by the daemon (${params.reason ?? "closed"})`), load?.pageUrl);
        return;
      }
      case "navigate.failed":
        if (!this._listeners.get(name)?.size) {
          this._console?.warn?.(`bridge: navigation to ${params.url} failed: ${params.code} ${params.message ?? ""}`);
        }
        this._emit(name, params, frame);
        return;
      default:
        this._emit(name, params, frame);
    }
  }

  _leave(error, pageUrl) {
    // The daemon closes the connection with 1000 after this event: do not reconnect.
    this._shutdown(error);
    if (this._followLoad && typeof pageUrl === "string" && this._location) {
      // replace, not assign: in single-tab mode the one tab always shows the top of the stack,
      // and the daemon (not the tab's history) knows what is below.
      this._location.replace(pageUrl);
    }
  }

  _runBack(params) {
    try {
      if (this._backHandler) {
        this._backHandler(params);
        return;
      }
      const navigation = this._window?.navigation;
      if (navigation && navigation.canGoBack === false && typeof params.url === "string" && this._location) {
        // Nothing to go back to in this tab (e.g. after a reload): load the state's url.
        this._location.replace(this.session ? addClaim(params.url, this) : params.url);
        return;
      }
      this._history?.back();
    } catch (error) {
      this._console?.error?.("bridge: back handler failed", error);
    }
  }

  _emit(name, params, frame) {
    const set = this._listeners.get(name);
    if (!set) return;
    for (const callback of [...set]) {
      try {
        callback(params, frame);
      } catch (error) {
        this._console?.error?.(`bridge: a "${name}" listener failed`, error);
      }
    }
  }

  // --- the page ------------------------------------------------------------------------------

  _absolute(url) {
    try {
      return new URL(url, this._document?.baseURI ?? this._location?.href).href;
    } catch {
      return url;
    }
  }

  _putClaimInAddressBar(sentUrl) {
    if (!this._replaceUrl || !this._history || !this._location || !this.session) return;
    const here = String(this._location.href);
    const claimed = claimFromUrl(here);
    if (claimed && claimed.session === this.session && claimed.webview === this.webview && claimed.token === this.token) {
      return;
    }
    // pageUrl is the url we sent plus the claim; if the app has moved on meanwhile, claim where it is.
    const target = this.pageUrl && stripClaim(here) === sentUrl ? this.pageUrl : addClaim(here, this);
    this._history.replaceState(this._history.state, "", target);
  }

  _installDom(intercept) {
    const win = this._window;
    if (!win || typeof win.addEventListener !== "function") return;
    const listen = (type, fn) => {
      win.addEventListener(type, fn);
      this._domCleanup.push(() => win.removeEventListener(type, fn));
    };
    if (intercept) {
      listen("click", (event) => this._onClick(event));
      listen("submit", (event) => this._onSubmit(event));
    }
    listen("pagehide", (event) => {
      this._rememberClaim();
      if (event.persisted) this._suspend();
      else this.close();
    });
    // Every history entry this document shows (pushState, replaceState, its own Back/Forward)
    // is this web view's: remembered for a later Back/Forward that reloads the document there.
    listen("popstate", () => this._rememberClaim());
    const navigation = win.navigation;
    if (navigation && typeof navigation.addEventListener === "function") {
      const fn = () => this._rememberClaim();
      navigation.addEventListener("currententrychange", fn);
      this._domCleanup.push(() => navigation.removeEventListener("currententrychange", fn));
    }
    listen("pageshow", (event) => {
      if (event.persisted && this.state === "suspended") {
        // Restored from the back-forward cache: the tab shows this page again.
        this._fromHistory = true;
        this.state = "reconnecting";
        this._open();
      }
    });
    if (this._keepClaimInUrl && this._history) this._wrapHistory();
  }

  /** The key of the tab's current history entry (see `historyEntryKey`). */
  _entryKey() {
    return historyEntryKey(this._window, this._location);
  }

  /** Remembers this web view's claim for the current history entry (see the constructor). */
  _rememberClaim() {
    if (!this._rememberClaims || !this.session || this.state === "closed") return;
    rememberClaim(this._storage, this._entryKey(), { session: this.session, webview: this.webview, token: this.token });
  }

  /** The page went into the back/forward cache: drop the socket, reconnect on pageshow. */
  _suspend() {
    if (this.state === "closed" || this.state === "suspended") return;
    if (this._timer !== null) {
      this._clearTimeout(this._timer);
      this._timer = null;
    }
    this.state = "suspended";
    const ws = this._ws;
    if (ws) {
      ws.close(1000, "pagehide");
      this._onSocketClosed({ code: 1000, reason: "pagehide" });
    }
    this._emit("connection", { state: "suspended" });
  }

  _wrapHistory() {
    const history = this._history;
    for (const name of ["pushState", "replaceState"]) {
      const original = history[name];
      if (typeof original !== "function") continue;
      const bridge = this;
      history[name] = function (state, title, url) {
        return original.call(this, state, title, url == null ? url : bridge._claimUrl(url));
      };
      this._domCleanup.push(() => {
        history[name] = original;
      });
    }
  }

  _claimUrl(url) {
    if (!this.session || !this._location) return url;
    try {
      const here = new URL(String(this._location.href));
      const there = new URL(String(url), here);
      if (there.origin !== here.origin) return url;
      return addClaim(there.href, this);
    } catch {
      return url;
    }
  }

  _interceptable(url) {
    if (this.state === "closed") return false;
    if (this._shouldIntercept) return Boolean(this._shouldIntercept(url));
    return !UNINTERCEPTED_SCHEMES.has(url.protocol);
  }

  _isSameDocument(url) {
    if (!url.href.includes("#")) return false; // no fragment: a new document (even the same url)
    const here = String(this._location?.href ?? "");
    return url.href.split("#")[0] === here.split("#")[0];
  }

  _targetsThisWindow(target) {
    const t = (target ?? "").trim().toLowerCase();
    if (t === "" || t === "_self") return true;
    if (t === "_top" || t === "_parent") return !this._window || this._window.top === this._window;
    return false;
  }

  _onClick(event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = findLink(event);
    if (!link || link.hasAttribute("download") || link.hasAttribute("data-bridge-ignore")) return;
    const target = link.hasAttribute("target")
      ? link.getAttribute("target")
      : this._document?.querySelector?.("base[target]")?.getAttribute("target");
    if (!this._targetsThisWindow(target)) return;
    const href = link.getAttribute("href") ?? link.getAttribute("xlink:href");
    if (href == null) return;
    let url;
    try {
      url = new URL(href, this._document?.baseURI ?? this._location?.href);
    } catch {
      return;
    }
    if (!this._interceptable(url) || this._isSameDocument(url)) return;
    event.preventDefault();
    this.navigate(url.href);
  }

  _onSubmit(event) {
    if (event.defaultPrevented) return;
    const form = event.target;
    if (!form || String(form.tagName).toLowerCase() !== "form" || form.hasAttribute("data-bridge-ignore")) return;
    const submitter = event.submitter ?? null;
    const attr = (name, formName) =>
      (submitter && submitter.hasAttribute?.(formName) ? submitter.getAttribute(formName) : null) ?? form.getAttribute(name);
    const method = (attr("method", "formmethod") ?? "get").trim().toLowerCase();
    if (method !== "get") return; // POST (a body) and dialog are left to the browser
    if (!this._targetsThisWindow(attr("target", "formtarget"))) return;
    let url;
    try {
      url = new URL(attr("action", "formaction") || String(this._location?.href), this._document?.baseURI ?? this._location?.href);
    } catch {
      return;
    }
    if (!this._interceptable(url) || (url.protocol !== "http:" && url.protocol !== "https:")) return;
    const FormDataCtor = this._window?.FormData ?? globalThis.FormData;
    let data;
    try {
      data = submitter ? new FormDataCtor(form, submitter) : new FormDataCtor(form);
    } catch {
      data = new FormDataCtor(form);
    }
    const query = new URLSearchParams();
    for (const [key, value] of data) query.append(key, typeof value === "string" ? value : value.name);
    url.search = query.toString();
    event.preventDefault();
    this.navigate(url.href);
  }
}

/** True when the document was loaded by the browser's Back or Forward button. */
// ---------------------------------------------------------------------------------------------
// The claims of the tab's history entries, in sessionStorage (one tab's, same origin; never in a
// URL the user could share). Keyed by the Navigation API's entry key where there is one (it
// stays with the entry across documents), else by the entry's URL without the claim.

const CLAIM_STORE = "bridged.claims";
const CLAIM_STORE_MAX = 64;

function sessionStorageOf(win) {
  try {
    return win?.sessionStorage ?? null;
  } catch {
    return null; // storage disabled
  }
}

/** The key of the current history entry: `e:` + its Navigation API key, or `u:` + its URL. */
function historyEntryKey(win, location) {
  try {
    const key = win?.navigation?.currentEntry?.key;
    if (typeof key === "string" && key !== "") return "e:" + key;
  } catch {
    // no Navigation API
  }
  const href = location ?? win?.location;
  return href ? "u:" + stripClaim(String(href.href ?? href)) : null;
}

function readClaims(storage) {
  try {
    const parsed = JSON.parse(storage.getItem(CLAIM_STORE) ?? "{}");
    return isPlainObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function writeClaims(storage, claims) {
  try {
    storage.setItem(CLAIM_STORE, JSON.stringify(claims));
  } catch {
    // full or disabled: Back to this entry starts a new session, as without the memory
  }
}

/** Stores `claim` for history entry `key` (the newest CLAIM_STORE_MAX entries are kept). */
function rememberClaim(storage, key, claim) {
  if (!storage || !key || !claim?.session) return;
  const claims = readClaims(storage);
  const old = claims[key];
  if (old && old.session === claim.session && old.webview === claim.webview && old.token === claim.token) return;
  delete claims[key]; // re-inserted last: the newest
  claims[key] = { session: claim.session, webview: claim.webview, token: claim.token };
  const keys = Object.keys(claims);
  for (const k of keys.slice(0, Math.max(0, keys.length - CLAIM_STORE_MAX))) delete claims[k];
  writeClaims(storage, claims);
}

/** The claim stored for history entry `key`, or null. */
function recallClaim(storage, key) {
  if (!storage || !key) return null;
  const claim = readClaims(storage)[key];
  if (!isPlainObject(claim)) return null;
  const { session, webview, token } = claim;
  return [session, webview, token].every((v) => typeof v === "string" && v !== "") ? { session, webview, token } : null;
}

function forgetClaim(storage, key) {
  if (!storage || !key) return;
  const claims = readClaims(storage);
  if (!(key in claims)) return;
  delete claims[key];
  writeClaims(storage, claims);
}

function cameByHistory(win) {
  try {
    const entry = win?.performance?.getEntriesByType?.("navigation")?.[0];
    return entry?.type === "back_forward";
  } catch {
    return false;
  }
}

function findLink(event) {
  const path = typeof event.composedPath === "function" ? event.composedPath() : [];
  const chain = path.length ? path : ancestors(event.target);
  for (const node of chain) {
    const tag = typeof node?.tagName === "string" ? node.tagName.toLowerCase() : "";
    if ((tag === "a" || tag === "area") && typeof node.hasAttribute === "function" &&
        (node.hasAttribute("href") || node.hasAttribute("xlink:href"))) {
      return node;
    }
  }
  return null;
}

function ancestors(node) {
  const list = [];
  for (let n = node; n; n = n.parentNode) list.push(n);
  return list;
}

// ---------------------------------------------------------------------------------------------

/** A bridge that starts connecting at once; calls made before the handshake are queued. */
export function createBridge(options = {}) {
  // In a browser session the daemon has injected a bridge already claimed for this web view:
  // the page uses it rather than opening a second session.
  const injected = globalThis.__bridgedInjected;
  if (injected && injected.bridge && options.window == null && options.WebSocket == null) return injected.bridge;
  return new Bridge(options);
}

/** Connects and resolves with the bridge after a successful `hello`. */
export function connect(options = {}) {
  return createBridge(options).ready;
}

/**
 * Installs `window.Astro` (`trigger`, `on`, `jsRpcMethod`, …) on top of a bridge, so that an
 * Astro-aware PWA runs unchanged. Synchronous: calls made before the handshake are queued.
 * An existing `window.Astro` that is not this shim is left alone (and returned).
 */
export function installAstroShim(options = {}) {
  const win = options.window ?? globalThis.window;
  if (!win) throw new TypeError("installAstroShim needs a window");
  if (win.Astro && (!win.Astro.__bridgeShim || win.__bridgedInjected)) return win.Astro;
  const bridge = options.bridge ?? createBridge({ window: win, ...options });
  const call = (method, params) => {
    if (method === "pwa-navigate") return bridge.pwaNavigate(params);
    if (method === "pwa-rendered") return bridge.pwaRendered();
    return bridge.request(method, params);
  };
  const Astro = {
    __bridgeShim: true,
    bridge,
    isRunningInApp: () => true,
    trigger(name, params) {
      return bridge.trigger(name, isPlainObject(params) ? params : {});
    },
    on(name, callback) {
      return bridge.on(name, callback);
    },
    jsRpcMethod(method, argNames = []) {
      const names = Array.isArray(argNames) ? argNames : [];
      return function (...args) {
        const callback = typeof args[args.length - 1] === "function" ? args.pop() : null;
        const params = {};
        names.forEach((name, index) => {
          if (args[index] !== undefined) params[name] = args[index];
        });
        const promise = call(method, params);
        if (!callback) return promise;
        return promise.then(
          (result) => {
            callback(null, result);
            return result;
          },
          (error) => {
            callback(error, null);
            return undefined;
          },
        );
      };
    },
  };
  Astro.nativeRpcMethod = Astro.jsRpcMethod;
  win.Astro = Astro;
  return Astro;
}

// `<script type="module" src="/bridge.js?astro">` installs the shim as the module loads.
if (typeof window !== "undefined" && typeof document !== "undefined") {
  try {
    if (new URL(import.meta.url).searchParams.has("astro")) installAstroShim();
  } catch (error) {
    globalThis.console?.error?.("bridge: could not install the Astro shim", error);
  }
}
