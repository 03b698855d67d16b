// SPDX-License-Identifier: Apache-2.0
// inject.js — the page client bridged injects into every document of a browser session's tab,
// before the page's own scripts (Page.addScriptToEvaluateOnNewDocument). It is bridge.js, turned
// into a classic script by the daemon, connected at once for the tab's own web view: the claim
// and the WebSocket url come from the daemon, never from the address bar. It then installs the
// window.Astro shim, so that an Astro-aware page runs unchanged, and leaves the bridge on
// window.__bridgedInjected, where /bridge.js finds it (a page importing /bridge.js gets this
// bridge, not a second session). Navigation is not intercepted here: the browser stops every
// document request natively.
//
// The daemon replaces the two markers below: the config ({url, claim:{session, webview, token}})
// and bridge.js with its `export` keywords and `import.meta.url` removed.
(function () {
  "use strict";
  if (typeof window === "undefined" || window.top !== window || window.__bridgedInjected) return;
  // A tab's first document (about:blank, which stands for the web view below) and Chromium's
  // error pages have no origin of their own: no page of the app speaks from them.
  if (!/^https?:/i.test(String(location.href))) return;
  const __bridgedConfig = /*@CONFIG@*/ null;
  const __bridgedModuleUrl = __bridgedConfig.moduleUrl;
  /*@BRIDGE_JS@*/
  const bridge = createBridge({
    url: __bridgedConfig.url,
    claim: __bridgedConfig.claim,
    moduleUrl: __bridgedModuleUrl,
    interceptNavigation: false,
    replaceUrl: false,
    followLoad: false,
  });
  Object.defineProperty(window, "__bridgedInjected", {
    value: Object.freeze({ bridge, createBridge, connect, installAstroShim }),
    enumerable: false,
  });
  // A hotwire-native session's tabs play Hotwire Native instead (hotwire.js follows).
  if (__bridgedConfig.astro !== false) installAstroShim({ bridge, window });
})();
