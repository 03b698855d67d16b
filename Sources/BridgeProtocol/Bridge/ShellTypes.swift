/// The shell's everyday duties (docs/BROWSER.md, "What the shell decides"): what a native web
/// view hands to its app — JavaScript dialogs, file choosers, downloads, a renderer that died
/// or stopped answering — reported by the host as `HostResult.shell(ShellEvent)`, and what the
/// Bridge decides back as `HostWork.shell(ShellWork)`. Typed both ways; no JSON crosses.

/// The four JavaScript dialogs (`Page.javascriptDialogOpening`'s `type`).
public enum DialogType: String, Sendable, CaseIterable {
    case alert, confirm, prompt, beforeunload
}

/// A JavaScript dialog a page opened.
public struct Dialog: Equatable, Sendable {
    public var type: DialogType
    public var message: String
    /// `prompt()`'s default text ("" for the others).
    public var defaultValue: String
    /// The page that opened it.
    public var url: String
    public init(type: DialogType, message: String, defaultValue: String = "", url: String = "") {
        self.type = type
        self.message = message
        self.defaultValue = defaultValue
        self.url = url
    }
}

/// How a browser session answers its pages' dialogs (`session.create {dialogs}`).
public enum DialogPolicy: String, Sendable, CaseIterable {
    /// OK / the prompt's default text.
    case accept
    /// Cancel (Playwright's default; `alert` has only OK, which dismissing is).
    case dismiss
    /// Controllers get `webview.dialog` and answer with `webview.dialog.answer`; without an
    /// answer within `ShellSettings.dialogTimeoutMs`, the dialog is dismissed.
    case controller
}

/// A permission a page may ask for, and what the session answers (`session.create {permissions}`).
public enum PermissionSetting: String, Sendable, CaseIterable {
    case granted, denied, prompt
}

/// A position for `navigator.geolocation` (`session.setGeolocation`).
public struct Geolocation: Equatable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var accuracy: Double
    public init(latitude: Double, longitude: Double, accuracy: Double = 10) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
    }
}

/// A browser session's answers to what its pages ask the shell, fixed at `session.create`.
public struct ShellSettings: Equatable, Sendable {
    public var dialogs: DialogPolicy = .dismiss
    /// How long a `controller` dialog waits for `webview.dialog.answer` (milliseconds).
    public var dialogTimeoutMs: Int = ShellSettings.defaultDialogTimeoutMs
    /// Permission name (Chromium's `PermissionDescriptor.name`: `geolocation`, `camera`,
    /// `microphone`, `notifications`, …) → setting. Names not listed keep Chromium's default
    /// (a prompt nobody answers: denied).
    public var permissions: [String: PermissionSetting] = [:]
    public var geolocation: Geolocation?

    public static let defaultDialogTimeoutMs = 10_000
    /// The longest `dialogTimeoutMs` a session may ask for.
    public static let maxDialogTimeoutMs = 120_000
    /// The permission names `session.create {permissions}` accepts (Chromium's, with the
    /// spellings of the Permissions API).
    public static let permissionNames: Set<String> = [
        "geolocation", "camera", "microphone", "notifications", "clipboard-read", "clipboard-write",
        "midi", "background-sync", "persistent-storage", "screen-wake-lock", "idle-detection",
    ]
    public init() {}
}

/// What a page's shell reports, typed.
public enum ShellEvent: Equatable, Sendable {
    /// A JavaScript dialog opened; the page is blocked until it is answered.
    case dialogOpened(session: String, webview: ItemID, Dialog)
    /// The dialog closed: how it was answered.
    case dialogClosed(session: String, webview: ItemID, accepted: Bool, text: String)
    /// The tab's renderer died (killed, out of memory, crashed): its page is gone until a reload.
    case crashed(session: String, webview: ItemID, reason: String)
    /// The page stopped answering (a call to it timed out: a busy loop), or answers again.
    case unresponsive(session: String, webview: ItemID, Bool)
    /// `<input type=file>` asked for files.
    case fileChooser(session: String, webview: ItemID, multiple: Bool, accept: String)
    /// A response that is a download (`Content-Disposition: attachment`) began.
    case download(session: String, webview: ItemID, url: String, filename: String)
}

/// What the Bridge asks of a page's shell, typed.
public enum ShellWork: Equatable, Sendable {
    /// Answers the open dialog of `webview`'s page.
    case answerDialog(session: String, webview: ItemID, accept: Bool, text: String?)
    /// `webview.reload`: the tab loads `url` again (a crashed renderer starts anew).
    case reload(HostRequest, session: String, webview: ItemID, url: String)
    /// `webview.setFiles`: the open file chooser of `webview` gets these paths.
    case setFiles(HostRequest, session: String, webview: ItemID, files: [String])
    /// `session.setGeolocation`: every tab of the session reports this position.
    case setGeolocation(HostRequest, session: String, Geolocation)

    public var request: HostRequest? {
        switch self {
        case .answerDialog: nil
        case .reload(let r, _, _, _), .setFiles(let r, _, _, _), .setGeolocation(let r, _, _): r
        }
    }
}

// MARK: Trace lines

