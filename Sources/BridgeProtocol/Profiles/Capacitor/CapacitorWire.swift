// The page events between capacitor.js and the daemon (docs/CAPACITOR.md, "The wire"), and the
// controller's canned answers (`capacitor.mock`). Pure.

/// An error as a plugin rejects: `{message, code?, data?}`.
public struct CapacitorError: Equatable, Sendable {
    public var message: String
    public var code: String?
    public var data: JSONObject?

    public init(_ message: String, code: String? = nil, data: JSONObject? = nil) {
        self.message = message
        self.code = code
        self.data = data
    }

    public static let unimplementedCode = "UNIMPLEMENTED"
    public static let unavailableCode = "UNAVAILABLE"

    /// A held call whose page went away (a reload, a new document) before anyone answered it.
    public static let droppedWithPage = CapacitorError("the page went away before the call was answered", code: "DROPPED")

    /// What `call.unimplemented()` rejects with.
    public static let notImplemented = CapacitorError("not implemented", code: unimplementedCode)

    /// What the app's runtime rejects a call to a plugin native does not have with.
    public static func pluginNotImplemented(_ plugin: String, platform: CapacitorPlatform) -> CapacitorError {
        CapacitorError("\"\(plugin)\" plugin is not implemented on \(platform.rawValue)", code: unimplementedCode)
    }

    /// The documented error of a plugin that needs the user or hardware when no controller
    /// mocked the call.
    public static func needsController(_ plugin: String, _ method: String) -> CapacitorError {
        CapacitorError("\(plugin).\(method)() is not available: no device answer (mock it with capacitor.mock)", code: unavailableCode)
    }

    public var json: JSONValue {
        var o: JSONObject = ["message": .string(message)]
        if let code { o["code"] = .string(code) }
        if let data { o["data"] = .object(data) }
        return .object(o)
    }

    /// `{message, code?, data?}`; a bare string is a message. `nil` for anything else.
    public init?(json: JSONValue) {
        if let s = json.stringValue {
            self.init(s)
            return
        }
        guard case .object(let o) = json, let message = o["message"]?.stringValue else { return nil }
        let code: String?
        switch o["code"] {
        case .string(let s)?: code = s
        case .int(let i)?: code = String(i)
        default: code = nil
        }
        self.init(message, code: code, data: o["data"]?.objectValue)
    }
}

/// A plugin call that reached native: `capacitor.call`'s params.
public struct CapacitorCall: Equatable, Sendable {
    /// The bridge's callback id; `"-1"` when nothing waits for an answer; `nil` for a call the
    /// app's runtime rejected itself (`unavailable`).
    public var callbackId: String?
    public var plugin: String
    public var method: String
    public var options: JSONObject
    /// Made with `nativeCallback`: the callback stays stored (listeners, watchPosition).
    public var save: Bool
    /// A plugin the session lacks (reported, never answered).
    public var unavailable: Bool

    public init(callbackId: String?, plugin: String, method: String, options: JSONObject = [:], save: Bool = false, unavailable: Bool = false) {
        self.callbackId = callbackId
        self.plugin = plugin
        self.method = method
        self.options = options
        self.save = save
        self.unavailable = unavailable
    }

    /// Whether an answer reaches anyone (a stored call on the page).
    public var isAnswerable: Bool {
        guard let callbackId, !unavailable else { return false }
        return callbackId != "-1"
    }

    /// `capacitor.call`'s params; `nil` when `plugin` or `method` is missing.
    public init?(params: JSONObject) {
        guard let plugin = params["plugin"]?.stringValue, let method = params["method"]?.stringValue,
              !plugin.isEmpty, !method.isEmpty else { return nil }
        let callbackId: String?
        switch params["callbackId"] {
        case .string(let s)?: callbackId = s
        case .int(let i)?: callbackId = String(i)
        default: callbackId = nil
        }
        self.init(callbackId: callbackId, plugin: plugin, method: method, options: params["options"]?.objectValue ?? [:],
                  save: params["save"]?.boolValue ?? false, unavailable: params["unavailable"]?.boolValue ?? false)
    }

