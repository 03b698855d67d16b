// capacitor.js — the native side of a Capacitor app's web view, played by bridged in every
// top-level document of a `capacitor` session's tabs (docs/CAPACITOR.md). It runs at document
// start, after inject.js (the page's bridge to the daemon is window.__bridgedInjected.bridge),
// before any script of the page, and installs what Capacitor's native shell injects, so that the
// app's own bundled @capacitor/core (3 to 8) finds a native platform:
//   both:    window.Capacitor {DEBUG, isLoggingEnabled, Plugins} with the bridge's functions
//            (nativePromise, nativeCallback, toNative, fromNative, triggerEvent, createEvent,
//            addListener, removeListener, convertFileSrc, getServerUrl, handleWindowError,
//            handleError, logJs, withPlugin, Exception, …), window.WEBVIEW_SERVER_URL,
//            Capacitor.PluginHeaders and a stub object per plugin in Capacitor.Plugins, the
//            Cordova-compat shims (window.cordova, navigator.app.exitApp, `deviceready`,
//            `backbutton`) and window.Ionic.WebView;
//   Android: window.androidBridge {postMessage(json), onmessage} (no `type` in messages;
//            results arrive through onmessage when the page set it, else Capacitor.fromNative);
//   iOS:     window.webkit.messageHandlers.bridge {postMessage(object)}, and window.prompt
//            answers the bridge's synchronous start-up prompts itself (see below).
//
// THE WIRE (page events of the page's bridge; names and fields are exact)
//   page → daemon
//     capacitor.ready {platform, url}
//         once per document, at document start: a new page load. Native forgets the web
//         view's stored calls and every plugin listener here (as bridge.reset() on
//         didStartProvisionalNavigation / onPageStarted).
//     capacitor.call {callbackId, plugin, method, options, save}
//         every plugin call that reaches "native": callbackId is the bridge's decimal string
//         ("-1" when nothing waits for an answer, e.g. navigator.app.exitApp()), options a JSON
//         object ({} by default), save true when the call was made with nativeCallback (a
//         callback that stays stored: addListener, Geolocation.watchPosition, …), false for
//         nativePromise (answered once). Listener bookkeeping is the daemon's: `addListener`
//         {eventName} registers callbackId as a listener of (plugin, eventName) and is never
//         answered; `removeListener` {eventName, callbackId} removes it, never answered.
//     capacitor.call {callbackId: null, plugin, method, options, save: false, unavailable: true}
//         a call to a plugin the session does not have (no header): the app's runtime has
//         already rejected it with `"X" plugin is not implemented on <platform>`; reported only
//         so that controllers see it. Never answered.
//   daemon → page
//     capacitor.result {callbackId, plugin, method, success, data?, error?: {message, code?,
//                       data?}, save}
//         the answer to a call, or (save: true, method "addListener", callbackId the
//         listener's) one event of a listener, as notifyListeners does. The page reshapes it
//         as the platform does (Android: error nested {message, code, data?}, `save` always;
//         iOS: error flattened {…data, message, errorMessage, code}, no `save` on errors) and
//         hands it to window.Capacitor.fromNative (Android: androidBridge.onmessage when set).
//         `data` absent or null: a bare resolve().
//     capacitor.trigger {eventName, target, data}
//         window.Capacitor.triggerEvent(eventName, target, data): target "document" (backbutton,
//         pause, resume), "window" (keyboardWillShow…, devicemotion), or a CSS selector.
//
// iOS prompts: Capacitor's iOS bridge (4.3+) asks native synchronously through prompt(JSON)
// ({"type":"CapacitorCookies.isEnabled"}, {"type":"CapacitorHttp"}, "CapacitorCookies.get",
// "CapacitorCookies.set"). This script is the bridge, so it asks nothing itself; but a bridge
// the app brings along (or any script that speaks that protocol) gets the answers iOS gives,
// synchronously, from window.prompt here, before Chromium would show a dialog: "true"/"false"
// from config.config.plugins.CapacitorCookies.enabled / CapacitorHttp.enabled (default
// "false"), the document's cookies for a get, "" for a set (the cookie is written). Any other
// prompt goes to the browser's own prompt (the daemon answers dialogs through DevTools).
//
// The daemon replaces the marker below with
//   {platform: "android"|"ios", plugins: [{name, methods: [{name, rtype?}]}], config: {…},
//    serverUrl: "https://localhost", debug: false}
(function () {
  "use strict";
  if (typeof window === "undefined" || window.top !== window || window.__bridgedCapacitor) return;
  const here = String(window.location && window.location.href);
  // A tab's first document (about:blank) and Chromium's error pages are no page of the app.
  if (!/^https?:/i.test(here)) return;
  const config = /*@CAPACITOR_CONFIG@*/ null;
  const platform = config && config.platform === "ios" ? "ios" : "android";
  const headers = Array.isArray(config && config.plugins) ? config.plugins : [];
  const appConfig = (config && config.config && typeof config.config === "object") ? config.config : {};
  const injected = window.__bridgedInjected;
  const pageBridge = injected && injected.bridge;
  const listed = new Set(headers.map((h) => h && h.name).filter((n) => typeof n === "string"));
  Object.defineProperty(window, "__bridgedCapacitor", { value: Object.freeze({ platform }), enumerable: false });

  function toDaemon(name, params) {
    if (!pageBridge) return;
    try {
      pageBridge.trigger(name, params);
    } catch (error) {
      if (window.console) window.console.error(error);
    }
  }

  // JSON-safe copy (what crossing to native does): functions dropped, cycles refused.
  function plain(value) {
    if (value === undefined || value === null) return {};
    const text = JSON.stringify(value);
    return text === undefined ? {} : JSON.parse(text);
  }

  // --- the core globals native injects first -------------------------------------------------

  const cap = window.Capacitor || {};
  cap.DEBUG = !!(config && config.debug);
  cap.isLoggingEnabled = !!(config && config.loggingEnabled);
  cap.Plugins = cap.Plugins || {};
  window.Capacitor = cap;
  let serverUrl = config && typeof config.serverUrl === "string" && config.serverUrl ? config.serverUrl : "";
  if (!serverUrl) {
    try {
      serverUrl = new URL(here).origin;
    } catch {
      serverUrl = "";
    }
  }
  serverUrl = serverUrl.replace(/\/+$/, "");
  window.WEBVIEW_SERVER_URL = serverUrl;

  class CapacitorException extends Error {
    constructor(message, code, data) {
      super(message);
      this.message = message;
      this.code = code;
      this.data = data;
    }
  }

  // --- the platform channel -------------------------------------------------------------------

  const callbacks = new Map();
  let callbackIdCount = Math.floor(Math.random() * 134217728);

  // Every message that reaches "native" comes here (from toNative, or from a script that posts
  // to the channel itself).
  function receive(message, save) {
    if (!message || typeof message !== "object") return;
    const type = message.type;
    if (type !== undefined && type !== "message") return; // js.error, cordova: nothing to do
    if (typeof message.pluginId !== "string" || typeof message.methodName !== "string") return;
    if (message.pluginId === "Console") return; // iOS's console mirror: the daemon reads the console itself
    const callbackId = message.callbackId === undefined || message.callbackId === null ? "-1" : String(message.callbackId);
    let options;
    try {
      options = plain(message.options);
    } catch (error) {
      if (window.console) window.console.error(error);
      return;
    }
    const stored = callbacks.get(callbackId);
    const kept = save !== undefined ? save : !!(stored && typeof stored.callback === "function");
    toDaemon("capacitor.call", { callbackId, plugin: message.pluginId, method: message.methodName, options, save: kept });
  }

  let postToNative;
  if (platform === "android") {
    const androidBridge = {
      postMessage(text) {
        let message;
        try {
          message = typeof text === "string" ? JSON.parse(text) : text;
        } catch {
          return;
        }
        receive(message, undefined);
      },
      onmessage: null,
    };
    Object.defineProperty(window, "androidBridge", { value: androidBridge, configurable: true, enumerable: false, writable: false });
    postToNative = (data, save) => {
      try {
        JSON.stringify(data); // what postMessage(JSON.stringify(data)) would throw
        receive(data, save);
      } catch (e) {
        if (window.console) window.console.error(e);
      }
    };
  } else {
    const bridgeHandler = Object.freeze({
      postMessage(body) {
        receive(body, undefined);
      },
    });
    const messageHandlers = Object.freeze({ bridge: bridgeHandler });
    if (!window.webkit) {
      Object.defineProperty(window, "webkit", { value: Object.freeze({ messageHandlers }), configurable: true, enumerable: false });
    } else if (!window.webkit.messageHandlers) {
      try {
        window.webkit.messageHandlers = messageHandlers;
      } catch {
        // a frozen webkit of the page's: nothing to add to
      }
    }
    postToNative = (data, save) => {
      try {
        data.type = data.type ? data.type : "message";
        receive(data, save);
      } catch (e) {
        if (window.console) window.console.error(e);
      }
    };
    installPromptAnswers();
  }

  // iOS answers these prompts without showing a dialog (WebViewDelegationHandler).
  function installPromptAnswers() {
    const browserPrompt = window.prompt;
    const pluginConfig = (name) => {
      const plugins = appConfig.plugins && typeof appConfig.plugins === "object" ? appConfig.plugins : {};
      return plugins[name] && typeof plugins[name] === "object" ? plugins[name] : {};
    };
    const cookieDescriptor = () => {
      const doc = window.Document || (window.document && window.document.constructor);
      const proto = doc && doc.prototype;
      return (proto && Object.getOwnPropertyDescriptor(proto, "cookie")) ||
        (window.HTMLDocument && Object.getOwnPropertyDescriptor(window.HTMLDocument.prototype, "cookie")) || null;
    };
    const answer = (message) => {
      switch (message.type) {
        case "CapacitorCookies.isEnabled":
          return pluginConfig("CapacitorCookies").enabled === true ? "true" : "false";
        case "CapacitorHttp":
          return pluginConfig("CapacitorHttp").enabled === true ? "true" : "false";
        case "CapacitorCookies":
        case "CapacitorCookies.get": {
          const d = cookieDescriptor();
          return d && d.get ? String(d.get.call(window.document)) : "";
        }
        case "CapacitorCookies.set": {
          const d = cookieDescriptor();
          if (d && d.set && typeof message.action === "string") d.set.call(window.document, message.action);
          return "";
        }
        default:
          return undefined;
      }
    };
    const capacitorPrompt = function (text, defaultText) {
      if (typeof text === "string" && text.charAt(0) === "{") {
        let message = null;
        try {
          message = JSON.parse(text);
        } catch {
          message = null;
        }
        if (message && typeof message === "object" && typeof message.type === "string") {
          const reply = answer(message);
          if (reply !== undefined) return reply;
        }
      }
      return typeof browserPrompt === "function" ? browserPrompt.call(window, text, defaultText) : null;
    };
    window.prompt = capacitorPrompt;
  }

  // --- the bridge (what native-bridge.js provides) ---------------------------------------------

  function convertFileSrc(filePath) {
    if (typeof filePath !== "string") return filePath;
    if (filePath.startsWith("/")) return serverUrl + "/_capacitor_file_" + filePath;
    if (filePath.startsWith("file://")) return serverUrl + filePath.replace("file://", "/_capacitor_file_");
    if (filePath.startsWith("content://")) return serverUrl + filePath.replace("content:/", "/_capacitor_content_");
    return filePath;
  }

  cap.getServerUrl = () => serverUrl;
  cap.convertFileSrc = convertFileSrc;
  cap.getPlatform = () => platform;
  cap.isNativePlatform = () => true;
  cap.isPluginAvailable = (name) => Object.prototype.hasOwnProperty.call(cap.Plugins, name);
  cap.Exception = CapacitorException;
  cap.handleError = (err) => window.console && window.console.error(err);

  cap.handleWindowError = (msg, url, lineNo, columnNo, err) => {
    const text = String(msg).toLowerCase();
    if (text.indexOf("script error") === -1) {
      if (err !== null && err !== undefined) cap.handleError(err);
      let errorObject = "";
      try {
        errorObject = JSON.stringify(err);
      } catch {
        errorObject = "";
      }
      postToNative({ type: "js.error", error: { message: String(msg), url, line: lineNo, col: columnNo, errorObject } });
    }
    return false;
  };
  if (cap.DEBUG) window.onerror = cap.handleWindowError;

  cap.logJs = (msg, level) => {
    const c = window.console;
    if (!c) return;
    if (level === "error") c.error(msg);
    else if (level === "warn") c.warn(msg);
    else if (level === "info") c.info(msg);
    else c.log(msg);
  };
  cap.logToNative = (call) => window.console && window.console.log("LOG TO NATIVE: ", call);
  cap.logFromNative = (result) => {
    if (!window.console) return;
    if (result.success === false) window.console.error("LOG FROM NATIVE", result.error);
    else window.console.log("LOG FROM NATIVE", result.data);
  };

  cap.toNative = (pluginName, methodName, options, storedCallback) => {
    try {
      let callbackId = "-1";
      let save = false;
      if (storedCallback && (typeof storedCallback.callback === "function" || typeof storedCallback.resolve === "function")) {
        callbackId = String(++callbackIdCount);
        callbacks.set(callbackId, storedCallback);
        save = typeof storedCallback.callback === "function";
      }
      const callData = { callbackId, pluginId: pluginName, methodName, options: options || {} };
      if (cap.isLoggingEnabled && pluginName !== "Console") cap.logToNative(callData);
      postToNative(callData, save);
      return callbackId;
    } catch (e) {
      if (window.console) window.console.error(e);
    }
    return null;
  };

  function returnResult(result) {
    if (!result || typeof result !== "object") return;
    if (cap.isLoggingEnabled && result.pluginId !== "Console") cap.logFromNative(result);
    try {
      const stored = callbacks.get(result.callbackId);
      if (stored) {
        if (result.error) {
          const source = result.error;
          const Exception = cap.Exception || CapacitorException;
          result.error = Object.keys(source).reduce((err, key) => {
            err[key] = source[key];
            return err;
          }, new Exception(""));
        }
        if (typeof stored.callback === "function") {
          if (result.success) stored.callback(result.data);
          else stored.callback(null, result.error);
        } else if (typeof stored.resolve === "function") {
          if (result.success) stored.resolve(result.data);
          else stored.reject(result.error);
          callbacks.delete(result.callbackId);
        }
      } else if (!result.success && result.error && window.console) {
        window.console.warn(result.error);
      }
      if (result.save === false) callbacks.delete(result.callbackId);
    } catch (e) {
      if (window.console) window.console.error(e);
    }
    delete result.data;
    delete result.error;
  }

  cap.fromNative = (result) => returnResult(result);
  if (platform === "android") {
    // The platform object's own slot (4.0+): native answers through it once the page set it.
    window.androidBridge.onmessage = function (event) {
      returnResult(JSON.parse(event.data));
    };
  }

  cap.nativeCallback = (pluginName, methodName, options, callback) => {
    if (typeof options === "function") {
      if (window.console) window.console.warn("Using a callback as the 'options' parameter of 'nativeCallback()' is deprecated.");
      callback = options;
      options = null;
    }
    return cap.toNative(pluginName, methodName, options, { callback });
  };

  cap.nativePromise = (pluginName, methodName, options) =>
    new Promise((resolve, reject) => {
      cap.toNative(pluginName, methodName, options, { resolve, reject });
    });

  cap.withPlugin = () => ({});

  // --- events ---------------------------------------------------------------------------------

  cap.addListener = (pluginName, eventName, callback) => {
    const callbackId = cap.nativeCallback(pluginName, "addListener", { eventName }, callback);
    return {
      remove: async () => {
        cap.removeListener(pluginName, callbackId, eventName, callback);
      },
    };
  };
  cap.removeListener = (pluginName, callbackId, eventName, callback) => {
    cap.nativeCallback(pluginName, "removeListener", { callbackId, eventName }, callback);
  };

  cap.createEvent = (eventName, eventData) => {
    const doc = window.document;
    if (!doc) return null;
    let ev;
    if (typeof doc.createEvent === "function") {
      ev = doc.createEvent("Events");
      ev.initEvent(eventName, false, false);
    } else if (typeof window.Event === "function") {
      ev = new window.Event(eventName, { bubbles: false, cancelable: false });
    } else {
      return null;
    }
    if (eventData && typeof eventData === "object") {
      for (const key of Object.keys(eventData)) ev[key] = eventData[key];
    }
    return ev;
  };

  cap.triggerEvent = (eventName, target, eventData) => {
    const doc = window.document;
    const cordova = window.cordova;
    eventData = eventData || {};
    const ev = cap.createEvent(eventName, eventData);
    if (!ev) return false;
    if (target === "document") {
      if (cordova && typeof cordova.fireDocumentEvent === "function") {
        cordova.fireDocumentEvent(eventName, eventData);
        return true;
      }
      if (doc && typeof doc.dispatchEvent === "function") return doc.dispatchEvent(ev);
    } else if (target === "window" && typeof window.dispatchEvent === "function") {
      return window.dispatchEvent(ev);
    } else if (doc && typeof doc.querySelector === "function") {
      const element = doc.querySelector(target);
      if (element) return element.dispatchEvent(ev);
    }
    return false;
  };

  // --- Cordova-compat shims and Ionic's WebView -------------------------------------------------

  window.cordova = window.cordova || {};
  const nav = window.navigator;
  if (nav) {
    try {
      nav.app = nav.app || {};
      nav.app.exitApp = () => {
        if (!cap.Plugins || !cap.Plugins.App) {
          if (window.console) window.console.warn("App plugin not installed");
        } else {
          cap.nativeCallback("App", "exitApp", {});
        }
      };
    } catch {
      // a navigator that takes no new property
    }
  }
  const doc = window.document;
  if (doc && typeof doc.addEventListener === "function") {
    const documentAddEventListener = doc.addEventListener;
    doc.addEventListener = function (...args) {
      const eventName = args[0];
      const handler = args[1];
      if (eventName === "deviceready" && handler) {
        Promise.resolve().then(handler);
      } else if (eventName === "backbutton" && cap.Plugins && cap.Plugins.App) {
        // An App listener, so that native leaves the back button to the page.
        cap.Plugins.App.addListener("backButton", () => {});
      }
      return documentAddEventListener.apply(doc, args);
    };
  }
  cap.platform = platform;
  cap.isNative = true;

  const Ionic = (window.Ionic = window.Ionic || {});
  const IonicWebView = (Ionic.WebView = Ionic.WebView || {});
  IonicWebView.getServerBasePath = (callback) => {
    const p = cap.Plugins.WebView;
    if (p && p.getServerBasePath) p.getServerBasePath().then((result) => callback(result.path));
  };
  IonicWebView.setServerAssetPath = (path) => cap.Plugins.WebView && cap.Plugins.WebView.setServerAssetPath({ path });
  IonicWebView.setServerBasePath = (path) => cap.Plugins.WebView && cap.Plugins.WebView.setServerBasePath({ path });
  IonicWebView.persistServerBasePath = () => cap.Plugins.WebView && cap.Plugins.WebView.persistServerBasePath();
  IonicWebView.convertFileSrc = (url) => cap.convertFileSrc(url);

  // --- the plugins: a stub object and a header each -------------------------------------------

  const pluginHeaders = [];
  for (const header of headers) {
    if (!header || typeof header.name !== "string") continue;
    const methods = (Array.isArray(header.methods) ? header.methods : [])
      .filter((m) => m && typeof m.name === "string")
      .map((m) => (typeof m.rtype === "string" && m.rtype !== "none" ? { name: m.name, rtype: m.rtype } : { name: m.name }));
    const name = header.name;
    const stub = {};
    for (const method of methods) {
      if (method.name === "addListener") {
        stub.addListener = (eventName, callback) => cap.addListener(name, eventName, callback);
      } else if (method.name === "removeListener") {
        continue;
      } else if (method.rtype === "promise") {
        stub[method.name] = (options) => cap.nativePromise(name, method.name, options);
      } else {
        stub[method.name] = (options, callback) => cap.nativeCallback(name, method.name, options, callback);
      }
    }
    if (!stub.addListener) stub.addListener = (eventName, callback) => cap.addListener(name, eventName, callback);
    cap.Plugins[name] = stub;
    pluginHeaders.push({ name, methods });
  }
  if (platform === "android") {
    cap.PluginHeaders = pluginHeaders; // one assignment (JSExport.getPluginJS)
  } else {
    cap.PluginHeaders = cap.PluginHeaders || []; // one push per plugin script
    for (const h of pluginHeaders) cap.PluginHeaders.push(h);
  }

  // A plugin the session does not have is rejected by the app's runtime before anything reaches
  // native; its registerPlugin is watched so that such calls are still reported (not answered).
  // Capacitor's own core plugins CapacitorHttp, CapacitorCookies (core 4.3+) and SystemBars (8)
  // are native on a device; here their web implementations (fetch, document.cookie, no-ops)
  // serve the platform too.
  const servedByWeb = new Set(["CapacitorHttp", "CapacitorCookies", "SystemBars"]);
  let runtimeRegisterPlugin;
  const registerPlugin = function (pluginName, jsImplementations) {
    let impls = jsImplementations && typeof jsImplementations === "object" ? jsImplementations : {};
    if (servedByWeb.has(pluginName) && !listed.has(pluginName) && !(platform in impls) && "web" in impls) {
      impls = { ...impls, [platform]: impls.web };
      return runtimeRegisterPlugin.call(this, pluginName, impls);
    }
    const proxy = runtimeRegisterPlugin.apply(this, arguments);
    if (listed.has(pluginName) || platform in impls || !proxy || typeof Proxy !== "function") return proxy;
    const wrapped = new Proxy(proxy, {
      get(target, prop) {
        const value = target[prop];
        if (typeof prop !== "string" || typeof value !== "function" || prop === "then") return value;
        const reported = function (...args) {
          let options = {};
          try {
            options = args[0] && typeof args[0] === "object" ? plain(args[0]) : prop === "addListener" && typeof args[0] === "string" ? { eventName: args[0] } : {};
          } catch {
            options = {};
          }
          toDaemon("capacitor.call", { callbackId: null, plugin: String(pluginName), method: prop, options, save: false, unavailable: true });
          return value.apply(this, args);
        };
        return reported;
      },
    });
    // The runtime keeps the proxy it made in `Capacitor.Plugins` too (the legacy
    // `Capacitor.Plugins.X.method()` calls): those are reported as well.
    try {
      if (cap.Plugins && cap.Plugins[pluginName] === proxy) cap.Plugins[pluginName] = wrapped;
    } catch {
      // a frozen Plugins object: only the returned proxy reports
    }
    return wrapped;
  };
  Object.defineProperty(cap, "registerPlugin", {
    configurable: true,
    enumerable: true,
    get: () => (runtimeRegisterPlugin ? registerPlugin : undefined),
    set: (fn) => {
      runtimeRegisterPlugin = typeof fn === "function" ? fn : undefined;
    },
  });

  // --- the daemon answers -----------------------------------------------------------------------

  // A result of the wire, shaped as the platform delivers it.
  function nativeResult(p) {
    const success = p.success === true;
    const base = { callbackId: String(p.callbackId), pluginId: String(p.plugin), methodName: String(p.method) };
    const hasData = p.data !== undefined && p.data !== null;
    const e = p.error && typeof p.error === "object" ? p.error : { message: String(p.error || "error") };
    if (platform === "android") {
      const result = { save: !!p.save, ...base, success };
      if (success) {
        if (hasData) result.data = p.data;
      } else {
        const error = { message: String(e.message === undefined ? "" : e.message) };
        if (e.code !== undefined && e.code !== null) error.code = e.code;
        if (e.data !== undefined && e.data !== null) error.data = e.data;
        result.error = error;
      }
      return result;
    }
    if (success) {
      const result = { ...base, save: !!p.save, success: true };
      if (hasData) result.data = p.data;
      return result;
    }
    const flat = e.data && typeof e.data === "object" && !Array.isArray(e.data) ? { ...e.data } : {};
    flat.message = String(e.message === undefined ? "" : e.message);
    flat.errorMessage = flat.message;
    if (e.code !== undefined && e.code !== null) flat.code = e.code;
    return { ...base, success: false, error: flat };
  }

  if (pageBridge) {
    pageBridge.on("capacitor.result", (p) => {
      if (!p || p.callbackId === undefined || p.callbackId === null) return;
      const result = nativeResult(p);
      const bridge = window.androidBridge;
      if (platform === "android" && bridge && typeof bridge.onmessage === "function") {
        bridge.onmessage({ data: JSON.stringify(result) });
      } else if (window.Capacitor && typeof window.Capacitor.fromNative === "function") {
        window.Capacitor.fromNative(result);
      }
    });
    pageBridge.on("capacitor.trigger", (p) => {
      if (!p || typeof p.eventName !== "string") return;
      const target = typeof p.target === "string" ? p.target : "document";
      if (window.Capacitor && typeof window.Capacitor.triggerEvent === "function") {
        window.Capacitor.triggerEvent(p.eventName, target, p.data && typeof p.data === "object" ? p.data : {});
      }
    });
  }

  toDaemon("capacitor.ready", { platform, url: here });
})();
