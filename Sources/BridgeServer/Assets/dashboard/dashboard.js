// The bridged dashboard: every session's stack, live. No dependencies, no build step.
//
// The page connects to /bridge as a read-only `observer` (it may list, get and subscribe; it
// never changes a session and never sees a token), subscribes to every session and applies the
// events it is pushed. With the controller token (the field at the top, or `#token=…` in the
// address) it also opens a controller connection for the back / popToRoot / close buttons.
//
// Rendering is batched: events only update the model and mark sessions dirty; one animation
// frame (or a 50 ms timer when frames are throttled) draws the dirty sessions of the page shown.
// Sessions are paged (PAGE_SIZE per page), so 1,000 sessions changing at once cost 1,000 model
// updates and at most one page of DOM work per frame.

const PAGE_SIZE = Number(new URLSearchParams(location.search).get("pageSize")) || 50;
const TIMELINE_MAX = 60; // entries kept per session
const LATENCY_MAX = 1000; // render latencies kept per session (p50 / p99 over these)
const CLOSED_LINGER_MS = 4000; // a closed session stays visible (greyed) this long

const $ = (id) => document.getElementById(id);

/** Wall-clock milliseconds with sub-millisecond precision (for the tests' event → DOM timing). */
const wallNow = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// The model

/** @type {Map<string, Session>} in creation order (Map keeps insertion order) */
const sessions = new Map();
const dirty = new Set();
let listDirty = true;
let page = 0;
let filter = "";
let canControl = false;
let eventsSeen = 0;
let eventsThisSecond = 0;

class Session {
  constructor(id) {
    this.id = id;
    this.stack = [];
    this.foreground = null; // {webview, kind, shownAt (performance.now()), timeoutMs}
    this.timeline = []; // newest last: {at, cls, text}
    this.latencies = []; // ms, pwa-navigate → pwa-rendered
    this.closed = false;
    this.noSnapshots = false; // a placeholder image failed: this session has none
    this.eventAt = 0; // wall clock of the last event applied
  }
  note(cls, text) {
    this.timeline.push({ at: new Date(), cls, text });
    if (this.timeline.length > TIMELINE_MAX) this.timeline.splice(0, this.timeline.length - TIMELINE_MAX);
  }
}

