// The routing configuration file (YAML) → `RouterConfig` / `Router`.
// Documented field by field in docs/ROUTING.md and examples/app.yaml.

import BridgeProtocol
import Foundation
import Yams

/// A problem in a configuration file: where (file, line, column), which key, what.
/// `description`: `app.yaml:14:15: routes[2].template: unknown parameter syntax ':' …`.
public struct ConfigFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    public var column: Int?
    /// Key path of the offending setting (`routes[2].template`), or "" for the whole file.
    public var key: String
    public var message: String

    public init(file: String, line: Int?, column: Int?, key: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    public var description: String {
        var place = file
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        return key.isEmpty ? "\(place): \(message)" : "\(place): \(key): \(message)"
    }
}

/// Reads routing configuration files.
public enum RouterConfigFile {
    /// The file format version this reader understands.
    public static let version = 1

    /// Reads, parses and validates a file into a ready `Router`.
    /// `origin` (`http://HOST:PORT`, the daemon's own) completes a `web_base` written as a path
    /// (`/app/`).
    public static func loadRouter(path: String, maxStackDepth: Int? = nil, origin: String? = nil) throws(ConfigFileError) -> Router {
        let (config, marks) = try load(path: path, maxStackDepth: maxStackDepth, origin: origin)
        return try router(from: config, marks: marks, file: path)
    }

