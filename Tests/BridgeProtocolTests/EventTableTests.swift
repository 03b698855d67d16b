import Foundation
import Testing

/// Every event the Bridge writes is in docs/PROTOCOL.md's event tables, with every field it can
/// carry. The events are read from the sources at test time (Sources/BridgeProtocol, profiles
/// included) by a small scanner:
///
/// - `emit(&s, NAME) { w in … }` is a controller event: NAME's `ControllerEventName` constants
///   (`.webviewOpen`; both arms of a ternary), read from their `static let … =
///   ControllerEventName("…")` declarations, or its string literals, are its names; its fields are `session` (which `emit` writes itself) and every
///   `w.key("…")` in the trailing closure, conditional or not. A helper that writes an event
///   (`emitWebviewOpen`, `emitStackChanged`, `announceRouterWebView`) calls `emit` with a
///   literal, so the scanner sees it where the helper is defined; a name that is not a literal
///   is reported, for the scanner (or the helper) to be taught.
/// - `sendEvent(client, "…") { w in … }` is an event to one connection (a page's `closed`,
///   `back`, `navigate.failed`; a handler's `navigate`): its fields are the closure's keys, and
///   the raw `"key":` of its `appendRaw(#"…"#)`. Hotwire's `sendObject(client, name, params)`
///   passes its page events through by name (docs/PROTOCOL.md's "the page is sent" table lists
///   them by hand): a `sendEvent` whose name is not a literal is skipped.
///
/// The docs' event tables are those whose header starts with `event` (`| event | params |` for
/// controllers, `| event | when |` for pages) or is `the page is sent (event)`. A row names the
/// events backticked in its first cell (the first word of each span: `` `back {placeholder,
/// url}` ``, `` `page.connected`, `page.disconnected` ``); a field is named when it is a word in
/// a backticked span of the row (a dotted name is one word). Controller events must be in a
/// `params` table. An event with rows in several tables (`stack.changed`) may name its fields
/// in any of them.
@Suite struct EventTableTests {
    struct Emitted: Equatable, CustomStringConvertible {
        var name: String
        var fields: Set<String>
        /// `emit` (to subscribed controllers), else `sendEvent` (to one connection).
        var toControllers: Bool
        /// `File.swift:LINE`.
        var site: String
        var description: String { "\(name) {\(fields.sorted().joined(separator: ", "))} at \(site)" }
    }

