// The Capacitor native side injected into capacitor sessions (js-client/capacitor/capacitor.js),
// run in a fake page with the test app's stand-in runtimes of core 3 and core 8
// (Tests/integration/capacitor_app/runtime-v*.js); `node --test js-client/test/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const source = readFileSync(new URL("../capacitor/capacitor.js", import.meta.url), "utf8");
const runtimes = {
  3: readFileSync(new URL("../../Tests/integration/capacitor_app/runtime-v3.js", import.meta.url), "utf8"),
  8: readFileSync(new URL("../../Tests/integration/capacitor_app/runtime-v8.js", import.meta.url), "utf8"),
};

const base = [
  { name: "addListener" }, { name: "removeListener" }, { name: "removeAllListeners", rtype: "promise" },
  { name: "checkPermissions", rtype: "promise" }, { name: "requestPermissions", rtype: "promise" },
];
const header = (name, methods) => ({ name, methods: [...base, ...methods.map((m) => (typeof m === "string" ? { name: m, rtype: "promise" } : m))] });
const plugins = [
  header("App", ["exitApp", "getInfo", "getState", "getLaunchUrl", "minimizeApp"]),
  header("Preferences", ["get", "set", "remove", "clear", "keys"]),
  header("Storage", ["get", "set", "remove", "clear", "keys"]),
  header("Device", ["getInfo", "getId"]),
  header("Network", ["getStatus"]),
  { name: "Watcher", methods: [...base, { name: "watch", rtype: "callback" }, { name: "fireAndForget", rtype: "none" }] },
];

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