    /// Reads and parses a file (syntax, keys and types; not the cross-checks `Router` does).
    public static func load(path: String, maxStackDepth: Int? = nil, origin: String? = nil) throws(ConfigFileError) -> (config: RouterConfig, marks: Marks) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigFileError(file: path, line: nil, column: nil, key: "", message: "cannot read the file: \(error.localizedDescription)")
        }
        var (config, marks) = try parse(text, file: path, origin: origin)
        if let maxStackDepth { config.maxStackDepth = maxStackDepth }
        return (config, marks)
    }

    /// Parses YAML text and validates it into a `Router`. `maxStackDepth` (the daemon's
    /// `--max-stack-depth`) overrides the file's `max_stack_depth`.
    public static func router(yaml: String, file: String = "<config>", maxStackDepth: Int? = nil, origin: String? = nil) throws(ConfigFileError) -> Router {
        var (config, marks) = try parse(yaml, file: file, origin: origin)
        if let maxStackDepth { config.maxStackDepth = maxStackDepth }
        return try router(from: config, marks: marks, file: file)
    }

    /// Validates a parsed configuration; a `RouterConfigError` gets the line of its key.
    public static func router(from config: RouterConfig, marks: Marks, file: String) throws(ConfigFileError) -> Router {
        do {
            return try Router(config: config)
        } catch {
            let mark = marks.mark(for: error.key)
            throw ConfigFileError(file: file, line: mark?.line, column: mark?.column, key: error.key, message: error.message)
        }
    }

    /// Where each key path's value sits in the file.
    public struct Marks: Sendable {
        var byKey: [String: Mark] = [:]

        /// The mark of `key`, else of its closest parent (`routes[2].native_only` → `routes[2]`).
        public func mark(for key: String) -> (line: Int, column: Int)? {
            var k = Substring(key)
            while true {
                if let m = byKey[String(k)] { return (m.line, m.column) }
                guard let cut = k.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
                k = k[..<cut]
            }
            return byKey[""].map { ($0.line, $0.column) }
        }
    }

    // MARK: - Parsing

    /// Parses YAML text into a configuration (syntax, known keys, types).
    public static func parse(_ yaml: String, file: String = "<config>", origin: String? = nil) throws(ConfigFileError) -> (config: RouterConfig, marks: Marks) {
        var reader = Reader(file: file, origin: origin)
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw reader.yamlError(error)
        } catch {
            throw ConfigFileError(file: file, line: nil, column: nil, key: "", message: "YAML: \(error)")
        }
        guard let root else {
            throw ConfigFileError(file: file, line: nil, column: nil, key: "", message: "the file is empty: it needs at least 'web_base'")
        }
        let config = try reader.config(root)
        return (config, reader.marks)
    }

    struct Reader {
        let file: String
        let origin: String?
        var marks = Marks()

        init(file: String, origin: String?) {
            self.file = file
            self.origin = origin
        }

        func fail(_ key: String, _ node: Node?, _ message: String) -> ConfigFileError {
            ConfigFileError(file: file, line: node?.mark?.line, column: node?.mark?.column, key: key, message: message)
        }

        func yamlError(_ error: YamlError) -> ConfigFileError {
            switch error {
            case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
                .composer(let context, let problem, let mark, _):
                let ctx = context.map { "\($0.text), " } ?? ""
                return ConfigFileError(file: file, line: mark.line, column: mark.column, key: "", message: "YAML syntax error: \(ctx)\(problem)")
            case .duplicatedKeysInMapping(let duplicates, let context):
                return ConfigFileError(
                    file: file, line: context.mark.line, column: context.mark.column, key: "",
                    message: "duplicate key(s) \(duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")) in one mapping")
            default:
                return ConfigFileError(file: file, line: nil, column: nil, key: "", message: "YAML: \(error)")
            }
        }

        mutating func note(_ key: String, _ node: Node) {
            if let m = node.mark { marks.byKey[key] = m }
        }

        static func isNull(_ node: Node) -> Bool {
            guard case .scalar(let s) = node, s.style == .plain || s.style == .any else { return false }
            return ["", "~", "null", "Null", "NULL"].contains(s.string)
        }

        /// The members of a mapping, checked against the allowed keys; nil values dropped.
        mutating func mapping(_ key: String, _ node: Node, allowed: [String]) throws(ConfigFileError) -> [String: Node] {
            guard case .mapping(let m) = node else {
                throw fail(key, node, "expected a mapping (key: value lines), found \(kind(node))")
            }
            var out: [String: Node] = [:]
            for (k, v) in m {
                guard case .scalar(let ks) = k else { throw fail(key, k, "keys must be plain names") }
                let name = ks.string
                let path = key.isEmpty ? name : "\(key).\(name)"
                guard allowed.contains(name) else {
                    throw fail(path, k, "unknown key '\(name)' (allowed here: \(allowed.joined(separator: ", ")))")
                }
                guard out[name] == nil else { throw fail(path, k, "'\(name)' appears twice") }
                note(path, v)
                if Reader.isNull(v) { continue }
                out[name] = v
            }
            return out
        }

        func kind(_ node: Node) -> String {
            switch node {
            case .scalar(let s): return "'\(s.string)'"
            case .mapping: return "a mapping"
            case .sequence: return "a list"
            case .alias: return "an alias"
            }
        }

        func string(_ key: String, _ node: Node) throws(ConfigFileError) -> String {
            guard case .scalar(let s) = node else { throw fail(key, node, "expected a string, found \(kind(node))") }
            return s.string
        }

        func bool(_ key: String, _ node: Node) throws(ConfigFileError) -> Bool {
            guard case .scalar(let s) = node else { throw fail(key, node, "expected true or false, found \(kind(node))") }
            switch s.string.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: throw fail(key, node, "expected true or false, found '\(s.string)'")
            }
        }

        func int(_ key: String, _ node: Node) throws(ConfigFileError) -> Int {
            guard case .scalar(let s) = node, let i = Int(s.string) else {
                throw fail(key, node, "expected an integer, found \(kind(node))")
            }
            return i
        }

        mutating func list(_ key: String, _ node: Node) throws(ConfigFileError) -> [Node] {
            guard case .sequence(let seq) = node else {
                throw fail(key, node, "expected a list ('- item' lines or [a, b]), found \(kind(node))")
            }
            let items = Array(seq)
            for (i, n) in items.enumerated() { note("\(key)[\(i)]", n) }
            return items
        }

        /// A string or a list of strings.
        mutating func strings(_ key: String, _ node: Node) throws(ConfigFileError) -> [String] {
            if case .scalar(let s) = node { return [s.string] }
            var out: [String] = []
            for (i, n) in try list(key, node).enumerated() { out.append(try string("\(key)[\(i)]", n)) }
            return out
        }

        mutating func choice<E: RawRepresentable & CaseIterable>(_ key: String, _ node: Node, _: E.Type) throws(ConfigFileError) -> E
        where E.RawValue == String {
            let s = try string(key, node)
            guard let e = E(rawValue: s) else {
                throw fail(key, node, "'\(s)' is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return e
        }

        mutating func config(_ root: Node) throws(ConfigFileError) -> RouterConfig {
            note("", root)
            let top = try mapping(
                "", root,
                allowed: [
                    "version", "web_base", "schemes", "own_origins", "external_links", "back_behavior", "max_stack_depth",
                    "initial_tab", "tabs", "routes", "native_screens", "feature_flags",
                ])
            if let v = top["version"] {
                let n = try int("version", v)
                guard n == RouterConfigFile.version else {
                    throw fail("version", v, "this bridged reads version \(RouterConfigFile.version) files, not \(n)")
                }
            }
            guard let base = top["web_base"] else {
                throw fail("web_base", root, "missing: the base URL of the app's web pages (e.g. http://127.0.0.1:8787/app/)")
            }
            var webBase = try string("web_base", base)
            if webBase.hasPrefix("/") {
                guard let origin else {
                    throw fail("web_base", base, "'\(webBase)' is a path: write an absolute URL (http://host:port\(webBase)), or run it in the daemon, which puts its own origin in front")
                }
                webBase = (origin.hasSuffix("/") ? String(origin.dropLast()) : origin) + webBase
            }
            var c = RouterConfig(webBase: webBase)
            if let s = top["schemes"] {
                let m = try mapping("schemes", s, allowed: ["native", "web"])
                c.nativeSchemes = try m["native"].map { (n) throws(ConfigFileError) in try strings("schemes.native", n) } ?? c.nativeSchemes
                c.webSchemes = try m["web"].map { (n) throws(ConfigFileError) in try strings("schemes.web", n) } ?? c.webSchemes
            }
            if let o = top["own_origins"] { c.ownOrigins = try strings("own_origins", o) }
            if let e = top["external_links"] { c.externalLinks = try choice("external_links", e, ExternalLinkPolicy.self) }
            if let b = top["back_behavior"] { c.backBehavior = try choice("back_behavior", b, BackBehavior.self) }
            if let d = top["max_stack_depth"] { c.maxStackDepth = try int("max_stack_depth", d) }
            if let t = top["initial_tab"] { c.initialTab = try string("initial_tab", t) }
            if let t = top["tabs"] {
                for (i, n) in try list("tabs", t).enumerated() {
                    let k = "tabs[\(i)]"
                    let m = try mapping(k, n, allowed: ["name", "url", "title"])
                    guard let name = m["name"] else { throw fail("\(k).name", n, "missing: the tab's name") }
                    guard let url = m["url"] else { throw fail("\(k).url", n, "missing: the URL of the tab's root screen") }
                    c.tabs.append(
                        TabConfig(
                            name: try string("\(k).name", name), url: try string("\(k).url", url),
                            title: try m["title"].map { (x) throws(ConfigFileError) in try string("\(k).title", x) }))
                }
            }
            if let r = top["routes"] {
                for (i, n) in try list("routes", r).enumerated() {
                    let k = "routes[\(i)]"
                    let m = try mapping(k, n, allowed: ["name", "template", "native", "native_only", "feature_flag", "modal", "tab", "title"])
                    guard let name = m["name"] else { throw fail("\(k).name", n, "missing: the route's name") }
                    guard let template = m["template"] else {
                        throw fail("\(k).template", n, "missing: the route's template (e.g. products/:product_id)")
                    }
                    func optString(_ f: String) throws(ConfigFileError) -> String? {
                        try m[f].map { (x) throws(ConfigFileError) in try string("\(k).\(f)", x) }
                    }
                    func optBool(_ f: String) throws(ConfigFileError) -> Bool {
                        try m[f].map { (x) throws(ConfigFileError) in try bool("\(k).\(f)", x) } ?? false
                    }
                    c.routes.append(
                        RouteConfig(
                            name: try string("\(k).name", name), template: try string("\(k).template", template),
                            native: try optString("native"), nativeOnly: try optBool("native_only"),
                            featureFlag: try optString("feature_flag"), modal: try optBool("modal"), tab: try optString("tab"),
                            title: try optString("title")))
                }
            }
            if let s = top["native_screens"] { c.nativeScreens = try strings("native_screens", s) }
            if let f = top["feature_flags"] {
                guard case .mapping(let m) = f else {
                    throw fail("feature_flags", f, "expected a mapping of flag names to true/false, found \(kind(f))")
                }
                for (kn, vn) in m {
                    let name = try string("feature_flags", kn)
                    let path = "feature_flags.\(name)"
                    note(path, vn)
                    guard c.featureFlags[name] == nil else { throw fail(path, kn, "'\(name)' appears twice") }
                    c.featureFlags[name] = try bool(path, vn)
                }
            }
            return c
        }
    }
}
