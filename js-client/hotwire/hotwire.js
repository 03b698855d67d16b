// SPDX-License-Identifier: Apache-2.0
// hotwire.js — what a Hotwire Native app puts into its web view, played by bridged in every
// top-level document of a `hotwire-native` session's tabs (docs/HOTWIRE.md). It runs after
// inject.js (the page's bridge to the daemon is window.__bridgedInjected.bridge) and installs,
// as the platform does:
//   iOS:     window.webkit.messageHandlers.turbo (postMessage), window.turboNative at document
//            end (DOMContentLoaded); with bridge components registered only (as iOS's
//            Bridge.initialize), .bridge and window.nativeBridge at document start;
//   Android: window.TurboSession and window.BridgeComponentsNative (positional methods),
//            window.turboNative and window.nativeBridge once the document has loaded, and the
//            touchstart/touchend reports for pull-to-refresh (elementTouchStarted/Ended).
// Turbo may come before this script, after it (a module, an async or late bundle: window.Turbo
// set at any time), or only with its first `turbo:load`: the adapter registers as soon as
// window.Turbo is there (see installTurboNative).
// The adapter registers with Turbo.registerAdapter and posts Turbo's messages through the
// platform channel; the channel turns every message into a page event to the daemon:
//   hotwire.message {name, data, location}          every adapter message (iOS names)
//   bridge.ready {location}                          the bridge adapter announced itself
//   bridge.message {id, component, event, data, location}
// and the daemon drives the page with events:
//   hotwire.visit {location, options, restorationIdentifier}
//   hotwire.cacheSnapshot {} · hotwire.clearSnapshotCache {} · hotwire.coldBootRendered {identifier}
//   hotwire.restoreCurrentVisit {} (Android: back from a native screen to the page shown)
//   hotwire.reload {} (a cold boot: the document loads again)
//   bridge.reply {id, component, event, data}
// (The path configuration's server copy is the daemon's to fetch; no page sends it.)
// The daemon replaces the marker below with {platform, components}.
(function () {
  "use strict";
  if (typeof window === "undefined" || window.top !== window || window.__bridgedHotwire) return;
  const config = /*@HOTWIRE_CONFIG@*/ null;
  const platform = config.platform === "android" ? "android" : "ios";
  const components = Array.isArray(config.components) ? config.components.slice() : [];
  const injected = window.__bridgedInjected;
  const pageBridge = injected && injected.bridge;
  Object.defineProperty(window, "__bridgedHotwire", { value: { platform }, enumerable: false });
  const LOAD_TIMEOUT_MS = platform === "android" ? 4000 : 30000;
  // iOS creates the bridge (its message handler and window.nativeBridge) only when the app
  // registered bridge components.
  const hasBridge = platform === "android" || components.length > 0;

  function href() {
    return String(window.location && window.location.href);
  }

  function toDaemon(name, params) {
    if (pageBridge) pageBridge.trigger(name, params);
  }

  // JSON-safe copy: URLs become strings, functions and cycles are dropped.
  function plain(value) {
    const seen = new WeakSet();
    return JSON.parse(
      JSON.stringify(value === undefined ? {} : value, (key, v) => {
        if (v instanceof URL) return v.toString();
        if (typeof v === "function") return undefined;
        if (v && typeof v === "object") {
          if (seen.has(v)) return undefined;
          seen.add(v);
        }
        return v;
      }),
    );
  }

  function afterTwoFrames(fn) {
    if (document.hidden || typeof window.requestAnimationFrame !== "function") {
      fn();
      return;
    }
    window.requestAnimationFrame(() => window.requestAnimationFrame(fn));
  }

  function turboMessage(name, data) {
    toDaemon("hotwire.message", { name, data: plain(data), location: href() });
  }

  // --- the platform channel -------------------------------------------------------------------

  function bridgeMessageFromPage(message) {
    if (message === "ready") {
      toDaemon("bridge.ready", { location: href() });
      // Native answers "ready" with the components it registered (the session's list).
      if (window.nativeBridge) window.nativeBridge.register(components);
      return;
    }
    if (!message || typeof message !== "object") return;
    toDaemon("bridge.message", {
      id: String(message.id),
      component: String(message.component),
      event: String(message.event),
      data: plain(message.data && typeof message.data === "object" ? message.data : {}),
      location: href(),
    });
  }

  if (platform === "ios") {
    const handler = (receive) => Object.freeze({ postMessage: (body) => receive(body) });
    const handlers = { turbo: handler((body) => {
      if (body && typeof body === "object" && typeof body.name === "string") turboMessage(body.name, body.data || {});
    }) };
    if (hasBridge) handlers.bridge = handler(bridgeMessageFromPage);
    Object.freeze(handlers);
    if (!window.webkit) Object.defineProperty(window, "webkit", { value: Object.freeze({ messageHandlers: handlers }) });
  } else {
    // Android: positional arguments; options travel as JSON strings. The messages keep the iOS
    // names, with the Android arguments as fields.
    const parse = (text) => {
      try {
        return typeof text === "string" ? JSON.parse(text) : text || {};
      } catch {
        return {};
      }
    };
    const now = () => Date.now();
    const turboSession = {
      turboIsReady: (isReady) => turboMessage("turboIsReady", { isReady: !!isReady, timestamp: now() }),
      turboFailedToLoad: () => turboMessage("pageLoadFailed", { timestamp: now() }),
      pageLoaded: (restorationIdentifier) => turboMessage("pageLoaded", { restorationIdentifier, timestamp: now() }),
      visitProposedToLocation: (location, options) => turboMessage("visitProposed", { location, options: parse(options), timestamp: now() }),
      visitProposalScrollingToAnchor: (location, options) =>
        turboMessage("visitProposalScrollingToAnchor", { location, options: parse(options), timestamp: now() }),
      visitProposalRefreshingPage: (location, options) =>
        turboMessage("visitProposalRefreshingPage", { location, options: parse(options), timestamp: now() }),
      visitStarted: (identifier, hasCachedSnapshot, isPageRefresh, location) =>
        turboMessage("visitStarted", { identifier, hasCachedSnapshot, isPageRefresh, location, timestamp: now() }),
      visitRequestStarted: (identifier) => turboMessage("visitRequestStarted", { identifier, timestamp: now() }),
      visitRequestCompleted: (identifier) => turboMessage("visitRequestCompleted", { identifier, timestamp: now() }),
      visitRequestFailedWithStatusCode: (location, identifier, hasCachedSnapshot, statusCode) =>
        turboMessage("visitRequestFailed", { location, identifier, hasCachedSnapshot, statusCode, timestamp: now() }),
      visitRequestFailedWithNonHttpStatusCode: (location, identifier, hasCachedSnapshot) =>
        turboMessage("visitRequestFailedWithNonHttpStatusCode", { location, identifier, hasCachedSnapshot, statusCode: 0, timestamp: now() }),
      visitRequestFinished: (identifier) => turboMessage("visitRequestFinished", { identifier, timestamp: now() }),
      visitRendered: (identifier) => turboMessage("visitRendered", { identifier, timestamp: now() }),
      visitCompleted: (identifier, restorationIdentifier) =>
        turboMessage("visitCompleted", { identifier, restorationIdentifier, timestamp: now() }),
      formSubmissionStarted: (location) => turboMessage("formSubmissionStarted", { location, timestamp: now() }),
      formSubmissionFinished: (location) => turboMessage("formSubmissionFinished", { location, timestamp: now() }),
      pageInvalidated: () => turboMessage("pageInvalidated", { timestamp: now() }),
      elementTouchStarted: (scrollable) => turboMessage("elementTouchStarted", { scrollable: !!scrollable, timestamp: now() }),
      elementTouchEnded: () => turboMessage("elementTouchEnded", { timestamp: now() }),
    };
    Object.defineProperty(window, "TurboSession", { value: Object.freeze(turboSession) });
    Object.defineProperty(window, "BridgeComponentsNative", {
      value: Object.freeze({
        bridgeDidInitialize: () => bridgeMessageFromPage("ready"),
        bridgeDidReceiveMessage: (json) => bridgeMessageFromPage(parse(json)),
        bridgeDidUpdateSupportedComponents: () => {},
      }),
    });
  }

  // --- the adapter (turboNative) --------------------------------------------------------------

  function post(name, data = {}) {
    const body = { ...data, timestamp: Date.now() };
    if (platform === "ios") {
      window.webkit.messageHandlers.turbo.postMessage({ name, data: body });
      return;
    }
    const s = window.TurboSession;
    const json = (o) => JSON.stringify(plain(o));
    switch (name) {
      case "turboIsReady": return s.turboIsReady(data.isReady);
      case "pageLoadFailed": return s.turboFailedToLoad();
      case "pageLoaded": return s.pageLoaded(data.restorationIdentifier);
      case "visitProposed": return s.visitProposedToLocation(data.location, json(data.options));
      case "visitProposalScrollingToAnchor": return s.visitProposalScrollingToAnchor(data.location, json(data.options));
      case "visitProposalRefreshingPage": return s.visitProposalRefreshingPage(data.location, json(data.options));
      case "visitStarted": return s.visitStarted(data.identifier, data.hasCachedSnapshot, data.isPageRefresh, data.location);
      case "visitRequestStarted": return s.visitRequestStarted(data.identifier);
      case "visitRequestCompleted": return s.visitRequestCompleted(data.identifier);
      case "visitRequestFailed": return s.visitRequestFailedWithStatusCode(data.location, data.identifier, data.hasCachedSnapshot, data.statusCode);
      case "visitRequestFailedWithNonHttpStatusCode":
        return s.visitRequestFailedWithNonHttpStatusCode(data.location, data.identifier, data.hasCachedSnapshot);
      case "visitRequestFinished": return s.visitRequestFinished(data.identifier);
      case "visitRendered": return s.visitRendered(data.identifier);
      case "visitCompleted": return s.visitCompleted(data.identifier, data.restorationIdentifier);
      case "formSubmissionStarted": return s.formSubmissionStarted(data.location);
      case "formSubmissionFinished": return s.formSubmissionFinished(data.location);
      case "pageInvalidated": return s.pageInvalidated();
      default: return undefined; // iOS-only messages (errorRaised, log)
    }
  }

  function turbo() {
    return window.Turbo;
  }
  function turboSessionObject() {
    const T = turbo();
    return T && (T.session || (T.navigator && T.navigator.delegate));
  }
  function turboNavigator() {
    const T = turbo();
    return T && (T.navigator || (T.session && T.session.navigator));
  }

  // A form submission's URL: `location` (Turbo 7.1), else its request's URL or the form's
  // action (later Turbo versions moved it), else the page's.
  function submissionLocation(submission) {
    const s = submission || {};
    const found = s.location || (s.fetchRequest && s.fetchRequest.url) || s.action ||
      (s.formElement && s.formElement.action);
    return String(found || href());
  }

  class TurboNative {
    constructor() {
      this.currentVisit = null;
      this.registered = false;
    }

    // native → JS
    visitLocationWithOptionsAndRestorationIdentifier(location, options, restorationIdentifier) {
      let opts = typeof options === "string" ? JSON.parse(options || "{}") : { ...(options || {}) };
      const navigator = turboNavigator();
      if (!navigator) return;
      const url = new URL(location, href());
      if (typeof navigator.locationWithActionIsSamePage === "function" && navigator.locationWithActionIsSamePage(url, opts.action)) {
        opts = { ...opts, action: "replace" };
      }
      navigator.startVisit(url, restorationIdentifier || undefined, opts);
    }
    cacheSnapshot() {
      const s = turboSessionObject();
      if (!s || !s.view || typeof s.view.cacheSnapshot !== "function") return;
      // Turbo 7.1 takes no argument and pictures the page; Turbo 7.2+ and 8 cache the snapshot
      // they are given (view.snapshot: the page as it is now).
      const result = s.view.cacheSnapshot(s.view.snapshot);
      if (result && typeof result.catch === "function") result.catch(() => {});
    }
    clearSnapshotCache() {
      const s = turboSessionObject();
      if (s && typeof s.clearCache === "function") s.clearCache();
      else if (turbo() && typeof turbo().clearCache === "function") turbo().clearCache();
    }
    cancelVisitWithIdentifier(identifier) {
      if (this.currentVisit && this.currentVisit.identifier === identifier) this.currentVisit.cancel();
    }
    visitRenderedForColdBoot(identifier) {
      afterTwoFrames(() => post("visitRendered", { identifier }));
    }
    restoreCurrentVisit() {
      document.dispatchEvent(new Event("native:restore"));
    }

    // Turbo → adapter
    visitProposedToLocation(location, options) {
      const navigator = turboNavigator();
      const data = { location: String(location), options: plain(options || {}) };
      if (navigator && typeof navigator.locationWithActionIsSamePage === "function" &&
          navigator.locationWithActionIsSamePage(location, options && options.action)) {
        post("visitProposalScrollingToAnchor", data);
        if (navigator.view && typeof navigator.view.scrollToAnchorFromLocation === "function") {
          navigator.view.scrollToAnchorFromLocation(location);
        }
        return;
      }
      const current = navigator && navigator.location;
      if (current && String(current) === String(location)) {
        // A refresh of the page shown: the adapter visits itself, native is not asked.
        post("visitProposalRefreshingPage", data);
        this.visitLocationWithOptionsAndRestorationIdentifier(String(location), options || {}, navigator.restorationIdentifier);
        return;
      }
      post("visitProposed", data);
    }
    // Turbolinks 5
    visitProposedToLocationWithAction(location, action) {
      this.visitProposedToLocation(location, { action });
    }
    visitStarted(visit) {
      this.currentVisit = visit;
      const hasCachedSnapshot = typeof visit.hasCachedSnapshot === "function" ? !!visit.hasCachedSnapshot() : false;
      post("visitStarted", {
        identifier: visit.identifier,
        hasCachedSnapshot,
        isPageRefresh: !!visit.isPageRefresh,
        location: String(visit.location),
      });
      if (this.isCurrent(visit)) visit.issueRequest();
      if (this.isCurrent(visit)) visit.changeHistory();
      if (this.isCurrent(visit)) visit.loadCachedSnapshot();
    }
    isCurrent(visit) {
      return this.currentVisit && this.currentVisit.identifier === visit.identifier;
    }
    visitRequestStarted(visit) {
      post("visitRequestStarted", { identifier: visit.identifier });
    }
    visitRequestCompleted(visit) {
      post("visitRequestCompleted", { identifier: visit.identifier });
      if (this.isCurrent(visit)) visit.loadResponse();
    }
    visitRequestFailedWithStatusCode(visit, statusCode) {
      const hasCachedSnapshot = typeof visit.hasCachedSnapshot === "function" ? !!visit.hasCachedSnapshot() : false;
      const data = { location: String(visit.location), identifier: visit.identifier, hasCachedSnapshot, statusCode };
      if (statusCode <= 0) post("visitRequestFailedWithNonHttpStatusCode", data);
      else post("visitRequestFailed", data);
    }
    visitRequestFinished(visit) {
      post("visitRequestFinished", { identifier: visit.identifier });
    }
    visitRendered(visit) {
      afterTwoFrames(() => post("visitRendered", { identifier: visit.identifier }));
    }
    visitCompleted(visit) {
      const data = { identifier: visit.identifier, restorationIdentifier: visit.restorationIdentifier };
      if (platform === "android") afterTwoFrames(() => post("visitCompleted", data));
      else post("visitCompleted", data);
    }
    visitFailed() {}
    formSubmissionStarted(formSubmission) {
      post("formSubmissionStarted", { location: submissionLocation(formSubmission) });
    }
    formSubmissionFinished(formSubmission) {
      post("formSubmissionFinished", { location: submissionLocation(formSubmission) });
    }
    pageInvalidated() {
      post("pageInvalidated", {});
    }
    linkPrefetchingIsEnabledForLocation() {
      return false;
    }
    log(message) {
      if (platform === "ios") post("log", { message: String(message) });
    }

    // set-up
    registerAdapter() {
      const T = turbo();
      if (T && typeof T.registerAdapter === "function") {
        T.registerAdapter(this);
      } else if (window.Turbolinks && window.Turbolinks.controller) {
        window.Turbolinks.controller.adapter = this;
      } else {
        throw new Error("Failed to register the TurboNative adapter");
      }
      this.registered = true;
      post("turboIsReady", { isReady: true });
    }
    pageLoaded() {
      const navigator = turboNavigator();
      const restorationIdentifier = navigator ? navigator.restorationIdentifier : undefined;
      afterTwoFrames(() => post("pageLoaded", { restorationIdentifier }));
    }
    setup() {
      if (this.registered) return;
      this.registerAdapter();
      this.pageLoaded();
    }
  }

  // Turbo set late: a module or an async bundle assigns window.Turbo after this script ran, and
  // a Turbo started after the document completed never sends the first page's `turbo:load`.
  // The first assignment is watched (then window.Turbo is a plain property again); `setup`
  // runs once the assigning script has finished (a microtask: Turbo has started by then).
  let turboArrived = null;
  function watchTurbo() {
    if (window.Turbo !== undefined) return;
    const own = Object.getOwnPropertyDescriptor(window, "Turbo");
    if (own && !own.configurable) return;
    Object.defineProperty(window, "Turbo", {
      configurable: true,
      enumerable: false,
      get: () => undefined,
      set: (value) => {
        Object.defineProperty(window, "Turbo", { value, writable: true, configurable: true, enumerable: true });
        const then = typeof queueMicrotask === "function" ? queueMicrotask : (fn) => Promise.resolve().then(fn);
        then(() => turboArrived && turboArrived());
      },
    });
  }
  watchTurbo();

  function installTurboNative() {
    if (window.turboNative) return;
    const turboNative = new TurboNative();
    Object.defineProperty(window, "turboNative", { value: turboNative, configurable: true });
    const ready = () => !!((window.Turbo && typeof window.Turbo.registerAdapter === "function") || window.Turbolinks);
    if (ready()) {
      turboNative.setup();
      return;
    }
    const done = () => {
      document.removeEventListener("turbo:load", onLoad);
      document.removeEventListener("turbolinks:load", onLoad);
      turboArrived = null;
      clearTimeout(timer);
    };
    const onLoad = () => {
      if (!ready()) return; // (a turbo:load of a Turbo not on window yet: its assignment follows)
      done();
      if (!turboNative.registered) turboNative.setup();
    };
    document.addEventListener("turbo:load", onLoad);
    document.addEventListener("turbolinks:load", onLoad);
    turboArrived = onLoad;
    const timer = setTimeout(() => {
      if (ready()) {
        onLoad();
        return;
      }
      done();
      post("turboIsReady", { isReady: false });
      post("pageLoadFailed", {});
    }, LOAD_TIMEOUT_MS);
  }

  // --- window.nativeBridge (bridge components) -------------------------------------------------

  class NativeBridge {
    constructor() {
      this.supportedComponents = [];
      this.adapterSet = false;
      this._registered = false;
      document.addEventListener("web-bridge:ready", () => this._installAdapter());
    }
    get platform() {
      return platform;
    }
    get webBridge() {
      const global = window.HotwireNative || window.Strada;
      return global && global.web;
    }
    register(component) {
      const names = Array.isArray(component) ? component : [component];
      for (const name of names) {
        if (typeof name === "string" && !this.supportedComponents.includes(name)) this.supportedComponents.push(name);
      }
      this._registered = true;
      this._installAdapter();
      this.supportedComponentsUpdated();
    }
    unregister(component) {
      const i = this.supportedComponents.indexOf(component);
      if (i >= 0) this.supportedComponents.splice(i, 1);
      this.supportedComponentsUpdated();
    }
    supportsComponent(component) {
      return this.supportedComponents.includes(component);
    }
    supportedComponentsUpdated() {
      const web = this.webBridge;
      if (this.adapterSet && web && typeof web.adapterDidUpdateSupportedComponents === "function") {
        web.adapterDidUpdateSupportedComponents();
      }
      if (platform === "android") window.BridgeComponentsNative.bridgeDidUpdateSupportedComponents();
    }
    // native → web
    replyWith(message) {
      const parsed = typeof message === "string" ? JSON.parse(message) : message;
      const web = this.webBridge;
      if (web && typeof web.receive === "function") web.receive(parsed);
    }
    // web → native
    receive(message) {
      if (platform === "ios") window.webkit.messageHandlers.bridge.postMessage(message);
      else window.BridgeComponentsNative.bridgeDidReceiveMessage(JSON.stringify(message));
    }
    ready() {
      if (platform === "ios") window.webkit.messageHandlers.bridge.postMessage("ready");
      else window.BridgeComponentsNative.bridgeDidInitialize();
    }
    postMessage(message) {
      if (platform === "ios") window.webkit.messageHandlers.bridge.postMessage(message);
    }
    _installAdapter() {
      if (this.adapterSet || !this._registered) return;
      const web = this.webBridge;
      if (!web || typeof web.setAdapter !== "function") return;
      this.adapterSet = true;
      web.setAdapter(this);
    }
  }

  function installNativeBridge() {
    if (window.nativeBridge) return;
    const nativeBridge = new NativeBridge();
    Object.defineProperty(window, "nativeBridge", { value: nativeBridge, configurable: true });
    nativeBridge.ready();
  }

  // --- the daemon drives the page -------------------------------------------------------------

  if (pageBridge) {
    pageBridge.on("hotwire.visit", (p) => {
      if (window.turboNative) {
        window.turboNative.visitLocationWithOptionsAndRestorationIdentifier(p.location, p.options || {}, p.restorationIdentifier || null);
      }
    });
    pageBridge.on("hotwire.cacheSnapshot", () => window.turboNative && window.turboNative.cacheSnapshot());
    pageBridge.on("hotwire.clearSnapshotCache", () => window.turboNative && window.turboNative.clearSnapshotCache());
    // Android: back to the screen this page still shows (from a native screen): `native:restore`.
    pageBridge.on("hotwire.restoreCurrentVisit", () => window.turboNative && window.turboNative.restoreCurrentVisit());
    // A cold boot of the page shown (pageInvalidated): the document loads again.
    pageBridge.on("hotwire.reload", () => window.location.reload());
    pageBridge.on("hotwire.coldBootRendered", (p) => window.turboNative && window.turboNative.visitRenderedForColdBoot(p.identifier));
    pageBridge.on("bridge.reply", (p) => {
      if (!window.nativeBridge) return;
      const message = { id: p.id, component: p.component, event: p.event, data: p.data || {} };
      window.nativeBridge.replyWith(platform === "android" ? JSON.stringify(message) : message);
    });
  }

  // --- when each piece appears ------------------------------------------------------------------

  if (platform === "ios") {
    // iOS errors go to native (errorRaised).
    window.addEventListener("error", (event) => {
      const error = `${event.message} (${event.filename}:${event.lineno}:${event.colno})`;
      post("errorRaised", { error });
    });
    if (hasBridge) installNativeBridge(); // document start, only with components registered
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", installTurboNative, { once: true });
    else installTurboNative(); // document end
  } else {
    // Android injects both once the cold-boot page has finished loading, with the touch
    // reports its pull-to-refresh reads: a touch that starts on an element marked
    // [data-native-prevent-pull-to-refresh] or inside a vertically scrollable element reports
    // `true` (the web view must not refresh on that pull), any other `false`.
    const preventsPullToRefresh = (target) => {
      for (let element = target instanceof Element ? target : target && target.parentElement; element; element = element.parentElement) {
        if (element.matches("[data-native-prevent-pull-to-refresh]")) return true;
        const overflowY = window.getComputedStyle(element).overflowY;
        if (element.scrollHeight > element.clientHeight && (overflowY === "auto" || overflowY === "scroll")) return true;
      }
      return false;
    };
    const onFinished = () => {
      installTurboNative();
      installNativeBridge();
      document.addEventListener("touchstart", (event) => {
        if (event.target) window.TurboSession.elementTouchStarted(preventsPullToRefresh(event.target));
      }, { passive: true });
      document.addEventListener("touchend", () => window.TurboSession.elementTouchEnded(), { passive: true });
    };
    if (document.readyState === "complete") onFinished();
    else window.addEventListener("load", onFinished, { once: true });
  }
})();
