import Testing

@testable import BridgeProtocol

@Suite struct RouteTemplateTests {
    struct MatchCase: CustomTestStringConvertible, Sendable {
        var template: String
        var path: String
        var expected: [String: String]?
        var testDescription: String { "'\(template)' ~ '\(path)'" }
    }

    static let matchCases: [MatchCase] = [
        .init(template: "products/:id", path: "products/42", expected: ["id": "42"]),
        .init(template: "products/:id", path: "products/42/", expected: ["id": "42"]),  // one trailing slash ignored
        .init(template: "/products/:id/", path: "products/42", expected: ["id": "42"]),  // template slashes ignored
        .init(template: "products/:id", path: "products", expected: nil),
        .init(template: "products/:id", path: "products/", expected: nil),
        .init(template: "products/:id", path: "products//", expected: nil),
        .init(template: "products/:id", path: "products/42/x", expected: nil),
        .init(template: "products/:id", path: "Products/42", expected: nil),  // literals are case-sensitive
        .init(template: "products/:id", path: "products/a%20b", expected: ["id": "a b"]),
        .init(template: "products/:id", path: "products/a%2Fb", expected: ["id": "a/b"]),  // %2F does not split
        .init(template: "products/:id", path: "products/caf%C3%A9", expected: ["id": "café"]),
        .init(template: "products/:id", path: "products/a+b", expected: ["id": "a+b"]),  // '+' is not a space in paths
        .init(template: "a/:x/b/:y", path: "a/1/b/2", expected: ["x": "1", "y": "2"]),
        .init(template: "a/:x/b/:y", path: "a/1/c/2", expected: nil),
        .init(template: "help/*topic", path: "help", expected: ["topic": ""]),
        .init(template: "help/*topic", path: "help/a/b%2Fc", expected: ["topic": "a/b/c"]),
        .init(template: "help/*", path: "help/x/y", expected: [:]),
        .init(template: "", path: "", expected: [:]),
        .init(template: "", path: "x", expected: nil),
        .init(template: "x", path: "", expected: nil),
    ]

    @Test(arguments: matchCases)
    func matching(_ c: MatchCase) throws {
        let template = try RouteTemplate(c.template)
        let segments = try RoutePath.segments(Substring(c.path))
        #expect(template.match(segments) == c.expected)
    }

    @Test func percentDecodingErrors() {
        #expect(throws: RouterError.self) { try RoutePath.segments("products/%zz") }
        #expect(throws: RouterError.self) { try RoutePath.segments("products/%4") }
        #expect(throws: RouterError.self) { try RoutePath.segments("products/%FF") }  // not UTF-8
        #expect(throws: RouterError.self) { try PercentEncoding.parsePairs("a=%G1") }
        #expect(throws: RouterError.self) { try PercentEncoding.parsePairs("=1") }
    }

    @Test func queryPairs() throws {
        #expect(try PercentEncoding.parsePairs("a=1&b=x+y&c=%26&a=2&&flag") == ["a": "2", "b": "x y", "c": "&", "flag": ""])
        #expect(try PercentEncoding.parsePairs("tab=reviews&section", bareKeys: false) == ["tab": "reviews"])
        #expect(try PercentEncoding.parsePairs("/a/b", bareKeys: false) == [:])
    }

    struct SyntaxCase: Sendable, CustomTestStringConvertible {
        var template: String
        var messagePart: String
        var testDescription: String { "'\(template)'" }
    }

    static let syntaxErrors: [SyntaxCase] = [
        .init(template: "products/:", messagePart: "unknown parameter syntax ':'"),
        .init(template: "products/:1d", messagePart: "unknown parameter syntax ':1d'"),
        .init(template: "products/:id-x", messagePart: "unknown parameter syntax ':id-x'"),
        .init(template: "products/{id}", messagePart: "character '{' not allowed"),
        .init(template: "products/a:b", messagePart: "unknown parameter syntax ':' inside segment 'a:b'"),
        .init(template: "a//b", messagePart: "empty segment"),
        .init(template: "a/:x/:x", messagePart: "parameter 'x' appears twice"),
        .init(template: "*rest/a", messagePart: "must be the last segment"),
        .init(template: "a/b c", messagePart: "character ' ' not allowed"),
        .init(template: "a/%20", messagePart: "character '%' not allowed"),
    ]

    @Test(arguments: syntaxErrors)
    func syntaxError(_ c: SyntaxCase) {
        do {
            _ = try RouteTemplate(c.template)
            Issue.record("'\(c.template)' parsed")
        } catch {
            #expect(error.message.contains(c.messagePart), "\(error.message)")
        }
    }

    @Test func specificity() throws {
        let lit = try RouteTemplate("products/new")
        let param = try RouteTemplate("products/:id")
        let wild = try RouteTemplate("products/*rest")
        let bare = try RouteTemplate("products")
        let lead = try RouteTemplate(":section/new")
        #expect(lit.isMoreSpecific(than: param))
        #expect(!param.isMoreSpecific(than: lit))
        #expect(param.isMoreSpecific(than: wild))
        #expect(!wild.isMoreSpecific(than: param))
        #expect(bare.isMoreSpecific(than: wild))  // `products` vs `products/*rest` on "products"
        #expect(!wild.isMoreSpecific(than: bare))
        #expect(param.isMoreSpecific(than: lead))  // the leftmost difference decides
        #expect(!lead.isMoreSpecific(than: param))
        #expect(!param.isMoreSpecific(than: param))
        #expect(try RouteTemplate("products/:sku").hasSameShape(as: param))
        #expect(!lit.hasSameShape(as: param))
    }

    @Test func fillIsTheInverseOfMatch() throws {
        let t = try RouteTemplate("shops/:shop/items/:item/*rest")
        let (path, unused) = try t.fill(["shop": "a b/c", "item": "é", "rest": "x/y", "q": "1"])
        #expect(path == "shops/a%20b%2Fc/items/%C3%A9/x/y")
        #expect(unused == ["q": "1"])
        #expect(t.match(try RoutePath.segments(Substring(path))) == ["shop": "a b/c", "item": "é", "rest": "x/y"])
        #expect(throws: RouterError.self) { try t.fill(["shop": "a"]) }
        #expect(throws: RouterError.self) { try t.fill(["shop": "", "item": "1"]) }
    }
}
