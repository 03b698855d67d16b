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
      // The checker's own marks on the links it found are not the app's DOM either.
      const hostOnly = (r) => host(r.target) || (r.type === "childList" && [...r.addedNodes, ...r.removedNodes].every((x) => x.id === FG))
        || (r.type === "attributes" && r.attributeName.startsWith("data-bridged-check"));
      // Activity, for the checker's auto-wait: the last DOM change or request, the page's
      // fetch/XHR requests in flight, and the navigations it asked native for that the daemon
      // has not decided yet (`deciding`).
      const state = { pending: 0, deciding: 0, last: now(), opening: null, leaving: null };
      window.__bridgedCheck.state = state;
      new MutationObserver((rs) => { const n = rs.filter((r) => !hostOnly(r)).length; if (n) { state.last = now(); log.push({ k: "dom", t: now(), n }); } })
        .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const begin = () => { state.pending++; state.last = now(); };
      const end = () => { state.pending = Math.max(0, state.pending - 1); state.last = now(); };
      if (typeof window.fetch === "function") {
        const f = window.fetch;
        window.fetch = function (...a) { begin(); let p; try { p = f.apply(this, a); } catch (e) { end(); throw e; } p.then(end, end); return p; };
      }
      if (window.XMLHttpRequest) {
        const send = XMLHttpRequest.prototype.send;
        XMLHttpRequest.prototype.send = function (...a) { begin(); this.addEventListener("loadend", end, { once: true }); try { return send.apply(this, a); } catch (e) { end(); throw e; } };
      }
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
      // A new document of the page's own loading (not a same-document change, not a reload nor
      // a traversal): what a Turbo app should have made a Turbo visit. The last tap says what
      // began it.
      let tap = null;
      addEventListener("click", (e) => {
        const el = e.target && e.target.closest && e.target.closest("a[href],area[href],button,input[type=submit]");
        if (!el) { tap = null; return; }
        let d = el.localName + (el.id ? "#" + el.id : "") + (el.getAttribute("href") ? `[href="${el.getAttribute("href")}"]` : "");
        const off = el.closest("[data-turbo=false]");
        if (off) d += off === el ? '[data-turbo="false"]' : ` inside ${off.localName}[data-turbo="false"]`;
        tap = { d, t: now() };
        // A link that opens another window: Chromium reports the window some time after the
        // tap (the daemon then stacks a web view for it), the page itself showing nothing.
        const target = (el.getAttribute("target") || "").toLowerCase();
        if ((el.localName === "a" || el.localName === "area") && !["", "_self", "_top", "_parent"].includes(target)) state.opening = now();
      }, true);
      if (typeof window.open === "function") {
        const open = window.open;
        window.open = function (...a) { state.opening = now(); return open.apply(this, a); };
      }
      if (window.navigation && window.navigation.addEventListener) {
        navigation.addEventListener("navigate", (e) => {
          if (!e.destination || e.destination.sameDocument || e.navigationType === "reload" || e.navigationType === "traverse") return;
          const url = e.destination.url;
          if (!/^https?:/.test(url)) return;
          const via = tap && now() - tap.t < 1000 ? "a tap on " + tap.d : (e.formData ? "a form submission" : "a script (location, window.open, a form)");
          log.push({ k: "document", t: now(), url, via });
        });
        // The page is on its way to another document until that one commits (this one goes
        // away) or the navigation becomes a same-document one (a router that intercepts it).
        navigation.addEventListener("navigate", (e) => {
          if (e.destination && !e.destination.sameDocument && e.navigationType !== "traverse" && /^https?:/.test(e.destination.url)) {
            state.leaving = { t: now(), url: e.destination.url };
          }
        });
        navigation.addEventListener("currententrychange", () => { state.leaving = null; });
      }
      addEventListener("error", (e) => log.push({ k: "exception", t: now(), m: String(e.message || e.error) }));
      addEventListener("unhandledrejection", (e) => log.push({ k: "exception", t: now(), m: "unhandled rejection: " + String((e.reason && e.reason.message) || e.reason) }));
      const ce = console.error;
      console.error = function (...a) { log.push({ k: "console", t: now(), m: a.map(String).join(" ") }); return ce.apply(this, a); };
      const inj = window.__bridgedInjected;
      const b = inj && inj.bridge;
      // A navigation the page asks native for waits in the daemon while the screen it covers is
      // pictured (a browser session's snapshot rule): the page's connection is held meanwhile,
      // and nothing else shows that the app is not still. A `pwa-navigate` is decided when it is
      // answered; a hotwire-native proposal (Turbo's `visitProposed`) or a page's `navigate` is
      // an event with no answer, so a `ping` follows it: the held connection answers that only
      // once the navigation was decided, after the events the decision sent to controllers.
      const deciding = (p) => {
        state.deciding++; state.last = now();
        const done = () => { state.deciding = Math.max(0, state.deciding - 1); state.last = now(); };
        p.then(done, done);
      };
      if (b && typeof b.pwaNavigate === "function") {
        const orig = b.pwaNavigate.bind(b);
        b.pwaNavigate = async function (params) {
          log.push({ k: "nav", t: now(), url: new URL((params && params.url) || location.href, location.href).href });
          const p = orig(params);
          deciding(p);
          const r = await p;
          log.push({ k: "reply", t: now(), p: (r && r.placeholder) || "" });
          return r;
        };
      }
      if (b && typeof b.trigger === "function" && typeof b.request === "function") {
        const trigger = b.trigger.bind(b);
        b.trigger = function (name, params) {
          const sent = trigger(name, params);
          if (sent && (name === "navigate" || (name === "hotwire.message" && params && params.name === "visitProposed"))) {
            deciding(b.request("ping", {}));
          }
          return sent;
        };
      }
      return "installed";
    })()
    """#

    static let collect = #"(window.__bridgedCheck ? window.__bridgedCheck.log.splice(0) : [])"#

    static let location = #"({url: location.href, title: document.title})"#

    /// Whether the page is still: the document loaded, no fetch/XHR in flight, no navigation it
    /// asked native for still undecided, how long since its last DOM change or request (ms), how
    /// long since it last opened another window (`window.open`, a `target` link; ms), where it
    /// is, and how long since it began a navigation to another document that has not
    /// committed (`leavingMs`, `leavingUrl`; null when none).
    static let activity = #"""
    (() => { const s = window.__bridgedCheck && window.__bridgedCheck.state;
      return { ready: document.readyState, pending: s ? s.pending : 0, deciding: s ? s.deciding : 0,
               quietMs: s ? performance.now() - s.last : 1e9,
               openingMs: s && s.opening !== null ? performance.now() - s.opening : 1e9, url: location.href,
               leavingMs: s && s.leaving ? performance.now() - s.leaving.t : null, leavingUrl: s && s.leaving ? s.leaving.url : null }; })()
    """#

    /// The HTTP status the main document answered (0: unknown), as the browser got it.
    static let status = #"""
    (() => { const e = performance.getEntriesByType("navigation")[0];
      return { status: e && typeof e.responseStatus === "number" ? e.responseStatus : 0, url: location.href, title: document.title }; })()
    """#

    /// The page-side helpers the `links` and `tappables` scripts share: `visible(el)` (it has a
    /// size, the browser shows it, nothing around it is `hidden` or `inert`), and
    /// `selector(el)`, a selector for `webview.click` that marks the element (and the shadow
    /// hosts it is inside; ` >>> ` steps into a shadow root) with a number of its own.
    private static let helpers = #"""
      const visible = (el) => {
        const r = el.getBoundingClientRect();
        if (r.width <= 0 || r.height <= 0) return false;
        if (el.checkVisibility && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
        return !(el.closest && el.closest("[hidden],[inert]"));
      };
      // One count per page, kept on the window: an element the app added since a former
      // read (a route rendered) gets a number no other element has.
      const marks = window.__bridgedCheckMarks || (window.__bridgedCheckMarks = { n: 0, h: 0 });
      const mark = (el, attr) => {
        if (!el.hasAttribute(attr)) el.setAttribute(attr, String(attr === "data-bridged-check" ? marks.n++ : marks.h++));
        return `[${attr}="${el.getAttribute(attr)}"]`;
      };
      const selector = (el) => {
        const hosts = [];
        for (let r = el.getRootNode(); r instanceof ShadowRoot; r = r.host.getRootNode()) hosts.unshift(r.host);
        return hosts.map((x) => mark(x, "data-bridged-check-host")).concat([mark(el, "data-bridged-check")]).join(" >>> ");
      };
    """#

    /// A script of its own scope that can use `helpers`: `body` in a function it calls, whose
    /// value is the script's.
    private static func pageScript(_ body: String) -> String {
        "(() => {\n" + helpers + "\n" + body + "\n})()"
    }

    /// What a user can tap to go somewhere, visible ones only, in document order: `<a href>` and
    /// `<area href>`, other elements with an `href` attribute (`ion-item`), `routerLink`,
    /// `role="link"`, in the document and in open shadow roots. Each gets a selector for
    /// `webview.click` (` >>> ` steps into a shadow root) and a key: its absolute url, or for a
    /// `role="link"` without one, its text.
    static let links = pageScript(#"""
      const out = [], seen = new Set();
      const consider = (el) => {
        const name = el.localName;
        if (el.id === "__bridged_foreground" || ["link", "base", "use", "image", "script", "style"].includes(name)) return;
        let raw = null, kind;
        if (el.hasAttribute("href")) { raw = el.getAttribute("href"); kind = name === "a" || name === "area" ? name : name + "[href]"; }
        else if (el.hasAttribute("routerlink")) { raw = el.getAttribute("routerlink"); kind = name + "[routerLink]"; }
        else if (el.getAttribute("role") === "link") { raw = el.getAttribute("data-href"); kind = "role=link"; }
        else return;
        let href = null;
        if (raw !== null && raw !== "") {
          try { href = new URL(raw, document.baseURI).href; } catch (e) { return; }
          if (!/^https?:/.test(href)) return;
        }
        if (href === null && kind !== "role=link") return;
        const text = (el.textContent || el.getAttribute("aria-label") || "").trim().replace(/\s+/g, " ").slice(0, 40);
        const key = href !== null ? href : "role=link \"" + text + "\"";
        if (seen.has(key) || !visible(el)) return;
        seen.add(key);
        out.push({ key, href, kind, text, blank: el.getAttribute("target") === "_blank",
                   sameOrigin: href === null || new URL(href).origin === location.origin, selector: selector(el) });
      };
      const visit = (root) => {
        for (const el of root.querySelectorAll("*")) {
          if (el.closest("head")) continue;
          consider(el);
          if (el.shadowRoot) visit(el.shadowRoot);
        }
      };
      visit(document);
      return out;
    """#)

    /// capacitor: the location and a digest of the screen, its visible text (a hidden route, a
    /// closed menu, shadow-only labels are not in it): the same screen gives the same digest.
    static let screen = #"""
    (() => {
      const t = (document.body ? document.body.innerText : "").replace(/\s+/g, " ").trim();
      let h = 2166136261;
      for (let i = 0; i < t.length; i++) { h ^= t.charCodeAt(i); h = Math.imul(h, 16777619); }
      return { url: location.href, title: document.title, digest: (h >>> 0).toString(16).padStart(8, "0") + "-" + t.length };
    })()
    """#

    /// capacitor: what a user can tap in an Ionic/Capacitor app, visible ones only, in document
    /// order: what has an `href` (`a`, `ion-item`, `ion-tab-button`, `ion-card`…), a
    /// `routerLink`, `role="link"`, and buttons (`button`, `ion-button`, `ion-tab-button[tab]`,
    /// `ion-menu-toggle`, `ion-menu-button`, `ion-item[button]`, `ion-segment-button`,
    /// `ion-fab-button`, `[role=button]`, submit inputs), in the document and in open shadow
    /// roots. An element taken is not looked into (an `ion-button`'s own inner button). Back
    /// buttons are left out (going back is the explorer's), as are disabled ones and those
    /// beside the screen (a closed menu). Keys: the absolute url, else the kind and the label.
    static let tappables = pageScript(#"""
      const out = [], seen = new Set();
      // Visible and on the screen: not beside it (a closed menu), not on a route Ionic hid,
      // not hidden from assistive technology.
      const shown = (el) => {
        if (!visible(el)) return false;
        const r = el.getBoundingClientRect();
        if (r.right <= 0 || r.left >= innerWidth) return false;
        return !(el.closest && el.closest(".ion-page-hidden,[aria-hidden=true]"));
      };
      const BUTTONS = new Set(["button", "ion-button", "ion-tab-button", "ion-menu-toggle", "ion-menu-button", "ion-segment-button",
                               "ion-fab-button", "ion-chip"]);
      const disabled = (el) => el.disabled === true || el.hasAttribute("disabled") || el.getAttribute("aria-disabled") === "true";
      const label = (el) => {
        let t = (el.innerText || el.textContent || "").trim().replace(/\s+/g, " ");
        if (!t) t = el.getAttribute("aria-label") || el.getAttribute("title") || el.getAttribute("tab") || "";
        if (!t) { const icon = el.querySelector && el.querySelector("ion-icon[name],ion-icon[icon]"); if (icon) t = "icon " + (icon.getAttribute("name") || icon.getAttribute("icon")); }
        return t.slice(0, 40);
      };
      // What tapping `el` would be, or null.
      const consider = (el) => {
        const name = el.localName;
        if (el.id === "__bridged_foreground" || ["link", "base", "use", "image", "script", "style", "ion-back-button"].includes(name)) return null;
        // A menu toggle around a link: the link is what is tapped.
        if (name === "ion-menu-toggle" && el.querySelector("[href],[routerlink],[router-link]")) return null;
        let raw = null, kind = null;
        if (el.hasAttribute("href")) { raw = el.getAttribute("href"); kind = name === "a" || name === "area" ? name : name + "[href]"; }
        else if (el.hasAttribute("routerlink")) { raw = el.getAttribute("routerlink"); kind = name + "[routerLink]"; }
        else if (el.hasAttribute("router-link")) { raw = el.getAttribute("router-link"); kind = name + "[routerLink]"; }
        else if (el.getAttribute("role") === "link") { raw = el.getAttribute("data-href"); kind = "role=link"; }
        else if (BUTTONS.has(name) || el.getAttribute("role") === "button" || (name === "ion-item" && el.hasAttribute("button"))
                 // Ionic marks what it made clickable (an ion-item or ion-card with a router link
                 // set as a property, not an attribute): ion-activatable, a native a or button inside.
                 || (name.startsWith("ion-") && el.classList.contains("ion-activatable") && el.shadowRoot && el.shadowRoot.querySelector("a,button"))
                 || (name === "ion-card" && el.hasAttribute("button")) || (name === "input" && ["submit", "button"].includes(el.type))) {
          kind = el.getAttribute("role") === "button" && !BUTTONS.has(name) ? name + "[role=button]" : name;
        } else return null;
        if (disabled(el) || !shown(el)) return "skip";
        let href = null;
        if (raw !== null && raw !== "" && !raw.startsWith("#") && !/^javascript:/i.test(raw)) {
          try { href = new URL(raw, document.baseURI).href; } catch (e) { return "skip"; }
          if (!/^https?:/.test(href)) return "skip";
        }
        const text = label(el);
        if (href === null && kind.endsWith("[href]") && !text) return "skip";
        const key = href !== null ? href : kind.replace(/\[(href|routerLink)\]$/, "") + " \"" + text + "\"";
        if (seen.has(key)) return "skip";
        seen.add(key);
        out.push({ key, href, kind: href === null ? kind.replace(/\[(href|routerLink)\]$/, "") : kind, text,
                   blank: el.getAttribute("target") === "_blank",
                   sameOrigin: href === null || new URL(href).origin === location.origin, selector: selector(el) });
        return "taken";
      };
      const visit = (root) => {
        for (const el of root.children) {
          if (el.localName === "head") continue;
          const c = consider(el);
          if (c === "taken") continue;
          visit(el);
          if (el.shadowRoot) visit(el.shadowRoot);
        }
      };
      visit(document.documentElement);
      return out;
    """#)
}
