/// The script the checker evaluates in every page it watches (through `webview.evaluate`):
/// it time-stamps, on the page's clock, DOM mutations (a MutationObserver), history changes
/// (the Navigation API's entry changes, else pushState/replaceState/popstate), the page
/// client's `pwa-navigate` and its reply, uncaught exceptions and console errors. The checker
/// collects the log after each step.
enum PageProbe {
    static let install = #"""
    (() => {
      if (window.__bridgedCheck) return "present";
      const log = [];
      const now = () => performance.now();
      window.__bridgedCheck = { log };
      // The host's own foreground overlay (#__bridged_foreground) is not the app's DOM.
      const FG = "__bridged_foreground";
      const host = (n) => n && (n.id === FG || (n.closest && n.closest("#" + FG)) || (n.parentElement && n.parentElement.id === FG));
      const hostOnly = (r) => host(r.target) || (r.type === "childList" && [...r.addedNodes, ...r.removedNodes].every((x) => x.id === FG));
      new MutationObserver((rs) => { const n = rs.filter((r) => !hostOnly(r)).length; if (n) log.push({ k: "dom", t: now(), n }); })
        .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      if (window.navigation && window.navigation.addEventListener) {
        navigation.addEventListener("currententrychange", (e) => {
          const how = e.navigationType === "traverse" ? "pop" : e.navigationType;
          if (how === "push" || how === "replace" || how === "pop") log.push({ k: how, t: now(), url: location.href });
        });
      } else {
        for (const [name, kind] of [["pushState", "push"], ["replaceState", "replace"]]) {
          const orig = history[name];
          history[name] = function (...args) { const r = orig.apply(this, args); log.push({ k: kind, t: now(), url: location.href }); return r; };
        }
        addEventListener("popstate", () => log.push({ k: "pop", t: now(), url: location.href }));
      }
      addEventListener("error", (e) => log.push({ k: "exception", t: now(), m: String(e.message || e.error) }));
      addEventListener("unhandledrejection", (e) => log.push({ k: "exception", t: now(), m: "unhandled rejection: " + String((e.reason && e.reason.message) || e.reason) }));
      const ce = console.error;
      console.error = function (...a) { log.push({ k: "console", t: now(), m: a.map(String).join(" ") }); return ce.apply(this, a); };
      const inj = window.__bridgedInjected;
      const b = inj && inj.bridge;
      if (b && typeof b.pwaNavigate === "function") {
        const orig = b.pwaNavigate.bind(b);
        b.pwaNavigate = async function (params) {
          log.push({ k: "nav", t: now(), url: new URL((params && params.url) || location.href, location.href).href });
          const r = await orig(params);
          log.push({ k: "reply", t: now(), p: (r && r.placeholder) || "" });
          return r;
        };
      }
      return "installed";
    })()
    """#

    static let collect = #"(window.__bridgedCheck ? window.__bridgedCheck.log.splice(0) : [])"#

    static let location = #"({url: location.href, title: document.title})"#

    /// Same-origin links and route links of the page (absolute), and other-origin http(s) links.
    static let links = #"""
    (() => {
      const out = [];
      const seen = new Set();
      document.querySelectorAll("a[href]").forEach((a, i) => {
        const abs = a.href;
        if (!/^https?:/.test(abs) || seen.has(abs)) return;
        if (a.closest("[hidden]") || a.offsetParent === null) return;
        seen.add(abs);
        a.setAttribute("data-bridged-check", String(i));
        out.push({ href: abs, sameOrigin: new URL(abs).origin === location.origin, selector: `a[data-bridged-check="${i}"]` });
      });
      return out;
    })()
    """#
}
