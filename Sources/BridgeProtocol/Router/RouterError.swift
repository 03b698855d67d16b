/// Why a router request failed. `code` is one of the contract's error codes, so the daemon can
/// put it into an error reply as is. A failing request never changes a session.
public struct RouterError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The URL has an unknown scheme, is malformed, or matches no route where one is needed.
        case unknownRoute = "unknown-route"
        /// The action or its parameters are malformed (unknown tab, bad count, ...).
        case invalidParams = "invalid-params"
        /// The external-link policy is `deny`.
        case notAllowed = "not-allowed"
        /// The tree does not allow it now (e.g. replacing in an empty modal stack).
        case conflict = "conflict"
        /// The stack would exceed its maximum depth.
        case limitExceeded = "limit-exceeded"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public func toJSON() -> JSONValue {
        ["code": .string(code.rawValue), "message": .string(message)]
    }

    static func unknownRoute(_ message: String) -> RouterError { RouterError(.unknownRoute, message) }
    static func invalidParams(_ message: String) -> RouterError { RouterError(.invalidParams, message) }
}

/// A problem in a router configuration. `key` is the path of the offending setting in the
/// configuration file (`routes[2].template`, `tabs[0].name`, `web_base`), so a loader that
/// knows where each key sits can add the line.
public struct RouterConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { key.isEmpty ? message : "\(key): \(message)" }
}
