import BridgeProtocol

/// The host's results (inputs, `"k":"host-result"`) and the host's work (outputs, `"k":"host"`)
/// as structured members of a trace line: `"what"` names the case, the other members are its
/// fields; ids are written as on the wire (`"W2"`), images and bodies in base64.
enum HostLines {
    // MARK: Writing

    static func write(_ result: HostResult, into o: inout JSONObject) {
        switch result {
        case .tabOpened(let s, let w, let target, let context):
            o["what"] = "tab-opened"; o["session"] = .string(s); o["webview"] = .string(w.description)
            o["targetId"] = .string(target.rawValue); o["browserContextId"] = .string(context.rawValue)
        case .tabFailed(let s, let w, let url, let reason):
            o["what"] = "tab-failed"; o["session"] = .string(s); o["webview"] = .string(w.description)
            o["url"] = .string(url); o["reason"] = .string(reason)
        case .snapshotTaken(let s, let w, let image):
            o["what"] = "snapshot-taken"; o["session"] = .string(s); o["webview"] = .string(w.description)
            if let image { o["image"] = .string(Base64.encode(image)) }
        case .navigationStopped(let stop):
            o["what"] = "navigation-stopped"; o["session"] = .string(stop.session); o["webview"] = .string(stop.webview.description)
            writeRequest(stop, into: &o)
        case .historyTraversed(let s, let w):
            o["what"] = "history-traversed"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .urlChanged(let s, let w, let url):
            o["what"] = "url-changed"; o["session"] = .string(s); o["webview"] = .string(w.description); o["url"] = .string(url)
        case .answered(let r, let answer):
            o["what"] = "answered"; o["c"] = .int(Int64(bitPattern: r.client.raw)); o["id"] = .int(r.id)
            switch answer {
            case .value(let v): o["value"] = v
            case .done: o["done"] = true
            case .image(let jpeg): o["image"] = .string(Base64.encode(jpeg))
            case .failed(let message): o["failed"] = .string(message)
            case .unresponsive(let message): o["unresponsive"] = .string(message)
            }
        case .browserCrashed(let sessions):
            o["what"] = "browser-crashed"; o["sessions"] = .array(sessions.map { .string($0) })
        case .pathConfigurationFetched(let s, let url, let fetch):
            o["what"] = "path-configuration-fetched"; o["session"] = .string(s); o["url"] = .string(url)
            switch fetch {
            case .document(let document): o["document"] = document
            case .failed(let message): o["failed"] = .string(message)
            }
        case .historyRead(let s, let w, let canGoBack):
            o["what"] = "history-read"; o["session"] = .string(s); o["webview"] = .string(w.description); o["canGoBack"] = .bool(canGoBack)
        case .shell(let event):
            o["what"] = "shell"; o["event"] = .object(event.traceFields)
        }
    }

    static func write(_ work: HostWork, into o: inout JSONObject) {
        func request(_ r: HostRequest) {
            o["c"] = .int(Int64(bitPattern: r.client.raw)); o["id"] = .int(r.id)
        }
        switch work {
        case .openTab(let s, let w, let url, let token, let post, let root):
            o["what"] = "open-tab"; o["session"] = .string(s); o["webview"] = .string(w.description)
            o["url"] = .string(url); o["token"] = .string(token); o["root"] = .bool(root)
            if let post {
                var p = JSONObject()
                writeRequest(post, into: &p)
                o["post"] = .object(p)
            }
        case .closeTab(let s, let w):
            o["what"] = "close-tab"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .keepTab(let s, let w):
            o["what"] = "keep-tab"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .reuseTab(let s, let w, let kept, let url, let token):
            o["what"] = "reuse-tab"; o["session"] = .string(s); o["webview"] = .string(w.description)
            o["kept"] = .string(kept.description); o["url"] = .string(url); o["token"] = .string(token)
        case .closeSession(let s):
            o["what"] = "close-session"; o["session"] = .string(s)
        case .takeSnapshot(let s, let w):
            o["what"] = "take-snapshot"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .showOverlay(let s, let w, let image):
            o["what"] = "show-overlay"; o["session"] = .string(s); o["webview"] = .string(w.description)
            if let image { o["image"] = .string(Base64.encode(image)) }
        case .removeOverlay(let s, let w):
            o["what"] = "remove-overlay"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .showTab(let s, let w):
            o["what"] = "show-tab"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .evaluate(let r, let s, let w, let expression):
            o["what"] = "evaluate"; request(r); o["session"] = .string(s); o["webview"] = .string(w.description); o["expression"] = .string(expression)
        case .click(let r, let s, let w, let selector):
            o["what"] = "click"; request(r); o["session"] = .string(s); o["webview"] = .string(w.description); o["selector"] = .string(selector)
        case .type(let r, let s, let w, let selector, let text):
            o["what"] = "type"; request(r); o["session"] = .string(s); o["webview"] = .string(w.description)
            o["selector"] = .string(selector); o["text"] = .string(text)
        case .screenshot(let r, let s, let target):
            o["what"] = "screenshot"; request(r); o["session"] = .string(s); o["target"] = .string(target.description)
        case .fetchPathConfiguration(let s, let w, let url):
            o["what"] = "fetch-path-configuration"; o["session"] = .string(s); o["webview"] = .string(w.description); o["url"] = .string(url)
        case .shell(let work):
            o["what"] = "shell"; o["work"] = .object(work.traceFields)
        case .readHistory(let s, let w):
            o["what"] = "read-history"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .goBackInHistory(let s, let w):
            o["what"] = "go-back-in-history"; o["session"] = .string(s); o["webview"] = .string(w.description)
        case .loadURL(let s, let w, let url):
            o["what"] = "load-url"; o["session"] = .string(s); o["webview"] = .string(w.description); o["url"] = .string(url)
        }
    }

