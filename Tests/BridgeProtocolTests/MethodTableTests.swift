import Foundation
import Testing
@testable import BridgeProtocol

/// The one name table (`BridgeMethod`): every method is matched by its own name, has its row
/// in the metrics, reaches the role that takes it, and is in the docs' tables.
@Suite struct MethodTableTests {
    @Test func namesRoundTrip() {
        for (i, m) in BridgeMethod.allCases.enumerated() {
            #expect(BridgeMethod(name: m.name) == m)
            #expect(m.index == i, "\(m): the tag is not the declaration order")
            #expect(BridgeMethod.names[i] == m.name)
        }
        #expect(MemoryLayout<BridgeMethod>.size == 1)
        #expect(Set(BridgeMethod.names).count == BridgeMethod.allCases.count)
        for name in ["", "Ping", "pwa-navigatE", "session.nope", "pwa-navigated", "hello "] {
            #expect(BridgeMethod(name: name) == nil, "\(name)")
        }
        // The fast path's match from bytes answers as `init(name:)` does.
        func fromBytes(_ name: String) -> BridgeMethod? { Array(name.utf8).withUnsafeBytes { BridgeMethod(utf8: $0) } }
        for m in BridgeMethod.allCases { #expect(fromBytes(m.name) == m) }
        for name in ["", "Ping", "pin", "pingg", "pwa-navigatE", "session.nope", "pwa-navigated", "hello ", "bridge.replyx", "navigation.navigateToUr"] {
            #expect(fromBytes(name) == nil, "\(name)")
        }
        for e in PageEventName.allCases { #expect(PageEventName(name: e.name) == e) }
        #expect(PageEventName(name: "hello") == nil && PageEventName(name: "ping") == nil)
    }

    /// Every method is taken by a page, a controller, or is `hello`; the ones of both roles are
    /// `ping` and `deeplink.open`.
    @Test func everyMethodHasARole() {
        for m in BridgeMethod.allCases {
            #expect(m == .hello || PageMethod(m) != nil || ControllerMethod(m) != nil, "\(m.name) reaches nobody")
        }
        #expect(BridgeMethod.allCases.filter { PageMethod($0) != nil && ControllerMethod($0) != nil } == [.ping, .deeplinkOpen])
        #expect(PageMethod(.hello) == nil && ControllerMethod(.hello) == nil)
        #expect(PageMethod.allCases.count == BridgeMethod.allCases.filter { PageMethod($0) != nil }.count)
        let controller = BridgeMethod.allCases.filter { ControllerMethod($0) != nil }.map(\.name)
        #expect(controller.sorted() == [
            "bridge.reply", "deeplink.open", "navigation.back", "navigation.canGoBack", "navigation.navigateToUrl",
            "navigation.popToRoot", "ping", "router.get", "router.perform", "router.resolve", "router.selectTab",
            "session.close", "session.create", "session.get", "session.list", "session.subscribe",
            "session.screenshot", "session.unsubscribe", "placeholder.snapshot", "webview.click", "webview.evaluate", "webview.type",
            "webview.dialog.answer", "webview.reload", "webview.setFiles", "session.setGeolocation",
        ].sorted())
        // Each controller method lands in a distinct case.
        let cases = BridgeMethod.allCases.compactMap(ControllerMethod.init)
        for (i, a) in cases.enumerated() { for b in cases[(i + 1)...] { #expect(a != b) } }
    }

    // MARK: The docs

    static let protocolDoc: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/BridgeProtocolTests/MethodTableTests.swift
        let path = parts.joined(separator: "/") + "/docs/PROTOCOL.md"
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }()

    /// Where a document's tables name methods: `page` for the rows of "the page sends" tables
    /// and rows whose `role` says page; `controller` for the rows of "method" tables (with a
    /// `role` column: those that say controller). A row names the first backticked word of its
    /// first cell (after `event`, as the page's table has it).
    static func documentedMethods(_ markdown: String) -> (page: Set<String>, controller: Set<String>, headings: [String]) {
        var page: Set<String> = [], controller: Set<String> = []
        var headings: [String] = []
        var header: [String]? = nil
        var previous = ""
        func cells(_ line: String) -> [String] {
            var parts = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            parts.removeFirst()
            if parts.last == "" { parts.removeLast() }
            return parts
        }
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            defer { previous = line }
            if line.hasPrefix("#") { headings.append(line); header = nil; continue }
            guard line.hasPrefix("|") else { header = nil; continue }
            let row = cells(line)
            if row.first?.hasPrefix("---") == true {
                header = previous.hasPrefix("|") ? cells(previous).map { $0.lowercased() } : nil
                continue
            }
            guard let header, let first = row.first else { continue }
            var cell = Substring(first)
            if cell.hasPrefix("event ") { cell = cell.dropFirst(6) }
            guard cell.hasPrefix("`"), let close = cell.dropFirst().firstIndex(of: "`") else { continue }
            let name = String(cell[cell.index(after: cell.startIndex)..<close].prefix { $0 != " " })
            let role = header.firstIndex(of: "role").flatMap { $0 < row.count ? row[$0] : nil }
            switch header.first {
            case "the page sends":
                page.insert(name)
            case "method":
                if let role {
                    if role.contains("page") { page.insert(name) }
                    if role.contains("controller") { controller.insert(name) }
                } else {
                    controller.insert(name)
                }
            default:
                break
            }
        }
        return (page, controller, headings)
    }

    /// What `Self.protocolDoc` misses: the names of methods a role takes that its tables do not list.
    static func undocumented(_ markdown: String) -> [String] {
        let doc = documentedMethods(markdown)
        var missing: [String] = []
        for m in BridgeMethod.allCases {
            if m == .hello {
                if !doc.headings.contains(where: { $0.lowercased().contains("hello") }) { missing.append("hello (a heading)") }
                continue
            }
            if PageMethod(m) != nil, !doc.page.contains(m.name) { missing.append("\(m.name) (page)") }
            if ControllerMethod(m) != nil, !doc.controller.contains(m.name) { missing.append("\(m.name) (controller)") }
        }
        return missing
    }

    /// docs/PROTOCOL.md lists every method in the tables of the roles that may call it, and
    /// lists no method that does not exist.
    @Test func theProtocolDocListsEveryMethod() {
        let text = Self.protocolDoc
        #expect(!text.isEmpty, "docs/PROTOCOL.md not found")
        #expect(Self.undocumented(text) == [])
        let doc = Self.documentedMethods(text)
        let known = Set(BridgeMethod.names)
        let unknown = doc.page.union(doc.controller).subtracting(known)
        // The page's events in its table are not requests; every other listed name is a method.
        #expect(unknown.subtracting(PageEventName.names).isEmpty, "\(unknown.sorted())")
    }

    /// The check fails when a method's row goes: each row of the doc removed in turn is missed.
    @Test func aMissingRowIsFound() {
        let text = Self.protocolDoc
        let rows: [(String, String)] = [
            ("| `webview.click` |", "webview.click (controller)"),
            ("| `router.get` |", "router.get (controller)"),
            ("| `pwa-rendered {}` |", "pwa-rendered (page)"),
            ("| `bridge.reply` |", "bridge.reply (controller)"),
            ("| `deeplink.open` |", "deeplink.open (page)"),
        ]
        for (prefix, missing) in rows {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no row \(prefix)")
            let without = lines.filter { !$0.hasPrefix(prefix) }.joined(separator: "\n")
            #expect(Self.undocumented(without).contains(missing), "\(prefix)")
        }
    }
}