/** capacitor.js, then a runtime, in a fake page; returns what it sent and a way to drive it. */
function load({ platform = "android", core = 8, config = {}, withBridge = true } = {}) {
  const sent = [];
  const handlers = new Map();
  const prompts = [];
  let cookieJar = "a=1";
  class Document {}
  Object.defineProperty(Document.prototype, "cookie", {
    configurable: true,
    get() { return cookieJar; },
    set(v) { cookieJar = cookieJar ? `${cookieJar}; ${String(v).split(";")[0]}` : String(v).split(";")[0]; },
  });
  const document = Object.assign(Object.create(Document.prototype), makeTarget(), {
    readyState: "loading",
    createEvent() {
      return { initEvent(type, bubbles, cancelable) { Object.assign(this, { type, bubbles, cancelable }); } };
    },
    querySelector: () => null,
  });
  const window = Object.assign(makeTarget(), {
    location: { href: "https://localhost/" },
    navigator: {},
    console: { log() {}, warn() {}, error() {}, info() {}, debug() {} },
    Document,
    prompt: (text) => {
      prompts.push(text);
      return "from-the-browser";
    },
  });
  if (withBridge) {
    window.__bridgedInjected = {
      bridge: {
        trigger: (name, params) => sent.push([name, JSON.parse(JSON.stringify(params))]),
        on: (name, fn) => handlers.set(name, fn),
      },
    };
  }
  window.top = window;
  window.document = document;
  const context = vm.createContext({ window, document, URL, Promise, Proxy, JSON, Map, Set, Math, Error, console: window.console });
  const settings = { platform, plugins, config, serverUrl: "https://localhost", debug: false };
  vm.runInContext(source.replace("/*@CAPACITOR_CONFIG@*/ null", JSON.stringify(settings)), context);
  vm.runInContext(runtimes[core], context);
  const exports = window.capacitorExports;
  const calls = () => sent.filter(([n]) => n === "capacitor.call").map(([, p]) => p);
  const emit = (name, params) => handlers.get(name)(params);
  const answer = (call, fields) => emit("capacitor.result", { callbackId: call.callbackId, plugin: call.plugin, method: call.method, save: false, ...fields });
  return { sent, handlers, window, document, exports, calls, emit, answer, prompts, context };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

for (const platform of ["android", "ios"]) {
  for (const core of [3, 8]) {
    const name = `${platform}, core ${core}`;

    test(`${name}: the page is native, with the session's plugins`, () => {
      const page = load({ platform, core });
      const { Capacitor } = page.exports;
      assert.equal(Capacitor.getPlatform(), platform);
      assert.equal(Capacitor.isNativePlatform(), true);
      for (const n of ["App", "Preferences", "Storage", "Device", "Network"]) assert.equal(Capacitor.isPluginAvailable(n), true, n);
      assert.equal(Capacitor.isPluginAvailable("Geolocation"), false);
      assert.equal(Capacitor.isPluginAvailable("Camera"), false);
      assert.deepEqual(page.sent[0], ["capacitor.ready", { platform, url: "https://localhost/" }]);
      if (platform === "android") {
        assert.equal(typeof page.window.androidBridge.postMessage, "function");
        assert.equal(typeof page.window.androidBridge.onmessage, "function");
        assert.equal(page.window.webkit, undefined);
      } else {
        assert.equal(typeof page.window.webkit.messageHandlers.bridge.postMessage, "function");
        assert.equal(page.window.androidBridge, undefined);
      }
      assert.equal(page.window.WEBVIEW_SERVER_URL, "https://localhost");
      // The headers: base methods first, rtype "none" left out.
      const app = Capacitor.PluginHeaders.find((h) => h.name === "App");
      assert.deepEqual(JSON.parse(JSON.stringify(app.methods.slice(0, 3))), [
        { name: "addListener" }, { name: "removeListener" }, { name: "removeAllListeners", rtype: "promise" }]);
      const watcher = Capacitor.PluginHeaders.find((h) => h.name === "Watcher");
      assert.deepEqual(JSON.parse(JSON.stringify(watcher.methods.slice(-2))), [{ name: "watch", rtype: "callback" }, { name: "fireAndForget" }]);
      assert.equal(Capacitor.convertFileSrc("/data/photo.jpg"), "https://localhost/_capacitor_file_/data/photo.jpg");
      assert.equal(Capacitor.convertFileSrc("file:///data/photo.jpg"), "https://localhost/_capacitor_file_/data/photo.jpg");
      assert.equal(Capacitor.convertFileSrc("content://media/1"), "https://localhost/_capacitor_content_/media/1");
      assert.equal(Capacitor.convertFileSrc("https://x/y"), "https://x/y");
      if (core === 3) {
        assert.equal(Capacitor.platform, platform);
        assert.equal(Capacitor.isNative, true);
      }
    });

    test(`${name}: a plugin call becomes capacitor.call and its result settles the app's promise`, async () => {
      const page = load({ platform, core });
      const { registerPlugin } = page.exports;
      const App = registerPlugin("App", { web: () => ({}) });
      const info = App.getInfo();
      await tick();
      const call = page.calls()[0];
      assert.match(call.callbackId, /^[0-9]+$/);
      assert.deepEqual({ ...call, callbackId: "x" }, { callbackId: "x", plugin: "App", method: "getInfo", options: {}, save: false });
      page.answer(call, { success: true, data: { name: "Demo", id: "com.example.demo", build: "7", version: "1.2.3" } });
      assert.deepEqual(JSON.parse(JSON.stringify(await info)), { name: "Demo", id: "com.example.demo", build: "7", version: "1.2.3" });
      // A bare resolve: undefined.
      const Preferences = registerPlugin("Preferences");
      const setting = Preferences.set({ key: "k", value: "v" });
      await tick();
      const set = page.calls()[1];
      assert.deepEqual(set.options, { key: "k", value: "v" });
      page.answer(set, { success: true });
      assert.equal(await setting, undefined);
      // A rejection: the runtime's Exception, with the message and code.
      const Device = registerPlugin("Device");
      const failing = Device.getInfo();
      await tick();
      page.answer(page.calls()[2], { success: false, error: { message: "no device", code: "UNAVAILABLE", data: { reason: "mocked" } } });
      await assert.rejects(failing, (e) => {
        assert.equal(e.message, "no device");
        assert.equal(e.code, "UNAVAILABLE");
        if (platform === "ios") {
          assert.equal(e.errorMessage, "no device", "iOS flattens the error");
          assert.equal(e.reason, "mocked");
        } else {
          assert.deepEqual(JSON.parse(JSON.stringify(e.data)), { reason: "mocked" }, "Android nests it");
        }
        return true;
      });
      // An answer for a call nobody waits for is ignored.
      page.emit("capacitor.result", { callbackId: "999", plugin: "App", method: "getInfo", success: true, data: {}, save: false });
    });

    test(`${name}: listeners are save:true calls that get every notification until removed`, async () => {
      const page = load({ platform, core });
      const { registerPlugin } = page.exports;
      const Network = registerPlugin("Network");
      const seen = [];
      const handle = await Network.addListener("networkStatusChange", (status) => seen.push(status));
      const call = page.calls()[0];
      assert.deepEqual({ ...call, callbackId: "x" }, { callbackId: "x", plugin: "Network", method: "addListener", options: { eventName: "networkStatusChange" }, save: true });
      const notify = (data) => page.emit("capacitor.result", { callbackId: call.callbackId, plugin: "Network", method: "addListener", success: true, data, save: true });
      notify({ connected: false, connectionType: "none" });
      notify({ connected: true, connectionType: "wifi" });
      assert.deepEqual(JSON.parse(JSON.stringify(seen)), [{ connected: false, connectionType: "none" }, { connected: true, connectionType: "wifi" }]);
      await handle.remove();
      await tick();
      const removal = page.calls()[1];
      assert.equal(removal.method, "removeListener");
      assert.deepEqual(removal.options, { eventName: "networkStatusChange", callbackId: call.callbackId });
      // A save:false answer is delivered, then the stored callback is dropped.
      page.emit("capacitor.result", { callbackId: call.callbackId, plugin: "Network", method: "addListener", success: true, data: { last: true }, save: false });
      notify({ connected: false, connectionType: "none" });
      assert.equal(seen.length, 3);
      assert.deepEqual(JSON.parse(JSON.stringify(seen[2])), { last: true });
    });

    test(`${name}: callback methods (rtype callback) and calls nobody waits for`, async () => {
      const page = load({ platform, core });
      const { registerPlugin, Capacitor } = page.exports;
      const Watcher = registerPlugin("Watcher");
      const seen = [];
      const id = await Watcher.watch({ every: 1 }, (data, err) => seen.push([data, err && err.message]));
      const call = page.calls()[0];
      assert.equal(id, call.callbackId, "the callback id is what the method resolves to");
      assert.equal(call.save, true);
      page.answer(call, { success: true, data: { n: 1 }, save: true });
      page.answer(call, { success: false, error: { message: "lost" }, save: true });
      assert.deepEqual(JSON.parse(JSON.stringify(seen)), [[{ n: 1 }, null], [null, "lost"]]);
      // navigator.app.exitApp(): App.exitApp with callbackId "-1".
      Capacitor.Plugins.App = Capacitor.Plugins.App || {};
      page.window.navigator.app.exitApp();
      assert.deepEqual(page.calls().at(-1), { callbackId: "-1", plugin: "App", method: "exitApp", options: {}, save: false });
    });

    test(`${name}: a plugin the session lacks rejects as not implemented and is reported unavailable`, async () => {
      const page = load({ platform, core });
      const { registerPlugin } = page.exports;
      const Geolocation = registerPlugin("Geolocation", { web: () => ({ getCurrentPosition: async () => ({}) }) });
      await assert.rejects(Geolocation.getCurrentPosition({ timeout: 5 }), (e) => {
        assert.equal(e.code, "UNIMPLEMENTED");
        assert.equal(e.message, `"Geolocation" plugin is not implemented on ${platform}`);
        return true;
      });
      assert.deepEqual(page.calls().at(-1), {
        callbackId: null, plugin: "Geolocation", method: "getCurrentPosition", options: { timeout: 5 }, save: false, unavailable: true,
      });
      // The legacy call through Capacitor.Plugins (where the runtime keeps its proxy) is reported too.
      const before = page.calls().length;
      await assert.rejects(page.exports.Capacitor.Plugins.Geolocation.getCurrentPosition({ timeout: 6 }), (e) => e.code === "UNIMPLEMENTED");
      assert.equal(page.calls().length, before + 1);
      assert.deepEqual(page.calls().at(-1).options, { timeout: 6 });
      assert.equal(page.calls().at(-1).unavailable, true);
      // A plugin with a JS implementation for the platform is not watched (Motion on devices).
      const Motion = registerPlugin("Motion", { [platform]: () => ({ ping: async () => "js" }) });
      assert.equal(await Motion.ping(), "js");
      assert.equal(page.calls().filter((c) => c.plugin === "Motion").length, 0);
      // Capacitor's own CapacitorHttp/CapacitorCookies: their web implementation serves the platform.
      const CapacitorHttp = registerPlugin("CapacitorHttp", { web: () => ({ request: async (o) => ({ status: 200, url: o.url }) }) });
      assert.deepEqual(JSON.parse(JSON.stringify(await CapacitorHttp.request({ url: "https://x.test/" }))), { status: 200, url: "https://x.test/" });
      assert.equal(page.exports.Capacitor.isPluginAvailable("CapacitorHttp"), true);
      assert.equal(page.calls().filter((c) => c.plugin === "CapacitorHttp").length, 0);
      // A method the header lacks: not implemented either.
      const App = registerPlugin("App");
      await assert.rejects(App.getAppLanguage(), (e) => e.code === "UNIMPLEMENTED" && e.message === `"App.getAppLanguage()" is not implemented on ${platform}`);
    });

    test(`${name}: capacitor.trigger dispatches the document or window event`, () => {
      const page = load({ platform, core });
      const seen = [];
      page.document.addEventListener("backbutton", (e) => seen.push(["document", e.type, e.bubbles]));
      page.window.addEventListener("keyboardWillShow", (e) => seen.push(["window", e.type, e.keyboardHeight]));
      page.emit("capacitor.trigger", { eventName: "backbutton", target: "document", data: {} });
      page.emit("capacitor.trigger", { eventName: "keyboardWillShow", target: "window", data: { keyboardHeight: 300 } });
      assert.deepEqual(seen, [["document", "backbutton", false], ["window", "keyboardWillShow", 300]]);
      // A document `backbutton` listener also adds an App backButton listener (Cordova compat).
      assert.ok(page.calls().some((c) => c.plugin === "App" && c.method === "addListener" && c.options.eventName === "backButton"));
    });

    test(`${name}: deviceready runs its handler at once (in a microtask)`, async () => {
      const page = load({ platform, core });
      let ran = false;
      page.document.addEventListener("deviceready", () => { ran = true; });
      assert.equal(ran, false);
      await tick();
      assert.equal(ran, true);
    });
  }
}

test("iOS: the bridge's synchronous prompts are answered as iOS does, other prompts reach the browser", () => {
  const page = load({ platform: "ios" });
  const p = (o) => page.window.prompt(JSON.stringify(o));
  assert.equal(p({ type: "CapacitorCookies.isEnabled" }), "false");
  assert.equal(p({ type: "CapacitorHttp" }), "false");
  assert.equal(page.prompts.length, 0, "no dialog for them");
  assert.equal(page.window.prompt("Your name?"), "from-the-browser");
  assert.deepEqual(page.prompts, ["Your name?"]);

  const enabled = load({ platform: "ios", config: { plugins: { CapacitorCookies: { enabled: true }, CapacitorHttp: { enabled: true } } } });
  const q = (o) => enabled.window.prompt(JSON.stringify(o));
  assert.equal(q({ type: "CapacitorCookies.isEnabled" }), "true");
  assert.equal(q({ type: "CapacitorHttp" }), "true");
  assert.equal(q({ type: "CapacitorCookies.get" }), "a=1");
  assert.equal(q({ type: "CapacitorCookies.set", action: "b=2; path=/", domain: "" }), "");
  assert.equal(q({ type: "CapacitorCookies" }), "a=1; b=2", "4.3's name for get");
  assert.equal(enabled.prompts.length, 0);
});

test("Android: no prompt answers (none are asked); results come through androidBridge.onmessage", async () => {
  const page = load({ platform: "android" });
  assert.equal(page.window.prompt('{"type":"CapacitorHttp"}'), "from-the-browser");
  let through = null;
  const own = page.window.androidBridge.onmessage;
  page.window.androidBridge.onmessage = (event) => {
    through = JSON.parse(event.data);
    own(event);
  };
  const App = page.exports.registerPlugin("App");
  const state = App.getState();
  await tick();
  page.answer(page.calls()[0], { success: true, data: { isActive: true } });
  assert.deepEqual(JSON.parse(JSON.stringify(await state)), { isActive: true });
  assert.deepEqual(Object.keys(through), ["save", "callbackId", "pluginId", "methodName", "success", "data"]);
});

test("a message posted straight to the platform object is a call too", () => {
  for (const platform of ["android", "ios"]) {
    const page = load({ platform });
    const message = { callbackId: "5", pluginId: "Device", methodName: "getId", options: { a: 1 } };
    if (platform === "android") page.window.androidBridge.postMessage(JSON.stringify(message));
    else page.window.webkit.messageHandlers.bridge.postMessage({ ...message, type: "message" });
    assert.deepEqual(page.calls().at(-1), { callbackId: "5", plugin: "Device", method: "getId", options: { a: 1 }, save: false });
  }
});

test("the script installs once, and only in http(s) documents", () => {
  const page = load({ platform: "android" });
  const again = source.replace("/*@CAPACITOR_CONFIG@*/ null", JSON.stringify({ platform: "ios", plugins: [] }));
  vm.runInContext(again, page.context);
  assert.equal(page.window.Capacitor.getPlatform(), "android");
  assert.equal(page.sent.filter(([n]) => n === "capacitor.ready").length, 1);
});

// The test app (Tests/integration/capacitor_app/app.js) on each runtime and platform, against a
// small fake native side: what it writes into the DOM is what the integration tests read.
const appSource = readFileSync(new URL("../../Tests/integration/capacitor_app/app.js", import.meta.url), "utf8");

function runApp({ platform, core }) {
  const page = load({ platform, core });
  const { document, window } = page;
  const elements = new Map();
  const element = (id) => {
    if (!elements.has(id)) elements.set(id, Object.assign(makeTarget(), { id, children: [], textContent: "", appendChild(c) { this.children.push(c); }, click() { this.dispatchEvent({ type: "click" }); } }));
    return elements.get(id);
  };
  Object.assign(document, {
    readyState: "complete",
    documentElement: { dataset: {} },
    getElementById: (id) => element(id),
    createElement: () => ({ textContent: "" }),
    hidden: false,
  });
  Object.assign(window, { history: { pushState() {}, back() {} }, localStorage: {} });
  page.context.location = { pathname: "/", href: "https://localhost/" };
  page.context.navigator = { userAgent: "x", language: "en-US", onLine: true };
  const prefs = new Map();
  const answers = {
    "App.getInfo": () => ({ name: "Demo", id: "com.example.demo", build: "7", version: "1.2.3" }),
    "App.getLaunchUrl": () => ({ url: "myapp://start" }),
    "Device.getInfo": () => ({ platform, model: "Mocked" }),
    "Network.getStatus": () => ({ connected: true, connectionType: "wifi" }),
    get: (o) => ({ value: prefs.has(o.key) ? prefs.get(o.key) : null }),
    set: (o) => { prefs.set(o.key, o.value); },
  };
  // Answers every call the app makes, as the daemon would, until nothing is left to answer.
  const answered = new Set();
  const settle = async () => {
    for (let round = 0; round < 20; round++) {
      await tick();
      for (const call of page.calls()) {
        if (answered.has(call.callbackId) || call.callbackId === null || call.save) continue;
        answered.add(call.callbackId);
        const fn = answers[`${call.plugin}.${call.method}`] || answers[call.method];
        page.answer(call, { success: true, data: fn ? fn(call.options) : undefined });
      }
    }
  };
  vm.runInContext(appSource, page.context);
  return { page, settle, dataset: document.documentElement.dataset, element };
}

for (const platform of ["android", "ios"]) {
  for (const core of [3, 8]) {
    test(`the test app on ${platform}, core ${core}: what it saw is in the DOM`, async () => {
      const app = runApp({ platform, core });
      await app.settle();
      const d = app.dataset;
      assert.equal(d.ready, "true");
      assert.equal(d.core, String(core));
      assert.equal(d.platform, platform);
      assert.equal(d.native, "true");
      assert.ok(d.available.split(",").includes("App") && !d.available.split(",").includes("Geolocation"));
      assert.deepEqual(JSON.parse(d.appInfo), { name: "Demo", id: "com.example.demo", build: "7", version: "1.2.3" });
      assert.equal(d.launchUrl, "myapp://start");
      assert.equal(d.prefBefore, "null");
      assert.equal(d.prefAfter, "1");
      assert.equal(JSON.parse(d.device).model, "Mocked");
      assert.deepEqual(JSON.parse(d.unlisted), { code: "UNIMPLEMENTED", message: `"Geolocation" plugin is not implemented on ${platform}` });
      const storage = app.page.calls().filter((c) => c.method === "set").map((c) => c.plugin);
      assert.deepEqual(storage, [core >= 4 ? "Preferences" : "Storage"]);
      // A listener's event reaches the log.
      const listener = app.page.calls().find((c) => c.method === "addListener" && c.options.eventName === "networkStatusChange");
      app.page.emit("capacitor.result", { callbackId: listener.callbackId, plugin: "Network", method: "addListener", success: true, data: { connected: false, connectionType: "none" }, save: true });
      assert.ok(app.page.window.__appLog.includes('Network.networkStatusChange {"connected":false,"connectionType":"none"}'));
    });
  }
}