    static func writeRequest(_ stop: NavigationStop, into o: inout JSONObject) {
        o["url"] = .string(stop.url); o["method"] = .string(stop.method)
        if let body = stop.body { o["body"] = .string(Base64.encode(body)) }
        if !stop.headers.isEmpty {
            var h = JSONObject()
            for header in stop.headers { h[header.name] = .string(header.value) }
            o["headers"] = .object(h)
        }
        o["disposition"] = .string(stop.disposition.rawValue)
    }

    // MARK: Reading

    struct Reader {
        let v: JSONValue
        let line: Int
        let kind: String

        func string(_ key: String) throws(TraceError) -> String {
            guard let s = v[key]?.stringValue else { throw TraceError(line: line, "a \"\(kind)\" line needs a string \"\(key)\"") }
            return s
        }
        func int(_ key: String) throws(TraceError) -> Int64 {
            guard let i = v[key]?.intValue else { throw TraceError(line: line, "a \"\(kind)\" line needs an integer \"\(key)\"") }
            return i
        }
        func id(_ key: String) throws(TraceError) -> ItemID {
            let text = try string(key)
            guard let id = ItemID(parsing: text) else { throw TraceError(line: line, "\"\(key)\" is \"\(text)\", not an item id such as \"W1\"") }
            return id
        }
        func base64(_ key: String) throws(TraceError) -> [UInt8]? {
            guard let text = v[key]?.stringValue else { return nil }
            guard let bytes = Base64.decode(text) else { throw TraceError(line: line, "\"\(key)\" is not base64") }
            return bytes
        }
        func request() throws(TraceError) -> HostRequest {
            HostRequest(client: ClientID(UInt64(bitPattern: try int("c"))), id: try int("id"))
        }
        func stop(session: String, webview: ItemID, from r: Reader) throws(TraceError) -> NavigationStop {
            let text = try r.string("disposition")
            guard let disposition = NavigationDisposition(rawValue: text) else {
                throw TraceError(line: line, "\"disposition\" is \"\(text)\"; it is one of \(NavigationDisposition.allCases.map(\.rawValue))")
            }
            var headers: [NavigationStop.Header] = []
            for (name, value) in r.v["headers"]?.objectValue ?? JSONObject() {
                guard let value = value.stringValue else { throw TraceError(line: line, "\"headers\" holds strings") }
                headers.append(NavigationStop.Header(name, value))
            }
            return NavigationStop(session: session, webview: webview, url: try r.string("url"), method: try r.string("method"),
                                  body: try r.base64("body"), headers: headers, disposition: disposition)
        }
    }

