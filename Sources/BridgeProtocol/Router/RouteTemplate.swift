// Route templates: `products/:product_id`, `help/*rest`, `` (the root).

/// A parsed route template.
///
/// Syntax: segments separated by `/`; a leading or trailing `/` is ignored.
/// - `literal`: matched exactly (case-sensitive) against the percent-decoded path segment;
///   letters, digits and `-._~!$&'()+,;=@` only.
/// - `:name`: one non-empty segment, captured as `name` (`[A-Za-z_][A-Za-z0-9_]*`).
/// - `*name` or `*`: the rest of the path (zero or more segments, joined by `/`), last segment
///   only; `*name` captures it as `name`.
///
/// When several templates match a path, the most specific wins: segments are compared left to
/// right and, at the first position where they differ, a literal beats a parameter, a
/// parameter beats a wildcard, and a template that ends beats a wildcard. Two templates that
/// match exactly the same paths (same shape, whatever the parameter names) are a configuration
/// error.
public struct RouteTemplate: Sendable, Equatable, CustomStringConvertible {
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        /// The captured name, or `nil` for an anonymous `*`.
        case wildcard(String?)
    }

    public let source: String
    public let segments: [Segment]

    public var description: String { source }

    /// Names of the parameters the template captures, in order.
    public var parameterNames: [String] {
        segments.compactMap {
            switch $0 {
            case .parameter(let n): return n
            case .wildcard(let n): return n
            case .literal: return nil
            }
        }
    }

    /// Parses a template. The error message says what is wrong with which segment.
    public init(_ source: String) throws(RouterConfigError) {
        self.source = source
        var body = Substring(source)
        if body.hasPrefix("/") { body = body.dropFirst() }
        if body.hasSuffix("/") { body = body.dropLast() }
        var segments: [Segment] = []
        var names: Set<String> = []
        if !body.isEmpty {
            let parts = body.split(separator: "/", omittingEmptySubsequences: false)
            for (i, part) in parts.enumerated() {
                if part.isEmpty {
                    throw RouterConfigError(key: "", "empty segment in template '\(source)' (a '//')")
                }
                let first = part.unicodeScalars.first!
                if first == ":" || first == "*" {
                    let name = part.dropFirst()
                    if first == "*" && name.isEmpty {
                        segments.append(.wildcard(nil))
                    } else if !RouteTemplate.isValidName(name) {
                        throw RouterConfigError(
                            key: "",
                            "unknown parameter syntax '\(part)' in template '\(source)' (write '\(first)name', name = letters, digits, '_', not starting with a digit)"
                        )
                    } else {
                        let n = String(name)
                        guard names.insert(n).inserted else {
                            throw RouterConfigError(key: "", "parameter '\(n)' appears twice in template '\(source)'")
                        }
                        segments.append(first == ":" ? .parameter(n) : .wildcard(n))
                    }
                    if first == "*" && i != parts.count - 1 {
                        throw RouterConfigError(key: "", "wildcard '\(part)' must be the last segment of template '\(source)'")
                    }
                } else {
                    if let bad = part.unicodeScalars.first(where: { !RouteTemplate.isLiteralScalar($0) }) {
                        let what = (bad == ":" || bad == "*") ? "unknown parameter syntax '\(bad)' inside segment '\(part)'" : "character '\(bad)' not allowed in segment '\(part)'"
                        throw RouterConfigError(key: "", "\(what) of template '\(source)'")
                    }
                    segments.append(.literal(String(part)))
                }
            }
        }
        self.segments = segments
    }

    static func isValidName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, isASCIILetter(first) || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "_" }
    }

    static func isLiteralScalar(_ c: Unicode.Scalar) -> Bool {
        if isASCIILetter(c) || isASCIIDigit(c) { return true }
        return "-._~!$&'()+,;=@".unicodeScalars.contains(c)
    }

    /// Matches decoded path segments; returns the captured parameters, or `nil`.
    public func match(_ path: [String]) -> [String: String]? {
        var captured: [String: String] = [:]
        var i = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                guard i < path.count, path[i] == text else { return nil }
                i += 1
            case .parameter(let name):
                guard i < path.count, !path[i].isEmpty else { return nil }
                captured[name] = path[i]
                i += 1
            case .wildcard(let name):
                if let name { captured[name] = path[i...].joined(separator: "/") }
                i = path.count
            }
        }
        return i == path.count ? captured : nil
    }

    /// The path for `params` (each value percent-encoded), and the parameters the template did
    /// not use. Missing parameters are an error.
    public func fill(_ params: [String: String]) throws(RouterError) -> (path: String, unused: [String: String]) {
        var unused = params
        var parts: [String] = []
        for segment in segments {
            switch segment {
            case .literal(let text):
                parts.append(PercentEncoding.encode(text))
            case .parameter(let name):
                guard let value = unused.removeValue(forKey: name), !value.isEmpty else {
                    throw .invalidParams("route template '\(source)' needs a non-empty parameter '\(name)'")
                }
                parts.append(PercentEncoding.encode(value))
            case .wildcard(let name):
                guard let name else { break }
                if let value = unused.removeValue(forKey: name), !value.isEmpty {
                    parts.append(contentsOf: value.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.encode(String($0)) })
                }
            }
        }
        return (parts.joined(separator: "/"), unused)
    }

    /// The kind of each position for specificity: literal 3, parameter 2, wildcard 1.
    private func rank(at i: Int) -> Int? {
        guard i < segments.count else { return nil }
        switch segments[i] {
        case .literal: return 3
        case .parameter: return 2
        case .wildcard: return 1
        }
    }

    /// Whether `self` is more specific than `other` (see the type's documentation). Meant for
    /// two templates that both match some path.
    public func isMoreSpecific(than other: RouteTemplate) -> Bool {
        var i = 0
        while true {
            let a = rank(at: i)
            let b = other.rank(at: i)
            switch (a, b) {
            case (nil, nil): return false
            case (nil, .some(let rb)): return rb == 1  // ended beats a wildcard
            case (.some, nil): return false
            case (.some(let ra), .some(let rb)):
                if ra != rb { return ra > rb }
            }
            i += 1
        }
    }

    /// Whether the two templates match exactly the same paths.
    public func hasSameShape(as other: RouteTemplate) -> Bool {
        guard segments.count == other.segments.count else { return false }
        for (a, b) in zip(segments, other.segments) {
            switch (a, b) {
            case (.literal(let x), .literal(let y)): if x != y { return false }
            case (.parameter, .parameter), (.wildcard, .wildcard): continue
            default: return false
            }
        }
        return true
    }
}

/// Route path helpers.
enum RoutePath {
    /// Splits a raw route path (no leading `/`) into decoded segments. One trailing `/` is
    /// ignored; `""` is the root (no segments). An empty segment in the middle (`a//b`) stays
    /// an empty string and matches no parameter.
    static func segments(_ raw: Substring) throws(RouterError) -> [String] {
        var body = raw
        if body.hasSuffix("/") { body = body.dropLast() }
        if body.isEmpty { return [] }
        var out: [String] = []
        for part in body.split(separator: "/", omittingEmptySubsequences: false) {
            out.append(try PercentEncoding.decode(part))
        }
        return out
    }
}