extension ShellEvent {
    /// The event as a trace line's members (`what` names the case).
    public var traceFields: JSONObject {
        switch self {
        case .dialogOpened(let s, let w, let d):
            ["what": "dialog-opened", "session": .string(s), "webview": .string(w.description), "type": .string(d.type.rawValue),
             "message": .string(d.message), "defaultValue": .string(d.defaultValue), "url": .string(d.url)]
        case .dialogClosed(let s, let w, let accepted, let text):
            ["what": "dialog-closed", "session": .string(s), "webview": .string(w.description), "accepted": .bool(accepted), "text": .string(text)]
        case .crashed(let s, let w, let reason):
            ["what": "crashed", "session": .string(s), "webview": .string(w.description), "reason": .string(reason)]
        case .unresponsive(let s, let w, let flag):
            ["what": "unresponsive", "session": .string(s), "webview": .string(w.description), "unresponsive": .bool(flag)]
        case .fileChooser(let s, let w, let multiple, let accept):
            ["what": "file-chooser", "session": .string(s), "webview": .string(w.description), "multiple": .bool(multiple), "accept": .string(accept)]
        case .download(let s, let w, let url, let filename):
            ["what": "download", "session": .string(s), "webview": .string(w.description), "url": .string(url), "filename": .string(filename)]
        }
    }

    /// The event of a trace line written by `traceFields`; nil when it is not one.
    public init?(traceFields o: JSONObject) {
        guard let what = o["what"]?.stringValue, let s = o["session"]?.stringValue,
              let wtext = o["webview"]?.stringValue, let w = ItemID(parsing: wtext) else { return nil }
        func str(_ k: String) -> String? { o[k]?.stringValue }
        switch what {
        case "dialog-opened":
            guard let t = str("type").flatMap(DialogType.init(rawValue:)), let m = str("message") else { return nil }
            self = .dialogOpened(session: s, webview: w, Dialog(type: t, message: m, defaultValue: str("defaultValue") ?? "", url: str("url") ?? ""))
        case "dialog-closed":
            guard let a = o["accepted"]?.boolValue else { return nil }
            self = .dialogClosed(session: s, webview: w, accepted: a, text: str("text") ?? "")
        case "crashed":
            self = .crashed(session: s, webview: w, reason: str("reason") ?? "")
        case "unresponsive":
            self = .unresponsive(session: s, webview: w, o["unresponsive"]?.boolValue ?? true)
        case "file-chooser":
            self = .fileChooser(session: s, webview: w, multiple: o["multiple"]?.boolValue ?? false, accept: str("accept") ?? "")
        case "download":
            guard let url = str("url") else { return nil }
            self = .download(session: s, webview: w, url: url, filename: str("filename") ?? "")
        default:
            return nil
        }
    }
}

extension ShellWork {
    /// The work as a trace line's members (`what` names the case; `c`/`id`: its request).
    public var traceFields: JSONObject {
        func req(_ r: HostRequest) -> JSONObject { ["c": .int(Int64(bitPattern: r.client.raw)), "id": .int(r.id)] }
        var o: JSONObject
        switch self {
        case .answerDialog(let s, let w, let accept, let text):
            o = ["what": "answer-dialog", "session": .string(s), "webview": .string(w.description), "accept": .bool(accept)]
            if let text { o["text"] = .string(text) }
        case .reload(let r, let s, let w, let url):
            o = req(r)
            o["what"] = "reload"; o["session"] = .string(s); o["webview"] = .string(w.description); o["url"] = .string(url)
        case .setFiles(let r, let s, let w, let files):
            o = req(r)
            o["what"] = "set-files"; o["session"] = .string(s); o["webview"] = .string(w.description); o["files"] = .array(files.map { .string($0) })
        case .setGeolocation(let r, let s, let g):
            o = req(r)
            o["what"] = "set-geolocation"; o["session"] = .string(s)
            o["latitude"] = .double(g.latitude); o["longitude"] = .double(g.longitude); o["accuracy"] = .double(g.accuracy)
        }
        return o
    }

    /// The work of a trace line written by `traceFields`; nil when it is not one.
    public init?(traceFields o: JSONObject) {
        guard let what = o["what"]?.stringValue, let s = o["session"]?.stringValue else { return nil }
        let w = o["webview"]?.stringValue.flatMap(ItemID.init(parsing:))
        let r = o["c"]?.intValue.flatMap { c in o["id"]?.intValue.map { HostRequest(client: ClientID(UInt64(bitPattern: c)), id: $0) } }
        switch what {
        case "answer-dialog":
            guard let w, let accept = o["accept"]?.boolValue else { return nil }
            self = .answerDialog(session: s, webview: w, accept: accept, text: o["text"]?.stringValue)
        case "reload":
            guard let r, let w, let url = o["url"]?.stringValue else { return nil }
            self = .reload(r, session: s, webview: w, url: url)
        case "set-files":
            guard let r, let w, let files = o["files"]?.arrayValue else { return nil }
            self = .setFiles(r, session: s, webview: w, files: files.compactMap(\.stringValue))
        case "set-geolocation":
            guard let r, let lat = o["latitude"]?.doubleValue, let lon = o["longitude"]?.doubleValue else { return nil }
            self = .setGeolocation(r, session: s, Geolocation(latitude: lat, longitude: lon, accuracy: o["accuracy"]?.doubleValue ?? 10))
        default:
            return nil
        }
    }
}