    static func result(_ r: Reader) throws(TraceError) -> HostResult {
        let what = try r.string("what")
        switch what {
        case "tab-opened":
            // (Traces written before the ids were recorded have none.)
            return .tabOpened(session: try r.string("session"), webview: try r.id("webview"),
                              targetId: TargetID(r.v["targetId"]?.stringValue ?? ""),
                              browserContextId: BrowserContextID(r.v["browserContextId"]?.stringValue ?? ""))
        case "tab-failed":
            return .tabFailed(session: try r.string("session"), webview: try r.id("webview"), url: try r.string("url"), reason: try r.string("reason"))
        case "snapshot-taken":
            return .snapshotTaken(session: try r.string("session"), webview: try r.id("webview"), image: try r.base64("image"))
        case "navigation-stopped":
            let s = try r.string("session"), w = try r.id("webview")
            return .navigationStopped(try r.stop(session: s, webview: w, from: r))
        case "url-changed": return .urlChanged(session: try r.string("session"), webview: try r.id("webview"), url: try r.string("url"))
        case "history-traversed": return .historyTraversed(session: try r.string("session"), webview: try r.id("webview"))
        case "answered":
            let request = try r.request()
            if let value = r.v["value"] { return .answered(request, .value(value)) }
            if r.v["done"] != nil { return .answered(request, .done) }
            if let image = try r.base64("image") { return .answered(request, .image(image)) }
            if let message = r.v["unresponsive"]?.stringValue { return .answered(request, .unresponsive(message)) }
            return .answered(request, .failed(try r.string("failed")))
        case "path-configuration-fetched":
            let s = try r.string("session"), url = try r.string("url")
            if let document = r.v["document"] { return .pathConfigurationFetched(session: s, url: url, .document(document)) }
            return .pathConfigurationFetched(session: s, url: url, .failed(try r.string("failed")))
        case "history-read":
            return .historyRead(session: try r.string("session"), webview: try r.id("webview"), canGoBack: r.v["canGoBack"]?.boolValue ?? false)
        case "browser-crashed":
            guard let list = r.v["sessions"]?.arrayValue else { throw TraceError(line: r.line, "a \"browser-crashed\" line needs \"sessions\"") }
            return .browserCrashed(sessions: list.compactMap(\.stringValue))
        case "shell":
            guard let fields = r.v["event"]?.objectValue, let event = ShellEvent(traceFields: fields) else {
                throw TraceError(line: r.line, "a \"shell\" host-result line needs an \"event\" such as {\"what\":\"dialog-opened\",…}")
            }
            return .shell(event)
        default:
            throw TraceError(line: r.line, "unknown host result \"\(what)\"")
        }
    }

    static func work(_ r: Reader) throws(TraceError) -> HostWork {
        let what = try r.string("what")
        switch what {
        case "open-tab":
            let s = try r.string("session"), w = try r.id("webview")
            var post: NavigationStop?
            if let p = r.v["post"] { post = try r.stop(session: s, webview: w, from: Reader(v: p, line: r.line, kind: r.kind)) }
            return .openTab(session: s, webview: w, url: try r.string("url"), token: try r.string("token"), post: post,
                            root: r.v["root"]?.boolValue ?? false)
        case "close-tab": return .closeTab(session: try r.string("session"), webview: try r.id("webview"))
        case "keep-tab": return .keepTab(session: try r.string("session"), webview: try r.id("webview"))
        case "reuse-tab":
            return .reuseTab(session: try r.string("session"), webview: try r.id("webview"), kept: try r.id("kept"),
                             url: try r.string("url"), token: try r.string("token"))
        case "close-session": return .closeSession(session: try r.string("session"))
        case "take-snapshot":
            return .takeSnapshot(session: try r.string("session"), webview: try r.id("webview"))
        case "show-overlay": return .showOverlay(session: try r.string("session"), webview: try r.id("webview"), image: try r.base64("image"))
        case "remove-overlay": return .removeOverlay(session: try r.string("session"), webview: try r.id("webview"))
        case "show-tab": return .showTab(session: try r.string("session"), webview: try r.id("webview"))
        case "evaluate":
            return .evaluate(try r.request(), session: try r.string("session"), webview: try r.id("webview"), expression: try r.string("expression"))
        case "click":
            return .click(try r.request(), session: try r.string("session"), webview: try r.id("webview"), selector: try r.string("selector"))
        case "type":
            return .type(try r.request(), session: try r.string("session"), webview: try r.id("webview"),
                         selector: try r.string("selector"), text: try r.string("text"))
        case "screenshot": return .screenshot(try r.request(), session: try r.string("session"), target: try r.id("target"))
        case "fetch-path-configuration":
            return .fetchPathConfiguration(session: try r.string("session"), webview: try r.id("webview"), url: try r.string("url"))
        case "read-history": return .readHistory(session: try r.string("session"), webview: try r.id("webview"))
        case "go-back-in-history": return .goBackInHistory(session: try r.string("session"), webview: try r.id("webview"))
        case "load-url": return .loadURL(session: try r.string("session"), webview: try r.id("webview"), url: try r.string("url"))
        case "shell":
            guard let fields = r.v["work"]?.objectValue, let work = ShellWork(traceFields: fields) else {
                throw TraceError(line: r.line, "a \"shell\" host line needs a \"work\" such as {\"what\":\"answer-dialog\",…}")
            }
            return .shell(work)
        default:
            throw TraceError(line: r.line, "unknown host work \"\(what)\"")
        }
    }
}