    public var params: JSONObject {
        var o: JSONObject = [
            "callbackId": callbackId.map(JSONValue.string) ?? .null,
            "plugin": .string(plugin), "method": .string(method), "options": .object(options), "save": .bool(save),
        ]
        if unavailable { o["unavailable"] = true }
        return o
    }
}

/// A result for the page: `capacitor.result`'s params.
public struct CapacitorResult: Equatable, Sendable {
    public var callbackId: String
    public var plugin: String
    public var method: String
    /// `.success(data)` (`nil`: a bare resolve) or `.failure(error)`.
    public var outcome: Outcome
    public var save: Bool

    public enum Outcome: Equatable, Sendable {
        case success(JSONValue?)
        case failure(CapacitorError)
    }

    public init(callbackId: String, plugin: String, method: String, outcome: Outcome, save: Bool) {
        self.callbackId = callbackId
        self.plugin = plugin
        self.method = method
        self.outcome = outcome
        self.save = save
    }

    /// An answer to `call` (`nil` when nobody waits for it).
    public init?(answering call: CapacitorCall, _ outcome: Outcome) {
        guard call.isAnswerable, let id = call.callbackId else { return nil }
        self.init(callbackId: id, plugin: call.plugin, method: call.method, outcome: outcome, save: call.save)
    }

    public var success: Bool {
        if case .success = outcome { return true }
        return false
    }

    /// `{callbackId, plugin, method, success, data? | error, save}`: the page event's params
    /// (controllers get the same fields in their `capacitor.result` event, with `session`).
    public var params: JSONObject {
        var o: JSONObject = ["callbackId": .string(callbackId), "plugin": .string(plugin), "method": .string(method)]
        switch outcome {
        case .success(let data):
            o["success"] = true
            if let data { o["data"] = data }
        case .failure(let error):
            o["success"] = false
            o["error"] = error.json
        }
        o["save"] = .bool(save)
        return o
    }
}

/// An event the daemon sends the app's page.
public enum CapacitorPageEvent: Equatable, Sendable {
    /// `capacitor.result`.
    case result(CapacitorResult)
    /// `capacitor.trigger {eventName, target, data}`: `Capacitor.triggerEvent` (target
    /// `document`, `window` or a CSS selector).
    case trigger(eventName: String, target: String, data: JSONObject)

    public var name: String {
        switch self {
        case .result: return "capacitor.result"
        case .trigger: return "capacitor.trigger"
        }
    }

    public var params: JSONObject {
        switch self {
        case .result(let r): return r.params
        case .trigger(let eventName, let target, let data):
            return ["eventName": .string(eventName), "target": .string(target), "data": .object(data)]
        }
    }
}

/// One canned answer of `capacitor.mock {plugin, method, result | error, times?, hold?}`.
public struct CapacitorMock: Equatable, Sendable {
    public enum Reply: Equatable, Sendable {
        case result(JSONValue?)
        case error(CapacitorError)
        /// The call waits for `capacitor.reply {callbackId, data | error}`.
        case hold
    }

    public static let maxTimes = 10_000

    public var plugin: String
    public var method: String
    public var reply: Reply
    /// Calls it still answers.
    public var times: Int

    public init(plugin: String, method: String, reply: Reply, times: Int = 1) {
        self.plugin = plugin
        self.method = method
        self.reply = reply
        self.times = times
    }