/** A stack in the seed's notation: `P1 W1(*P) W2(*C)~ N1`. */
export function notation(stack) {
  return stack.map((item) => {
    if (item.kind !== "webview") return item.id;
    return `${item.id}(*${item.mode === "pwa" ? "P" : "C"})${item.connected ? "" : "~"}`;
  }).join(" ");
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

function session(id) {
  let s = sessions.get(id);
  if (!s) {
    s = new Session(id);
    sessions.set(id, s);
    listDirty = true;
  }
  return s;
}

function applyEvent(name, p) {
  eventsSeen += 1;
  eventsThisSecond += 1;
  if (typeof p.session !== "string") return;
  if (name === "session.closed") {
    const s = sessions.get(p.session);
    if (!s) return;
    s.closed = true;
    s.foreground = null;
    s.note("error", `session closed (${p.reason})`);
    markDirty(s);
    setTimeout(() => {
      if (sessions.get(s.id) === s && s.closed) {
        sessions.delete(s.id);
        listDirty = true;
        schedule();
      }
    }, CLOSED_LINGER_MS);
    return;
  }
  const s = session(p.session);
  switch (name) {
    case "session.created":
      s.note("page", "session created");
      break;
    case "stack.changed":
      s.stack = Array.isArray(p.stack) ? p.stack : [];
      s.note("stack", `${p.cause}: ${notation(s.stack)}`);
      break;
    case "foreground.shown":
      s.foreground = { webview: p.webview, kind: p.kind, shownAt: performance.now(), timeoutMs: p.timeoutMs };
      s.note("fg", `foreground ${p.kind} over ${p.webview} (fallback in ${p.timeoutMs} ms)`);
      break;
    case "foreground.removed": {
      const shown = s.foreground;
      if (shown && shown.webview === p.webview) s.foreground = null;
      if (p.reason === "rendered" && (!shown || shown.kind === "blank")) {
        s.latencies.push(p.latencyMs);
        if (s.latencies.length > LATENCY_MAX) s.latencies.shift();
      }
      s.note(p.reason === "timeout" ? "late" : "fg", `foreground over ${p.webview} removed: ${p.reason} after ${p.latencyMs} ms`);
      break;
    }
    case "pwa-rendered":
      if (p.late) s.note("late", `late pwa-rendered from ${p.webview}: its foreground had already timed out`);
      break;
    case "webview.open":
      s.note("page", `web view ${p.webview} opened for ${p.url}`);
      break;
    case "webview.closed":
      s.note("page", `web view ${p.webview} closed`);
      break;
    case "page.connected":
      s.note("page", `page connected to ${p.webview}`);
      break;
    case "page.disconnected":
      s.note("page", `page of ${p.webview} disconnected${p.reason ? ` (${p.reason})` : ""}`);
      break;
    case "pwa-navigated":
      s.note("page", `${p.webview} at ${p.url}`);
      break;
    case "app.event":
      s.note("page", `app event ${p.name} from ${p.webview}`);
      break;
    case "external.open":
      s.note("page", `external link ${p.url}`);
      break;
    default:
      s.note("page", name);
  }
  s.eventAt = wallNow();
  markDirty(s);
}

/** The state of every session at once (session.list), newer than any event received before it. */
function applyList(list) {
  const seen = new Set();
  for (const entry of list) {
    const s = session(entry.session);
    seen.add(s.id);
    s.stack = entry.stack ?? [];
    s.closed = false;
    const fg = entry.foreground;
    s.foreground = fg ? { webview: fg.webview, kind: fg.kind, shownAt: performance.now() - (fg.sinceMs ?? 0),
      timeoutMs: fg.timeoutMs ?? 1000 } : null;
    markDirty(s);
  }
  for (const [id] of sessions) {
    if (!seen.has(id)) sessions.delete(id);
  }
  listDirty = true;
  schedule();
}

function markDirty(s) {
  dirty.add(s.id);
  schedule();
}

// ---------------------------------------------------------------------------------------------
// Connections

class Connection {
  constructor(role, token) {
    this.role = role;
    this.token = token;
    this.nextId = 1;
    this.pending = new Map();
    this.onEvent = null;
    this.onClose = null;
    this.ready = new Promise((resolve, reject) => {
      const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/bridge";
      const ws = new WebSocket(url);
      this.ws = ws;
      ws.onopen = () => {
        const params = { protocol: 1, role };
        if (token) params.token = token;
        this.request("hello", params).then(resolve, reject);
      };
      ws.onmessage = (message) => this.receive(message.data);
      ws.onclose = (event) => {
        const error = new Error(`connection closed (${event.code})`);
        error.code = "closed";
        for (const [, p] of this.pending) p.reject(error);
        this.pending.clear();
        reject(error);
        this.onClose?.(event);
      };
      ws.onerror = () => {};
    });
    this.ready.catch(() => {});
  }

  request(method, params = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof frame.event === "string" && !("id" in frame)) {
      this.onEvent?.(frame.event, frame.params ?? {});
      return;
    }
    const p = this.pending.get(frame.id);
    if (!p) return;
    this.pending.delete(frame.id);
    if (frame.error) {
      const error = new Error(`${frame.error.code}: ${frame.error.message}`);
      error.code = frame.error.code;
      p.reject(error);
    } else {
      p.resolve(frame.result ?? {});
    }
  }

  close() {
    try {
      this.ws.close(1000);
    } catch {
      // already closed
    }
  }
}

let observer = null;
let controller = null;
let retryMs = 250;
let token = readToken();

function readToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    sessionStorage.setItem("bridged.token", fromHash);
    history.replaceState(history.state, "", location.pathname + location.search); // not left in the address bar
    return fromHash;
  }
  return sessionStorage.getItem("bridged.token") ?? "";
}

function showConnection(state, text) {
  $("conn").dataset.state = state;
  $("conn").textContent = text ?? state;
}

function showError(text) {
  $("error").hidden = !text;
  $("error").textContent = text ?? "";
}

