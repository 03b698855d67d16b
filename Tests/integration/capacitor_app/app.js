// The test app: what an Ionic/Capacitor app's bundle does with its plugins, written against the
// runtime on window.capacitorExports (runtime-v3.js or runtime-v8.js, as the page chose). Each
// plugin "package" registers itself at load, with a web implementation where the real package
// has one, exactly as the published packages do (registerPlugin(name, {web: …})).
//
// What it saw goes into the DOM for tests to read:
//   <html data-platform data-native data-core data-available data-unavailable-plugins
//         data-app-info data-pref-before data-pref-after data-device data-network
//         data-unlisted data-launch-url data-route data-ready>
//   <ol id="log"> one <li> per event, "name {json}" (listeners, document events, results)
(function () {
  "use strict";
  const { Capacitor, registerPlugin, WebPlugin, MAJOR } = window.capacitorExports;
  const root = document.documentElement;

  function log(name, data) {
    const line = data === undefined ? name : `${name} ${JSON.stringify(data)}`;
    const list = document.getElementById("log");
    if (list) {
      const li = document.createElement("li");
      li.textContent = line;
      list.appendChild(li);
    }
    (window.__appLog = window.__appLog || []).push(line);
  }
  function set(key, value) {
    root.dataset[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  function failure(error) {
    return { code: error && error.code, message: String((error && error.message) || error) };
  }

  // --- the plugin packages (web implementations as the packages have them) ---------------------

  class AppWeb extends WebPlugin {
    async exitApp() { throw this.unimplemented("Not implemented on web."); }
    async getInfo() { throw this.unimplemented("Not implemented on web."); }
    async getLaunchUrl() { return { url: "" }; }
    async getState() { return { isActive: document.hidden !== true }; }
    async minimizeApp() { throw this.unimplemented("Not implemented on web."); }
  }
  class PreferencesWeb extends WebPlugin {
    async get({ key }) { return { value: localStorage.getItem("CapacitorStorage." + key) }; }
    async set({ key, value }) { localStorage.setItem("CapacitorStorage." + key, value); }
    async remove({ key }) { localStorage.removeItem("CapacitorStorage." + key); }
    async keys() { return { keys: Object.keys(localStorage).filter((k) => k.startsWith("CapacitorStorage.")).map((k) => k.slice(17)) }; }
    async clear() { for (const k of Object.keys(localStorage)) if (k.startsWith("CapacitorStorage.")) localStorage.removeItem(k); }
  }
  class DeviceWeb extends WebPlugin {
    async getInfo() { return { platform: "web", operatingSystem: "unknown", model: navigator.userAgent, isVirtual: false, webViewVersion: "" }; }
    async getId() { return { identifier: "web" }; }
    async getLanguageCode() { return { value: navigator.language.split("-")[0] }; }
  }
  class NetworkWeb extends WebPlugin {
    async getStatus() { return { connected: navigator.onLine, connectionType: navigator.onLine ? "wifi" : "none" }; }
  }
  class BrowserWeb extends WebPlugin {
    async open({ url }) { this._w = window.open(url, "_blank"); }
    async close() { if (this._w) this._w.close(); }
  }
  class GeolocationWeb extends WebPlugin {
    async getCurrentPosition() { throw this.unavailable("Location not available in this browser."); }
  }

  const App = registerPlugin("App", { web: () => new AppWeb() });
  // Capacitor 3 apps bundle @capacitor/storage (jsName Storage); 4+ @capacitor/preferences.
  const Preferences = MAJOR >= 4 ? registerPlugin("Preferences", { web: () => new PreferencesWeb() })
                                 : registerPlugin("Storage", { web: () => new PreferencesWeb() });
  const Device = registerPlugin("Device", { web: () => new DeviceWeb() });
  const Network = registerPlugin("Network", { web: () => new NetworkWeb() });
  const Browser = registerPlugin("Browser", { web: () => new BrowserWeb() });
  // Sessions of the tests leave Geolocation out: on such a device it is not implemented.
  const Geolocation = registerPlugin("Geolocation", { web: () => new GeolocationWeb() });
  // No web implementation at all (as @capacitor/keyboard).
  const Keyboard = registerPlugin("Keyboard");

  // --- what the app does at start ----------------------------------------------------------------

  set("core", String(MAJOR));
  set("platform", Capacitor.getPlatform());
  set("native", String(Capacitor.isNativePlatform()));
  const names = ["App", "Preferences", "Storage", "Device", "Network", "Browser", "Geolocation", "Keyboard", "Camera"];
  set("available", names.filter((n) => Capacitor.isPluginAvailable(n)).join(","));
  set("unavailablePlugins", names.filter((n) => !Capacitor.isPluginAvailable(n)).join(","));

  // A listener of a plugin the session lacks rejects (not implemented): logged, not thrown.
  const listen = (plugin, pluginName, event) =>
    plugin.addListener(event, (data) => log(`${pluginName}.${event}`, data === undefined ? null : data))
      .catch((e) => log(`listen.failed ${pluginName}.${event}`, failure(e)));
  listen(App, "App", "appUrlOpen");
  listen(App, "App", "appStateChange");
  listen(App, "App", "pause");
  listen(App, "App", "resume");
  App.addListener("backButton", (data) => {
    log("App.backButton", data);
    // An app with a back listener goes back itself (as Ionic's router does).
    if (data && data.canGoBack) window.history.back();
  }).catch((e) => log("listen.failed App.backButton", failure(e)));
  listen(Network, "Network", "networkStatusChange");
  listen(Browser, "Browser", "browserFinished");
  listen(Browser, "Browser", "browserPageLoaded");
  listen(Keyboard, "Keyboard", "keyboardWillShow");
  for (const event of ["backbutton", "pause", "resume"]) document.addEventListener(event, () => log(`document.${event}`));
  window.addEventListener("keyboardWillShow", (e) => log("window.keyboardWillShow", { keyboardHeight: e.keyboardHeight }));

  async function start() {
    const steps = [
      App.getInfo().then((info) => set("appInfo", info)),
      App.getLaunchUrl().then((r) => set("launchUrl", (r && r.url) || "")),
      Preferences.get({ key: "visits" }).then(async (before) => {
        set("prefBefore", before.value === null ? "null" : before.value);
        const next = String(Number(before.value || "0") + 1);
        await Preferences.set({ key: "visits", value: next });
        const after = await Preferences.get({ key: "visits" });
        set("prefAfter", after.value);
      }),
      Device.getInfo().then((info) => set("device", info), (e) => set("device", failure(e))),
      Network.getStatus().then((status) => set("network", status)),
      Geolocation.getCurrentPosition().then((p) => set("unlisted", { position: p }), (e) => set("unlisted", failure(e))),
    ];
    const results = await Promise.allSettled(steps);
    for (const r of results) if (r.status === "rejected") log("step.failed", failure(r.reason));
    set("route", location.pathname);
    set("ready", "true");
    log("ready");
  }

  function wire() {
    const on = (id, fn) => {
      const el = document.getElementById(id);
      if (el) el.addEventListener("click", fn);
    };
    on("open-browser", () => Browser.open({ url: new URL("/browser-page.html", location.href).href }).then(
      () => log("Browser.open.resolved"), (e) => log("Browser.open.rejected", failure(e))));
    on("close-browser", () => Browser.close().then(() => log("Browser.close.resolved"), (e) => log("Browser.close.rejected", failure(e))));
    on("inner", () => {
      window.history.pushState({ inner: true }, "", "/inner");
      document.getElementById("route").textContent = "/inner";
      set("route", "/inner");
      log("route", "/inner");
    });
    on("back", () => window.history.back());
    on("exit", () => App.exitApp().then(() => log("App.exitApp.resolved"), (e) => log("App.exitApp.rejected", failure(e))));
    window.addEventListener("popstate", () => {
      document.getElementById("route").textContent = location.pathname;
      set("route", location.pathname);
      log("popstate", location.pathname);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => {
      wire();
      start();
    });
  } else {
    wire();
    start();
  }
})();