    /// `capacitor.mock`'s params (besides `session`): `plugin`, `method`, one of `result` (any
    /// JSON; `null` = a bare resolve), `error` ({message, code?, data?} or a message) or
    /// `hold: true`, and `times` (1 by default, 1…10000).
    public static func parse(_ params: JSONObject) throws(CapacitorConfigurationError) -> CapacitorMock {
        guard let plugin = params["plugin"]?.stringValue, !plugin.isEmpty else {
            throw CapacitorConfigurationError("capacitor.mock needs plugin (a JS name)", param: "plugin")
        }
        guard let method = params["method"]?.stringValue, !method.isEmpty else {
            throw CapacitorConfigurationError("capacitor.mock needs method", param: "method")
        }
        let hold = params["hold"]?.boolValue ?? false
        let hasResult = params.position(of: "result") != nil
        let hasError = params.position(of: "error") != nil
        let given = [hasResult, hasError, hold].filter { $0 }.count
        guard given == 1 else {
            throw CapacitorConfigurationError("capacitor.mock takes one of result, error or hold: true", param: "result")
        }
        let reply: Reply
        if hold {
            reply = .hold
        } else if hasError, let e = params["error"] {
            guard let error = CapacitorError(json: e) else {
                throw CapacitorConfigurationError("error must be {message, code?, data?} or a message", param: "error")
            }
            reply = .error(error)
        } else {
            let r = params["result"] ?? .null
            reply = .result(r.isNull ? JSONValue?.none : r)
        }
        var times = 1
        if let t = params["times"] {
            guard let n = t.intValue, n >= 1, n <= Int64(maxTimes) else {
                throw CapacitorConfigurationError("times must be an integer from 1 to \(maxTimes)", param: "times")
            }
            times = Int(n)
        }
        return CapacitorMock(plugin: plugin, method: method, reply: reply, times: times)
    }
}

/// The canned answers of a session, consumed in the order they were given, per (plugin, method).
public struct CapacitorMocks: Equatable, Sendable {
    public static let maxQueued = 1_000
    public private(set) var queue: [CapacitorMock] = []

    public init() {}

    /// Queues `mock`; `false` (nothing queued) when `maxQueued` are waiting.
    @discardableResult
    public mutating func add(_ mock: CapacitorMock) -> Bool {
        guard queue.count < Self.maxQueued else { return false }
        queue.append(mock)
        return true
    }

    /// The next canned answer for `plugin.method`, counting one of its `times` down.
    public mutating func take(plugin: String, method: String) -> CapacitorMock.Reply? {
        guard let i = queue.firstIndex(where: { $0.plugin == plugin && $0.method == method }) else { return nil }
        let reply = queue[i].reply
        queue[i].times -= 1
        if queue[i].times <= 0 { queue.remove(at: i) }
        return reply
    }

    /// Drops every canned answer (of one plugin, when given).
    public mutating func clear(plugin: String? = nil) {
        queue.removeAll { plugin == nil || $0.plugin == plugin }
    }
}

/// The params of the controller methods that answer or notify the page, checked.
public enum CapacitorControl {
    /// `capacitor.reply {callbackId, data | error}` (besides `session`): the held call's id and
    /// its answer (`data` absent or null: a bare resolve).
    public static func reply(_ params: JSONObject) throws(CapacitorConfigurationError) -> (callbackId: String, outcome: CapacitorResult.Outcome) {
        let callbackId: String
        switch params["callbackId"] {
        case .string(let s)? where !s.isEmpty: callbackId = s
        case .int(let i)?: callbackId = String(i)
        default: throw CapacitorConfigurationError("capacitor.reply needs callbackId (the held call's)", param: "callbackId")
        }
        let hasError = params.position(of: "error") != nil
        if hasError {
            guard params.position(of: "data") == nil else {
                throw CapacitorConfigurationError("capacitor.reply takes data or error, not both", param: "error")
            }
            guard let e = params["error"], let error = CapacitorError(json: e) else {
                throw CapacitorConfigurationError("error must be {message, code?, data?} or a message", param: "error")
            }
            return (callbackId, .failure(error))
        }
        let data = params["data"] ?? .null
        return (callbackId, .success(data.isNull ? JSONValue?.none : data))
    }

    /// `capacitor.emit {plugin, event, data?}` (besides `session`).
    public static func emit(_ params: JSONObject) throws(CapacitorConfigurationError) -> (plugin: String, event: String, data: JSONValue?) {
        guard let plugin = params["plugin"]?.stringValue, !plugin.isEmpty else {
            throw CapacitorConfigurationError("capacitor.emit needs plugin (a JS name)", param: "plugin")
        }
        guard let event = params["event"]?.stringValue, !event.isEmpty else {
            throw CapacitorConfigurationError("capacitor.emit needs event", param: "event")
        }
        let data = params["data"] ?? .null
        return (plugin, event, data.isNull ? JSONValue?.none : data)
    }
}
