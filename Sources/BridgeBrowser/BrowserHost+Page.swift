import BridgeProtocol
import Foundation

/// Acting on a web view's page: bringing it forward, pictures of it, scripts in it, a user's
/// clicks and typing.
extension BrowserHost {
    /// A call to a tab, tried again for a while when it lands between two documents (a new
    /// document in another renderer answers "Not attached to an active page" until it commits).
    private func tabCall(_ cdp: CDPConnection, _ call: DevToolsCall, session: CDPSessionID) async throws -> JSONValue {
        var attempt = 0
        while true {
            do {
                return try await cdp.call(call, session: session, timeout: options.callTimeoutSeconds)
            } catch BrowserError.browser(let message) where message.contains("Not attached to an active page") && attempt < 100 {
                attempt += 1
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
    }

    func tab(_ session: String, _ webview: ItemID) throws -> (Tab, CDPConnection) {
        guard let b = browser else { throw BrowserError.disconnected }
        guard let tab = machine.tabs[TabKey(session, webview)] else { throw BrowserError.unknownTarget("\(session) \(webview)") }
        return (tab, b.cdp)
    }

    // MARK: acting on a tab

    /// Brings the tab of `webview` to the front (a tab in the background draws no frames).
    public func bringToFront(session: String, webview: ItemID) async throws {
        let (tab, cdp) = try tab(session, webview)
        machine.fronts[session] = TabKey(session, webview)
        _ = try await tabCall(cdp, .bringToFront, session: tab.cdpSession)
    }

    /// The tab as it looks now, as a JPEG.
    public func screenshot(session: String, webview: ItemID) async throws -> [UInt8] {
        let (tab, cdp) = try tab(session, webview)
        // A tab in the background draws no frames.
        machine.fronts[session] = TabKey(session, webview)
        _ = try await tabCall(cdp, .bringToFront, session: tab.cdpSession)
        let shot = try await tabCall(cdp, DevToolsCall(.pageCaptureScreenshot, ["format": "jpeg", "quality": .int(Int64(options.jpegQuality))]),
                                     session: tab.cdpSession)
        guard let base64 = shot["data"]?.stringValue, let data = Data(base64Encoded: base64) else {
            throw BrowserError.browser("the screenshot had no image")
        }
        return [UInt8](data)
    }

    /// Evaluates `expression` in the page; a promise is awaited. Returns its value as JSON
    /// (`null` for `undefined` and values JSON cannot hold). A thrown exception is a
    /// `BrowserError.browser` with its message.
    public func evaluate(session: String, webview: ItemID, expression: String) async throws -> JSONValue {
        let (tab, cdp) = try tab(session, webview)
        let reply = try await tabCall(cdp, .evaluate(expression, returnByValue: true, awaitPromise: true, userGesture: true), session: tab.cdpSession)
        if let details = reply["exceptionDetails"] {
            let message = details["exception"]?["description"]?.stringValue ?? details["text"]?.stringValue ?? "the expression threw"
            throw BrowserError.browser(message)
        }
        return reply["result"]?["value"] ?? .null
    }

    /// The script that finds the element of `selector` for `click` and `type`: a CSS selector,
    /// or several joined by ` >>> `, each looked up in the open shadow root of the element the
    /// previous one found (`ion-item[href="/one/"] >>> a`).
    static func locate(_ selector: String) -> String {
        let sel = JSONValue.string(selector).jsonString
        return """
            const __sel = \(sel); const __parts = __sel.split(" >>> ");
            let __root = document, el = null;
            for (let i = 0; i < __parts.length; i++) {
              el = __root.querySelector(__parts[i]);
              if (!el) throw new Error("no element matches " + __sel);
              if (i < __parts.length - 1) { __root = el.shadowRoot; if (!__root) throw new Error(__parts[i] + " has no open shadow root (in " + __sel + ")"); }
            }
            """
    }

    /// The click's actionability check, as a user's tap needs it: the element is visible, has a
    /// size, is not disabled, sits inside the screen once scrolled to, and is what a tap at its
    /// middle reaches (not covered by another element). Returns the point, or throws saying which.
    static func actionable(_ selector: String) -> String {
        """
        (() => { \(locate(selector))
          const describe = (n) => n.localName + (n.id ? "#" + n.id : "") + (typeof n.className === "string" && n.className.trim() ? "." + n.className.trim().split(/\\s+/).join(".") : "");
          if (!el.isConnected) throw new Error(__sel + " is not visible (not in the document)");
          const st = getComputedStyle(el);
          if (st.display === "none" || (el.checkVisibility && !el.checkVisibility({checkVisibilityCSS: true}))) throw new Error(__sel + " is not visible (display:none, or inside a hidden element)");
          if (st.visibility === "hidden" || st.visibility === "collapse") throw new Error(__sel + " is not visible (visibility:" + st.visibility + ")");
          if (el.checkVisibility && !el.checkVisibility({checkOpacity: true})) throw new Error(__sel + " is not visible (opacity:0)");
          el.scrollIntoView({block: "center", inline: "center"});
          const r = el.getBoundingClientRect();
          if (r.width === 0 || r.height === 0) throw new Error(__sel + " has no size (" + r.width + "×" + r.height + ")");
          if (el.disabled === true || el.getAttribute("aria-disabled") === "true" || (el.closest && el.closest("fieldset:disabled") && /^(button|input|select|textarea)$/.test(el.localName))) throw new Error(__sel + " is disabled");
          const x = r.left + r.width / 2, y = r.top + r.height / 2;
          if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) throw new Error(__sel + " is outside the screen (its middle is at " + Math.round(x) + "," + Math.round(y) + ")");
          let hit = document.elementFromPoint(x, y);
          while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(x, y); if (!inner || inner === hit) break; hit = inner; }
          const inside = (n) => { for (; n; n = n.parentNode || n.host) if (n === el) return true; return false; };
          if (!hit || !inside(hit)) throw new Error(__sel + " is covered by " + (hit ? describe(hit) : "nothing the page draws"));
          \(watchPress)
          return {x, y}; })()
        """
    }

    /// Most presses one `click` makes: a click the page lost between the press and the release
    /// (`clickLost`) is pressed again, on the element the selector finds then.
    public static let clickPresses = 3

    /// Watches the press about to be made (the page's window keeps the watcher, unenumerable,
    /// under `Symbol.for("bridged.click")`): the pressed node (the innermost, also in a shadow
    /// root), dropped when the page's own mousedown listeners removed it (a tap loses that click
    /// too); at the release, `lost` if that node has left the document, cleared by a click.
    public static let watchPress = """
        const __k = Symbol.for("bridged.click"); let __w = window[__k];
        if (!__w) { __w = {down: null, lost: false}; Object.defineProperty(window, __k, {value: __w});
          addEventListener("mousedown", (e) => { if (e.isTrusted) __w.down = e.composedPath()[0] || null; }, true);
          addEventListener("mousedown", () => { if (__w.down && !__w.down.isConnected) __w.down = null; }, false);
          addEventListener("mouseup", (e) => { if (e.isTrusted && __w.down) __w.lost = !__w.down.isConnected; __w.down = null; }, true);
          addEventListener("click", (e) => { if (e.isTrusted) __w.lost = false; }, true); }
        __w.down = null; __w.lost = false;
        """

    /// After the release: whether the click was lost, that is, whether the page removed the
    /// pressed element after the press was handled and before the release (a Turbo render of the
    /// response after a cached snapshot's): Chromium then dispatches no click at all, while a
    /// user's tap, one input, would have clicked the element there at the release.
    public static let clickLost = #"(() => { const w = window[Symbol.for("bridged.click")]; return !!(w && w.lost); })()"#

    /// The first line of a page exception's description, without `Error: `.
    static func pageMessage(_ error: any Error) -> any Error {
        guard case BrowserError.browser(let message) = error else { return error }
        var line = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
        if line.hasPrefix("Error: ") { line.removeFirst(7) }
        return BrowserError.browser(line)
    }

    /// A real click (mouse press and release, trusted by the page) in the middle of the element
    /// `selector` finds (`a >>> b` pierces open shadow roots), scrolled into view first. An
    /// element a user could not tap fails, saying why: not visible, no size, disabled, outside
    /// the screen, covered (by what).
    ///
    /// The press and the release are two inputs, and the page runs its tasks between them: when
    /// it removed the pressed element in between (Turbo rendering a visit's response over the
    /// cached snapshot it showed first), Chromium dispatches no click, where a user's tap (one
    /// input) would have clicked the element found there. Such a lost click is pressed again on
    /// the element the selector finds then, at most `clickPresses` presses in all; then it fails.
    public func click(session: String, webview: ItemID, selector: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        for _ in 1...Self.clickPresses {
            let point: JSONValue
            do { point = try await evaluate(session: session, webview: webview, expression: Self.actionable(selector)) } catch {
                throw Self.pageMessage(error)
            }
            guard let x = point["x"]?.doubleValue, let y = point["y"]?.doubleValue else { throw BrowserError.browser("no position for \(selector)") }
            for type in ["mousePressed", "mouseReleased"] {
                do {
                    _ = try await cdp.call(DevToolsCall(.inputDispatchMouseEvent, [
                        "type": .string(type), "x": .double(x), "y": .double(y), "button": "left", "clickCount": 1,
                    ]), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
                } catch BrowserError.unknownTarget where type == "mouseReleased" {
                    // The press was taken, and the page's DevTools session went before the release
                    // was answered: the click ended its page (a Capacitor app's `App.exitApp` closes
                    // its session from the click's handler). Done, not "no tab".
                    return
                }
            }
            // A page that went (the click navigated) or cannot say: the click was not lost.
            let lost = try? await evaluate(session: session, webview: webview, expression: Self.clickLost)
            if lost != .bool(true) { return }
        }
        throw BrowserError.browser("\(selector): the click was lost \(Self.clickPresses) times (the page removed the pressed element before the release)")
    }

    /// Focuses the element `selector` finds and types `text` into it, as a keyboard would.
    public func type(session: String, webview: ItemID, selector: String, text: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        do {
            _ = try await evaluate(session: session, webview: webview, expression: "(() => { \(Self.locate(selector)) el.focus(); return true; })()")
        } catch {
            throw Self.pageMessage(error)
        }
        _ = try await cdp.call(DevToolsCall(.inputInsertText, ["text": .string(text)]), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }
}