    static let root: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/BridgeProtocolTests/EventTableTests.swift
        return parts.joined(separator: "/")
    }()

    static let protocolDoc: String = (try? String(contentsOfFile: root + "/docs/PROTOCOL.md", encoding: .utf8)) ?? ""

    /// Every Swift file under Sources/BridgeProtocol, scanned.
    static let sourceEvents: (events: [Emitted], problems: [String]) = {
        let dir = root + "/Sources/BridgeProtocol"
        var events: [Emitted] = [], problems: [String] = []
        let files = (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
        let texts = files.map { (file: $0, text: try? String(contentsOfFile: dir + "/" + $0, encoding: .utf8)) }
        let names = texts.reduce(into: [String: String]()) { all, f in
            all.merge(eventNameConstants(f.text ?? "")) { a, _ in a }
        }
        for (file, text) in texts {
            guard let text else {
                problems.append("cannot read \(file)")
                continue
            }
            let found = scan(text, file: file, names: names)
            events += found.events
            problems += found.problems
        }
        return (events, problems)
    }()

    // MARK: The scanner

    /// The events `source` writes through `emit(&…, …)` and `sendEvent(…, "…")`, and what it
    /// could not read (a name that is not a literal, a call without a closure).
    static func scan(_ source: String, file: String, names constants: [String: String] = [:]) -> (events: [Emitted], problems: [String]) {
        let b = Array(source.utf8)
        var events: [Emitted] = [], problems: [String] = []
        var i = 0
        while i < b.count {
            // Strings and comments are skipped whole: a call is only found in code.
            if b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "#") && i + 1 < b.count && b[i + 1] == UInt8(ascii: "\"") {
                i = skipString(b, i)
                continue
            }
            if b[i] == UInt8(ascii: "/") && i + 1 < b.count && (b[i + 1] == UInt8(ascii: "/") || b[i + 1] == UInt8(ascii: "*")) {
                i = skipComment(b, i)
                continue
            }
            let emit = matches(b, i, "emit(&"), send = matches(b, i, "sendEvent(")
            guard (emit || send), i == 0 || !isWord(b[i - 1]) else {
                i += 1
                continue
            }
            let line = b[..<i].reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            let site = "\((file as NSString).lastPathComponent):\(line)"
            let open = i + (emit ? 4 : 9)
            let close = skipBalanced(b, open)
            let args = b[(open + 1)..<max(open + 1, close - 1)]
            // The name is the second argument: everything after the first top-level comma.
            guard let comma = topLevelComma(b, from: open + 1, to: close - 1) else {
                problems.append("\(site): a call with one argument")
                i = close
                continue
            }
            let nameArg = Array(b[(comma + 1)..<(close - 1)])
            var names = literals(nameArg)
            if emit {
                for constant in members(nameArg) {
                    if let name = constants[constant] { names.append(name) } else {
                        problems.append("\(site): .\(constant) is no ControllerEventName constant")
                    }
                }
            }
            var j = close
            while j < b.count, isSpace(b[j]) { j += 1 }
            var fields: Set<String> = emit ? ["session"] : []
            if j < b.count, b[j] == UInt8(ascii: "{") {
                let end = skipBalanced(b, j)
                fields.formUnion(keys(Array(b[j..<end])))
                i = end
            } else {
                if !names.isEmpty { problems.append("\(site): \(names) without a trailing closure") }
                i = close
            }
            if names.isEmpty {
                // `sendEvent(client, name)`: a page event passed through by name (hotwire).
                if emit { problems.append("\(site): emit of a name that is not a literal: \(String(decoding: args, as: UTF8.self))") }
                continue
            }
            for name in names { events.append(Emitted(name: name, fields: fields, toControllers: emit, site: site)) }
        }
        return (events, problems)
    }

    /// `static let NAME = ControllerEventName("…")` declarations: NAME → the event's name.
    static func eventNameConstants(_ source: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in source.split(separator: "\n") {
            guard let decl = line.range(of: "static let "), let call = line.range(of: " = ControllerEventName(\"") else { continue }
            let constant = line[decl.upperBound..<call.lowerBound].trimmingCharacters(in: .whitespaces)
            let rest = line[call.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { continue }
            out[constant] = String(rest[..<end])
        }
        return out
    }

    /// The implicit members of an expression outside strings (`.a`, `flag ? .a : .b`), in order.
    static func members(_ b: [UInt8]) -> [String] {
        var out: [String] = [], j = 0
        while j < b.count {
            if b[j] == UInt8(ascii: "\"") { j = skipString(b, j); continue }
            guard b[j] == UInt8(ascii: "."), j == 0 || !isWord(b[j - 1]) && b[j - 1] != UInt8(ascii: ")") else { j += 1; continue }
            var k = j + 1
            while k < b.count, isWord(b[k]) { k += 1 }
            if k > j + 1 { out.append(String(decoding: b[(j + 1)..<k], as: UTF8.self)) }
            j = k
        }
        return out
    }

    static func matches(_ b: [UInt8], _ i: Int, _ s: String) -> Bool {
        let u = Array(s.utf8)
        return i + u.count <= b.count && Array(b[i..<(i + u.count)]) == u
    }

    static func isWord(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D }

    /// The index after the comment starting at `i` (`//` to the line's end, `/* … */` nested).
    static func skipComment(_ b: [UInt8], _ i: Int) -> Int {
        if b[i + 1] == UInt8(ascii: "/") {
            var j = i
            while j < b.count, b[j] != 0x0A { j += 1 }
            return j
        }
        var depth = 0, j = i
        while j + 1 < b.count {
            if b[j] == UInt8(ascii: "/"), b[j + 1] == UInt8(ascii: "*") { depth += 1; j += 2; continue }
            if b[j] == UInt8(ascii: "*"), b[j + 1] == UInt8(ascii: "/") {
                depth -= 1; j += 2
                if depth == 0 { return j }
                continue
            }
            j += 1
        }
        return b.count
    }

    /// The index after the string literal starting at `i`: `"…"`, `"""…"""`, `#"…"#` (any
    /// number of `#`); `\(…)` interpolations are skipped as code.
    static func skipString(_ b: [UInt8], _ i: Int) -> Int {
        var j = i, hashes = 0
        while j < b.count, b[j] == UInt8(ascii: "#") { hashes += 1; j += 1 }
        let multiline = matches(b, j, "\"\"\"")
        j += multiline ? 3 : 1
        let quote = Array((multiline ? "\"\"\"" : "\"").utf8) + Array(repeating: UInt8(ascii: "#"), count: hashes)
        let escape = [UInt8(ascii: "\\")] + Array(repeating: UInt8(ascii: "#"), count: hashes)
        while j < b.count {
            if Array(b[j..<min(b.count, j + escape.count)]) == escape {
                j += escape.count
                if j < b.count, b[j] == UInt8(ascii: "(") { j = skipBalanced(b, j) } else { j += 1 }
                continue
            }
            if Array(b[j..<min(b.count, j + quote.count)]) == quote { return j + quote.count }
            j += 1
        }
        return b.count
    }

    /// The index after the bracket that closes the one at `i` (`(`, `{` or `[`), strings and
    /// comments skipped.
    static func skipBalanced(_ b: [UInt8], _ i: Int) -> Int {
        var depth = 0, j = i
        while j < b.count {
            let c = b[j]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "#") && j + 1 < b.count && (b[j + 1] == UInt8(ascii: "\"") || b[j + 1] == UInt8(ascii: "#")) {
                j = skipString(b, j)
                continue
            }
            if c == UInt8(ascii: "/"), j + 1 < b.count, b[j + 1] == UInt8(ascii: "/") || b[j + 1] == UInt8(ascii: "*") {
                j = skipComment(b, j)
                continue
            }
            if c == UInt8(ascii: "(") || c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
            if c == UInt8(ascii: ")") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                depth -= 1
                if depth == 0 { return j + 1 }
            }
            j += 1
        }
        return b.count
    }

    /// The first comma in `b[from..<to]` outside brackets and strings.
    static func topLevelComma(_ b: [UInt8], from: Int, to: Int) -> Int? {
        var j = from
        while j < to {
            let c = b[j]
            if c == UInt8(ascii: "\"") { j = skipString(b, j); continue }
            if c == UInt8(ascii: "(") || c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { j = skipBalanced(b, j); continue }
            if c == UInt8(ascii: ",") { return j }
            j += 1
        }
        return nil
    }

    /// The plain string literals of an expression (`"a"`, `flag ? "a" : "b"`), in order.
    static func literals(_ b: [UInt8]) -> [String] {
        var out: [String] = [], j = 0
        while j < b.count {
            guard b[j] == UInt8(ascii: "\"") else { j += 1; continue }
            let end = skipString(b, j)
            out.append(String(decoding: b[(j + 1)..<max(j + 1, end - 1)], as: UTF8.self))
            j = end
        }
        return out
    }

    /// The keys a closure `{ w in … }` writes: `w.key("…")`, and `"key":` in the raw text of
    /// `w.appendRaw(#"…"#)`. A closure that takes `_` writes none; one whose parameter is not
    /// read here (`{ (w: inout JSONWriter) in`) is read for `.key("…")` of any writer.
    static func keys(_ closure: [UInt8]) -> Set<String> {
        let text = String(decoding: closure, as: UTF8.self)
        let head = text.dropFirst().drop { $0 == " " || $0 == "\n" }
        var param = String(head.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        if param == "_" { return [] }
        if param.isEmpty || !head.dropFirst(param.count).trimmingPrefix(" ").hasPrefix("in") { param = "" }
        var out: Set<String> = []
        for part in text.components(separatedBy: param + ".key(\"").dropFirst() {
            if let close = part.firstIndex(of: "\"") { out.insert(String(part[..<close])) }
        }
        for part in text.components(separatedBy: param + ".appendRaw(#\"").dropFirst() {
            guard let end = part.range(of: "\"#") else { continue }
            // `"placeholder":` in `#""placeholder":"#`.
            let raw = part[..<end.lowerBound]
            for piece in raw.components(separatedBy: "\":").dropLast() {
                if let open = piece.lastIndex(of: "\"") { out.insert(String(piece[piece.index(after: open)...])) }
            }
        }
        return out
    }

    // MARK: The docs

    struct EventRow {
        var names: [String]
        /// The words of the row's backticked spans.
        var words: Set<String>
        /// A `| event | params |` table (controllers), else one of a page's.
        var controller: Bool
    }

    /// The rows of `markdown`'s event tables.
    static func eventRows(_ markdown: String) -> [EventRow] {
        var rows: [EventRow] = []
        var header: [String]? = nil
        var previous = ""
        func cells(_ line: String) -> [String] {
            var parts = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            parts.removeFirst()
            if parts.last == "" { parts.removeLast() }
            return parts
        }
        func spans(_ cell: String) -> [Substring] {
            cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        }
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            // `\|` inside a cell is a bar of the text, not a column.
            let line = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\\|", with: "¦")
            defer { previous = line }
            guard line.hasPrefix("|") else { header = nil; continue }
            let row = cells(line)
            if row.first?.hasPrefix("---") == true {
                header = previous.hasPrefix("|") ? cells(previous).map { $0.lowercased() } : nil
                continue
            }
            guard let header, let first = header.first, let cell = row.first,
                  first == "event" || first == "the page is sent (event)" else { continue }
            let names = spans(cell).compactMap { span -> String? in
                let name = span.prefix { $0 != " " && $0 != "{" }
                return name.isEmpty ? nil : String(name)
            }
            // Dotted names are one word: `session.create` (a cause) does not name `session`.
            var words: Set<String> = []
            for span in row.flatMap(spans) {
                for word in span.split(whereSeparator: { !($0.isLetter || $0.isNumber || "_.-".contains($0)) }) { words.insert(String(word)) }
            }
            rows.append(EventRow(names: names, words: words, controller: header.count > 1 && header[1] == "params"))
        }
        return rows
    }

    /// What `markdown` misses of `events`: an event in no row of the tables it belongs in
    /// (`params` tables for controller events, any event table for `sendEvent`'s), and each field
    /// named in none of its rows.
    static func undocumented(_ markdown: String, _ events: [Emitted]) -> [String] {
        let rows = eventRows(markdown)
        var missing: [String] = []
        var seen: Set<String> = []
        for event in events {
            let kind = event.toControllers ? "controller event" : "event"
            let key = "\(kind) \(event.name)"
            let own = rows.filter { $0.names.contains(event.name) && ($0.controller || !event.toControllers) }
            if own.isEmpty {
                if seen.insert(key).inserted { missing.append("\(kind) `\(event.name)`: no row (\(event.site))") }
                continue
            }
            let words = own.reduce(into: Set<String>()) { $0.formUnion($1.words) }
            for field in event.fields.subtracting(words).sorted() where seen.insert("\(key).\(field)").inserted {
                missing.append("\(kind) `\(event.name)`: field `\(field)` not named in its row (\(event.site))")
            }
        }
        return missing
    }

    // MARK: The tests

    /// The scanner reads the sources: the events every session has are found, with their fields.
    @Test func theScannerFindsTheEvents() {
        let (events, problems) = Self.sourceEvents
        #expect(problems == [], "the scanner could not read: \(problems)")
        let names = Set(events.map(\.name))
        for name in ["session.created", "session.closed", "stack.changed", "foreground.shown", "webview.open",
                     "webview.dialog", "webview.unresponsive", "webview.responsive", "hotwire.message", "navigate", "closed"] {
            #expect(names.contains(name), "\(name) not found in Sources/BridgeProtocol")
        }
        let open = events.filter { $0.name == "webview.open" }.reduce(into: Set<String>()) { $0.formUnion($1.fields) }
        #expect(open.isSuperset(of: ["session", "webview", "url", "token", "pageUrl", "targetId", "browserContextId", "context"]))
    }

    /// docs/PROTOCOL.md has a row for every event the sources write, naming each of its fields.
    @Test func theProtocolDocListsEveryEvent() {
        let text = Self.protocolDoc
        #expect(!text.isEmpty, "docs/PROTOCOL.md not found")
        let missing = Self.undocumented(text, Self.sourceEvents.events)
        #expect(missing.isEmpty, "docs/PROTOCOL.md misses (a row in an event table, or the field in its row's params):\n\(missing.joined(separator: "\n"))")
    }

    /// The check fails when a row, or a field of a row, goes from the doc.
    @Test func aMissingRowOrFieldIsFound() {
        let text = Self.protocolDoc
        let events = Self.sourceEvents.events
        #expect(Self.undocumented(text, events) == [])
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (prefix, missing) in [
            ("| `webview.crashed` |", "controller event `webview.crashed`: no row"),
            ("| `session.created` |", "controller event `session.created`: no row"),
            ("| `closed {reason, load?}` |", "event `closed`: no row"),
        ] {
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no row \(prefix)")
            let without = lines.filter { !$0.hasPrefix(prefix) }.joined(separator: "\n")
            #expect(Self.undocumented(without, events).contains { $0.hasPrefix(missing) }, "\(prefix)")
        }
        for (prefix, field, missing) in [
            ("| `foreground.removed` |", "latencyMs", "controller event `foreground.removed`: field `latencyMs`"),
            ("| `webview.dialog` |", "policy", "controller event `webview.dialog`: field `policy`"),
            ("| `webview.open` |", "targetId", "controller event `webview.open`: field `targetId`"),
            ("| `webview.closed` |", "session, ", "controller event `webview.closed`: field `session`"),
            ("| `closed {reason, load?}` |", "load", "event `closed`: field `load`"),
        ] {
            #expect(lines.contains { $0.hasPrefix(prefix) && $0.contains(field) }, "no row \(prefix) with \(field)")
            let without = lines.map { $0.hasPrefix(prefix) ? $0.replacingOccurrences(of: field, with: "") : $0 }.joined(separator: "\n")
            #expect(Self.undocumented(without, events).contains { $0.hasPrefix(missing) }, "\(prefix) without \(field)")
        }
    }

    /// One writer per controller event: each is sent by one `emit` call, which sets all of its
    /// fields (an event with several causes has a helper, `emitWebviewOpen`, that they call);
    /// and every declared name is sent somewhere.
    @Test func eachControllerEventHasOneWriter() {
        let sites = Self.sourceEvents.events.filter(\.toControllers).reduce(into: [String: [String]]()) { $0[$1.name, default: []].append($1.site) }
        let many = sites.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }
        #expect(many.isEmpty, "events with more than one writer: \(many.map { "\($0.key) at \($0.value.joined(separator: ", "))" })")
        let dir = Self.root + "/Sources/BridgeProtocol"
        let files = (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        let declared = files.reduce(into: Set<String>()) { all, f in
            all.formUnion(Self.eventNameConstants((try? String(contentsOfFile: dir + "/" + f, encoding: .utf8)) ?? "").values)
        }
        #expect(declared.count >= 30, "\(declared)")
        #expect(declared.subtracting(sites.keys).isEmpty, "declared and never sent: \(declared.subtracting(sites.keys).sorted())")
        // The scanner sees a second writer.
        let twice = Self.scan("emit(&s, .a) { w in w.key(\"x\") }\nb.emit(&s, .a) { _ in }", file: "Z.swift", names: ["a": "a.b"])
        #expect(twice.events.map(\.name) == ["a.b", "a.b"] && twice.problems.isEmpty)
        #expect(Self.scan("emit(&s, .nope) { _ in }", file: "Z.swift").problems.contains { $0.contains(".nope is no ControllerEventName") })
    }

    /// The scanner on a snippet: both arms of a ternary, conditional keys, comments and strings
    /// that only look like calls, a helper's name that is not a literal.
    @Test func theScannerReadsCalls() {
        let source = #"""
            // emit(&s, "in.a.comment") { w in w.key("no") }
            let text = "emit(&s, \"in.a.string\")"
            b.emit(&s, flag ? "a.on" : "a.off") { w in
                w.key("webview"); w.string("}")  // a brace in a string
                if let x { w.key("maybe"); w.string("\(x ? "y" : "n")") }
            }
            emit(&s, "plain") { _ in }
            sendEvent(client, "page.thing") { w in
                w.appendRaw(#""placeholder":"#)
                w.key("url")
            }
            sendEvent(client, name) { w in w.key("passed") }
            emit(&s, name) { w in w.key("x") }
            emit(&s, ok ? .typedOn : .typedOff) { w in w.key("t") }
            """#
        let (events, problems) = Self.scan(source, file: "X.swift", names: ["typedOn": "t.on", "typedOff": "t.off"])
        #expect(events.map(\.name) == ["a.on", "a.off", "plain", "page.thing", "t.on", "t.off"])
        #expect(events[4].fields == ["session", "t"])
        #expect(events.first?.fields == ["session", "webview", "maybe"])
        #expect(events.first?.site == "X.swift:3")
        #expect(events[2].fields == ["session"])
        #expect(events[3].fields == ["placeholder", "url"] && !events[3].toControllers)
        #expect(problems.count == 1 && problems[0].contains("X.swift:13"), "\(problems)")
        let typed = Self.scan(#"emit(&s, "typed") { (w: inout JSONWriter) in w.key("a"); w.key("b") }"#, file: "Y.swift")
        #expect(typed.events.first?.fields == ["session", "a", "b"])
    }
}
