import PropertyBased
import Testing

@testable import BridgeProtocol

/// Properties of URL handling: any text resolves or fails with a `RouterError` (never a trap),
/// and filling a template then matching the URL gives the parameters back.
@Suite struct RouteFuzzTests {
    static let pieces = [
        "tt:", "os:", "http:", "https:", "//", "/", "shop.example", "127.0.0.1:8787", "app", "products", "42", "?", "#", "&",
        "=", "%", "%2F", "%zz", "%C3%A9", "%FF", "+", ":", "*", "is_modal=", "true", "maybe", "title=", "é", " ", "@", "[",
        "]", "..", "help", "cart", "settings", "elsewhere.example", "reviews", ":99999",
    ]

    @Test func anyTextResolvesOrFailsCleanly() async {
        let router = RouterFixture.router()
        await propertyCheck(count: 2000, input: Gen.int(in: 0...(Self.pieces.count - 1)).array(of: 0...12)) { (xs: [Int]) in
            let url = xs.map { Self.pieces[$0] }.joined()
            do {
                let r = try router.resolve(url)
                if case .native = r.screen { #expect(r.route.name != nil || r.rule == .nativeOnly) }
            } catch let error as RouterError {
                #expect(!error.message.isEmpty)
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    static let valueChars: [String] = ["a", "Z", "0", "/", "%", "+", " ", "?", "#", "&", "=", "é", "日", "-", ".", "~", ":"]

    @Test func fillThenResolveGivesTheParametersBack() async throws {
        let router = RouterFixture.router()
        let value = Gen.int(in: 0...(Self.valueChars.count - 1)).array(of: 1...8).map { $0.map { Self.valueChars[$0] }.joined() }
        await propertyCheck(count: 500, input: value, value) { (id: String, extra: String) in
            let url = try router.url(forRoute: "product", params: ["product_id": id, "ref": extra])
            let r = try router.resolve(url)
            #expect(r.route.name == "product", "\(url)")
            #expect(r.route.pathParams == ["product_id": id], "\(url)")
            #expect(r.route.query == ["ref": extra], "\(url)")
        }
    }
}