async function observe() {
  showConnection("connecting");
  const conn = new Connection("observer", token || undefined);
  observer = conn;
  conn.onEvent = applyEvent;
  conn.onClose = () => {
    if (observer !== conn) return;
    showConnection("closed", `disconnected; retrying in ${retryMs} ms`);
    setTimeout(observe, retryMs);
    retryMs = Math.min(5000, retryMs * 2);
  };
  let hello;
  try {
    hello = await conn.ready;
  } catch (error) {
    if (error.code === "not-allowed" && token) {
      // A wrong token in the field: watch without it (loopback) and say so.
      showError(`the token was refused (${error.message}); watching read-only`);
      token = "";
      sessionStorage.removeItem("bridged.token");
      conn.onClose = null;
      conn.close();
      observe();
    } else if (error.code !== "closed") {
      showError(`the daemon refused the dashboard: ${error.message}`);
    }
    return;
  }
  retryMs = 250;
  showConnection("open", `live · ${hello.observer}`);
  canControl = Boolean(token) || hello.tokenRequired === false;
  listDirty = true;
  try {
    await conn.request("session.subscribe", {});
    const { sessions: list } = await conn.request("session.list", {});
    applyList(list);
  } catch (error) {
    showError(`could not list sessions: ${error.message}`);
  }
}

