// Test doubles for the js-client: a scriptable WebSocket, a page (location, history, window,
// document) without a DOM, manual timers. Used by bridge.test.js; holds no tests itself.

/** A WebSocket class whose instances the test drives: open(), receive(), drop(). */
export function makeSocketClass() {
  class FakeWebSocket {
    static instances = [];
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.readyState = 0;
      this.closedWith = null;
      FakeWebSocket.instances.push(this);
    }
    send(data) {
      if (this.readyState !== 1) throw new Error("send on a socket that is not open");
      this.sent.push(JSON.parse(data));
    }
    close(code, reason) {
      this.closedWith = { code, reason };
      this.readyState = 2;
    }
    // --- test side ---
    open() {
      this.readyState = 1;
      this.onopen?.({});
    }
    receive(frame) {
      this.onmessage?.({ data: typeof frame === "string" ? frame : JSON.stringify(frame) });
    }
    drop(code = 1006, reason = "") {
      this.readyState = 3;
      this.onclose?.({ code, reason });
    }
    sentMethods() {
      return this.sent.map((f) => f.method ?? "event:" + f.event);
    }
    static get last() {
      return FakeWebSocket.instances[FakeWebSocket.instances.length - 1];
    }
  }
  return FakeWebSocket;
}

/** Timers that run only when the test says so. */
export function makeTimers() {
  const timers = {
    pending: [],
    nextId: 1,
    setTimeout(fn, delay) {
      const id = timers.nextId++;
      timers.pending.push({ id, fn, delay });
      return id;
    },
    clearTimeout(id) {
      timers.pending = timers.pending.filter((t) => t.id !== id);
    },
    runNext() {
      const t = timers.pending.shift();
      if (!t) throw new Error("no timer pending");
      t.fn();
      return t.delay;
    },
  };
  return timers;
}

/** A page at `href`: location, history (with a list of entries), window, document. */
export function makePage(href = "http://127.0.0.1:8787/app/") {
  const listeners = new Map();
  const location = {
    href,
    replaced: [],
    replace(url) {
      this.replaced.push(new URL(url, this.href).href);
    },
    toString() {
      return this.href;
    },
  };
  const history = {
    state: null,
    backs: 0,
    pushed: [],
    replaceState(state, _title, url) {
      this.state = state;
      if (url != null) location.href = new URL(url, location.href).href;
    },
    pushState(state, _title, url) {
      this.state = state;
      if (url != null) location.href = new URL(url, location.href).href;
      this.pushed.push(location.href);
    },
    back() {
      this.backs += 1;
    },
  };
  const window = {
    location,
    history,
    addEventListener(type, fn) {
      if (!listeners.has(type)) listeners.set(type, new Set());
      listeners.get(type).add(fn);
    },
    removeEventListener(type, fn) {
      listeners.get(type)?.delete(fn);
    },
    dispatch(type, event) {
      for (const fn of [...(listeners.get(type) ?? [])]) fn(event);
      return event;
    },
    listenerCount(type) {
      return listeners.get(type)?.size ?? 0;
    },
  };
  window.top = window;
  const document = {
    get baseURI() {
      return location.href;
    },
  };
  return { window, location, history, document };
}

/** A sessionStorage: getItem / setItem over a Map. */
export function makeStorage() {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => void items.set(key, String(value)),
    removeItem: (key) => void items.delete(key),
  };
}

/** An element with attributes, enough for the client's link and form handling. */
export function element(tagName, attributes = {}, parent = null) {
  return {
    tagName: tagName.toUpperCase(),
    parentNode: parent,
    attributes: { ...attributes },
    hasAttribute(name) {
      return Object.prototype.hasOwnProperty.call(this.attributes, name);
    },
    getAttribute(name) {
      return this.hasAttribute(name) ? this.attributes[name] : null;
    },
  };
}

/** A click (or other) event; `preventDefault` is recorded. */
export function domEvent(target, props = {}) {
  const path = [];
  for (let n = target; n; n = n.parentNode) path.push(n);
  return {
    target,
    button: 0,
    metaKey: false,
    ctrlKey: false,
    shiftKey: false,
    altKey: false,
    defaultPrevented: false,
    preventDefault() {
      this.defaultPrevented = true;
    },
    composedPath: () => path,
    ...props,
  };
}

/** The hello result the daemon gives a page. */
export function helloResult(overrides = {}) {
  const session = overrides.session ?? "s-1";
  const webview = overrides.webview ?? "W1";
  const token = overrides.token ?? "tok1";
  const url = overrides.url ?? "http://127.0.0.1:8787/app/";
  return {
    protocol: 1,
    session,
    webview,
    token,
    pageUrl: overrides.pageUrl ??
      url.replace(/(#.*)?$/, (frag) => `${url.includes("?") ? "&" : "?"}bridge_session=${session}&bridge_webview=${webview}&bridge_token=${token}${frag}`),
    stack: overrides.stack ?? [{ id: webview, kind: "webview", mode: "classic", url, title: null, connected: true }],
  };
}
