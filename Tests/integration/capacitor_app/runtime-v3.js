// A small stand-in for the runtime an app bundles from @capacitor/core 3.0 (no npm here), written
// from the documented contract (docs/CAPACITOR.md, "What the app's runtime relies on"), not from
// Capacitor's code. A classic script: it leaves its exports on window.capacitorExports, as the
// IIFE build of the real package does. What differs from runtime-v8.js is what 3.0 had:
//   - a pre-set window.CapacitorPlatforms.currentPlatform overrides getPlatform,
//     isNativePlatform, isPluginAvailable, getPluginHeader and registerPlugin;
//   - no CapacitorCustomPlatform (3.2.0 brought it);
//   - the deprecated Capacitor.platform and Capacitor.isNative are set, and `Plugins` is
//     exported (legacy `Plugins.X` access).
// Everything the bridge sees is the same: PluginHeaders, nativePromise, nativeCallback.
(function (win) {
  "use strict";
  const MAJOR = 3;

  const ExceptionCode = Object.freeze({ Unimplemented: "UNIMPLEMENTED", Unavailable: "UNAVAILABLE" });

  class CapacitorException extends Error {
    constructor(message, code, data) {
      super(message);
      this.message = message;
      this.code = code;
      this.data = data;
    }
  }

  function sniffPlatform(w) {
    if (w && w.androidBridge) return "android";
    if (w && w.webkit && w.webkit.messageHandlers && w.webkit.messageHandlers.bridge) return "ios";
    return "web";
  }

  const cap = win.Capacitor || {};
  cap.Plugins = cap.Plugins || {};
  const known = new Map(); // name → {proxy, platforms}

  const current = (win.CapacitorPlatforms && win.CapacitorPlatforms.currentPlatform) || {};
  const getPlatform = current.getPlatform || (() => sniffPlatform(win));
  const isNativePlatform = current.isNativePlatform || (() => sniffPlatform(win) !== "web");
  const headerOf = current.getPluginHeader ||
    ((name) => (Array.isArray(cap.PluginHeaders) ? cap.PluginHeaders.find((h) => h.name === name) : undefined));
  const isPluginAvailable = current.isPluginAvailable || ((name) => {
    const entry = known.get(name);
    if (entry && entry.platforms.has(getPlatform())) return true;
    return !!headerOf(name);
  });

  function defaultRegisterPlugin(name, implementations = {}) {
    if (known.has(name)) {
      win.console.warn(`Capacitor plugin "${name}" already registered. Cannot register plugins twice.`);
      return known.get(name).proxy;
    }
    const platform = getPlatform();
    const header = headerOf(name);
    let loaded;
    const implementation = async () => {
      if (loaded === undefined && platform in implementations) {
        const made = implementations[platform];
        loaded = typeof made === "function" ? await made() : made;
      }
      return loaded;
    };
    // What calling `method` does, once the implementation (if any) is known.
    const route = (impl, method) => {
      if (header) {
        const m = header.methods.find((x) => x.name === method);
        if (m) {
          return m.rtype === "promise"
            ? (options) => cap.nativePromise(name, method, options)
            : (options, callback) => cap.nativeCallback(name, method, options, callback);
        }
        return impl && impl[method] ? impl[method].bind(impl) : undefined;
      }
      if (impl) return impl[method] ? impl[method].bind(impl) : undefined;
      throw new CapacitorException(`"${name}" plugin is not implemented on ${platform}`, ExceptionCode.Unimplemented);
    };
    const method = (prop) => {
      let removeHandle;
      const call = (...args) => {
        const p = implementation().then((impl) => {
          const fn = route(impl, prop);
          if (!fn) throw new CapacitorException(`"${name}.${String(prop)}()" is not implemented on ${platform}`, ExceptionCode.Unimplemented);
          const out = fn(...args);
          removeHandle = out && out.remove;
          return out;
        });
        if (prop === "addListener") p.remove = async () => removeHandle();
        return p;
      };
      call.toString = () => `${String(prop)}() { [capacitor code] }`;
      Object.defineProperty(call, "name", { value: prop });
      return call;
    };
    const addListener = method("addListener");
    const removeListener = method("removeListener");
    const addNativeListener = (eventName, callback) => {
      const sent = addListener({ eventName }, callback); // resolves to the listener's callbackId
      const remove = async () => {
        const callbackId = await sent;
        removeListener({ eventName, callbackId }, callback);
      };
      const handle = new Promise((resolve) => sent.then(() => resolve({ remove })));
      handle.remove = async () => {
        win.console.warn("Using addListener() without 'await' is deprecated.");
        await remove();
      };
      return handle;
    };
    const proxy = new Proxy({}, {
      get(_, prop) {
        if (prop === "$$typeof") return undefined;
        if (prop === "toJSON") return () => ({});
        if (prop === "addListener") return header ? addNativeListener : addListener;
        if (prop === "removeListener") return removeListener;
        return method(prop);
      },
    });
    cap.Plugins[name] = proxy;
    known.set(name, { proxy, platforms: new Set([...Object.keys(implementations), ...(header ? [platform] : [])]) });
    return proxy;
  }

  if (!cap.convertFileSrc) cap.convertFileSrc = (path) => path;
  cap.getPlatform = getPlatform;
  cap.handleError = (err) => win.console.error(err);
  cap.isNativePlatform = isNativePlatform;
  cap.isPluginAvailable = isPluginAvailable;
  cap.registerPlugin = current.registerPlugin || defaultRegisterPlugin;
  cap.Exception = CapacitorException;
  cap.DEBUG = !!cap.DEBUG;
  cap.isLoggingEnabled = !!cap.isLoggingEnabled;
  // deprecated in 3, gone in 7
  cap.platform = cap.getPlatform();
  cap.isNative = cap.isNativePlatform();
  win.Capacitor = cap;

  // The base of every plugin's web implementation.
  class WebPlugin {
    constructor() {
      this.listeners = {};
    }
    addListener(eventName, listenerFunc) {
      (this.listeners[eventName] = this.listeners[eventName] || []).push(listenerFunc);
      const remove = async () => {
        const list = this.listeners[eventName] || [];
        const i = list.indexOf(listenerFunc);
        if (i >= 0) list.splice(i, 1);
      };
      const p = Promise.resolve({ remove });
      p.remove = remove;
      return p;
    }
    async removeAllListeners() {
      this.listeners = {};
    }
    notifyListeners(eventName, data) {
      for (const fn of this.listeners[eventName] || []) fn(data);
    }
    hasListeners(eventName) {
      return !!(this.listeners[eventName] && this.listeners[eventName].length);
    }
    unimplemented(msg = "not implemented") {
      return new CapacitorException(msg, ExceptionCode.Unimplemented);
    }
    unavailable(msg = "not available") {
      return new CapacitorException(msg, ExceptionCode.Unavailable);
    }
  }

  win.capacitorExports = {
    MAJOR,
    Capacitor: cap,
    registerPlugin: cap.registerPlugin, // read after the assignment, as `export const registerPlugin = Capacitor.registerPlugin`
    CapacitorException,
    ExceptionCode,
    WebPlugin,
    Plugins: cap.Plugins,
    registerWebPlugin: () => {},
  };
})(typeof window !== "undefined" ? window : globalThis);