async function control(method, sid) {
  const s = sessions.get(sid);
  try {
    if (!controller) {
      controller = new Connection("controller", token || undefined);
      controller.onClose = () => {
        controller = null;
      };
    }
    await controller.ready;
    const result = await controller.request(method, { session: sid });
    if (s && method !== "session.close") {
      s.note("fg", `${method}: ${result.action ?? ""} ${result.removed ? `removed ${result.removed.join(" ") || "nothing"}` : ""}`);
      markDirty(s);
    }
  } catch (error) {
    controller?.close();
    controller = null;
    if (s) {
      s.note("error", `${method} failed: ${error.message}`);
      markDirty(s);
    } else {
      showError(`${method} failed: ${error.message}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Drawing

const cards = new Map(); // session id → element
let frameRequested = false;
let fallbackTimer = null;
let countdownRunning = false;

function schedule() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(flush);
  // Frames stop in hidden tabs; the model must still reach the DOM.
  fallbackTimer = setTimeout(flush, 50);
}

function visibleIds() {
  const ids = [];
  for (const [id] of sessions) if (!filter || id.includes(filter)) ids.push(id);
  return ids;
}

function flush() {
  if (!frameRequested) return;
  frameRequested = false;
  clearTimeout(fallbackTimer);
  const ids = visibleIds();
  const pages = Math.max(1, Math.ceil(ids.length / PAGE_SIZE));
  if (page >= pages) {
    page = pages - 1;
    listDirty = true;
  }
  const shown = ids.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  if (listDirty) {
    listDirty = false;
    const keep = new Set(shown);
    for (const [id, el] of cards) {
      if (!keep.has(id)) {
        el.remove();
        cards.delete(id);
      }
    }
    const root = $("sessions");
    let previous = null;
    for (const id of shown) {
      let el = cards.get(id);
      if (!el) {
        el = document.createElement("section");
        el.className = "session";
        el.dataset.session = id;
        cards.set(id, el);
        dirty.add(id);
      }
      const expected = previous ? previous.nextSibling : root.firstChild;
      if (expected !== el) root.insertBefore(el, expected);
      previous = el;
    }
    $("empty").hidden = shown.length > 0;
    if (!$("empty").isConnected) root.append($("empty"));
    $("pager").hidden = pages <= 1;
    $("page-info").textContent = `page ${page + 1} of ${pages} (${ids.length} sessions)`;
  }
  for (const id of dirty) {
    const el = cards.get(id);
    const s = sessions.get(id);
    if (el && s) drawSession(el, s);
  }
  dirty.clear();
  $("count").textContent = String(sessions.size);
  startCountdown();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function button(label, method, sid) {
  const b = el("button", null, label);
  b.type = "button";
  b.dataset.action = method;
  b.addEventListener("click", () => control(method, sid));
  return b;
}

function drawSession(card, s) {
  card.classList.toggle("closed", s.closed);
  const header = el("header");
  header.append(el("code", "sid", s.id));
  const sorted = [...s.latencies].sort((a, b) => a - b);
  const lat = el("span", "lat", sorted.length
    ? `render p50 ${percentile(sorted, 50)} ms · p99 ${percentile(sorted, 99)} ms (${sorted.length})`
    : "render latency: none yet");
  header.append(lat);
  if (canControl && !s.closed) {
    const actions = el("span", "actions");
    actions.append(button("back", "navigation.back", s.id), button("popToRoot", "navigation.popToRoot", s.id),
      button("close", "session.close", s.id));
    header.append(actions);
  }

  const stack = el("div", "stack");
  for (const item of s.stack) stack.append(drawItem(s, item));

  const timeline = el("ol", "timeline");
  for (let i = s.timeline.length - 1; i >= 0; i--) {
    const entry = s.timeline[i];
    const li = el("li", entry.cls);
    li.append(el("time", null, entry.at.toISOString().slice(11, 23)), document.createTextNode(entry.text));
    timeline.append(li);
  }
  card.replaceChildren(header, stack, timeline);
  card.dataset.stack = s.stack.map((i) => i.id).join(" ");
  card.dataset.notation = notation(s.stack);
  card.dataset.renderedAt = String(wallNow());
}

function drawItem(s, item) {
  const box = el("div", `item ${item.kind}`);
  box.dataset.id = item.id;
  box.title = item.url ?? "";
  box.append(el("div", "id", item.id));
  if (item.kind === "webview") {
    box.classList.add(item.mode === "pwa" ? "pwa" : "classic");
    if (!item.connected) box.classList.add("off");
    box.append(el("div", "mode", item.mode === "pwa" ? "*P" : "*C"));
    const fg = s.foreground;
    if (fg && fg.webview === item.id) {
      const cover = el("div", "cover");
      cover.dataset.kind = fg.kind;
      cover.append(el("span", null, fg.kind === "blank" ? "foreground" : "placeholder"));
      const count = el("span", "count");
      count.dataset.shownAt = String(fg.shownAt);
      count.dataset.timeoutMs = String(fg.timeoutMs);
      cover.append(count);
      box.append(cover);
    }
  } else if (item.kind === "placeholder" && !s.noSnapshots) {
    const img = el("img", "thumb");
    img.alt = `${item.id} snapshot`;
    img.loading = "lazy";
    img.src = `/api/sessions/${encodeURIComponent(s.id)}/placeholders/${encodeURIComponent(item.id)}.jpg`;
    img.addEventListener("error", () => {
      s.noSnapshots = true; // not a browser session (or no image yet): no more requests for it
      img.remove();
    }, { once: true });
    box.append(img);
  }
  return box;
}

/** The fallback countdowns: one loop while any shown session has a foreground up. */
function startCountdown() {
  if (countdownRunning) return;
  countdownRunning = true;
  const tick = () => {
    const counts = document.querySelectorAll(".cover .count");
    const now = performance.now();
    for (const c of counts) {
      const left = Math.max(0, Number(c.dataset.timeoutMs) - (now - Number(c.dataset.shownAt)));
      c.textContent = left > 0 ? `${Math.ceil(left)} ms` : "fallback due";
    }
    if (counts.length) requestAnimationFrame(tick);
    else countdownRunning = false;
  };
  tick();
}

// ---------------------------------------------------------------------------------------------
// Controls

$("filter").addEventListener("input", (event) => {
  filter = event.target.value.trim();
  page = 0;
  listDirty = true;
  schedule();
});
$("prev").addEventListener("click", () => {
  page = Math.max(0, page - 1);
  listDirty = true;
  schedule();
});
$("next").addEventListener("click", () => {
  page += 1;
  listDirty = true;
  schedule();
});
$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = $("token").value.trim();
  $("token").value = "";
  useToken(value);
});
// `#token=…` typed into the address bar of an open dashboard.
window.addEventListener("hashchange", () => {
  if (!new URLSearchParams(location.hash.slice(1)).has("token")) return;
  useToken(readToken());
});

/** Reconnects with `value` as the token ("" for none). */
function useToken(value) {
  token = value;
  if (token) sessionStorage.setItem("bridged.token", token);
  else sessionStorage.removeItem("bridged.token");
  showError(null);
  controller?.close();
  controller = null;
  const old = observer;
  observer = null;
  old?.close();
  observe();
}
setInterval(() => {
  $("rate").textContent = String(eventsThisSecond);
  eventsThisSecond = 0;
}, 1000);

// For tests and the curious.
window.dashboard = {
  sessions,
  notation,
  get eventsSeen() {
    return eventsSeen;
  },
  get canControl() {
    return canControl;
  },
};

observe();
