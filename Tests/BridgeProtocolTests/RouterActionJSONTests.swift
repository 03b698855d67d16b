import Testing

@testable import BridgeProtocol

@Suite struct RouterActionJSONTests {
    struct Good: Sendable, CustomTestStringConvertible {
        var json: JSONValue
        var action: RouterAction
        var testDescription: String { json.jsonString }
    }

    static let good: [Good] = [
        .init(json: "goBack", action: .goBack),
        .init(json: ["type": "goBack"], action: .goBack),
        .init(json: "resetHome", action: .resetHome),
        .init(json: "openDrawer", action: .openDrawer),
        .init(json: "closeDrawer", action: .closeDrawer),
        .init(json: "toggleDrawer", action: .toggleDrawer),
        .init(json: ["type": "navigate", "url": "tt://products/1"], action: .navigate(.url("tt://products/1"), stack: nil, context: nil)),
        .init(
            json: ["type": "navigate", "route": "product", "params": ["product_id": 42, "gift": true, "x": "y"], "stack": "active", "context": ["a": [1]]],
            action: .navigate(.route("product", params: ["product_id": "42", "gift": "true", "x": "y"]), stack: .active, context: ["a": [1]])),
        .init(json: ["type": "push", "url": "os://a", "stack": "modal"], action: .push(.url("os://a"), stack: .stack(.modal), context: nil)),
        .init(json: ["type": "replace", "url": "os://a", "stack": "tab:home"], action: .replace(.url("os://a"), stack: .stack(.tab("home")), context: nil)),
        .init(json: ["type": "pop"], action: .pop(count: 1, stack: nil)),
        .init(json: ["type": "pop", "count": 3, "stack": nil], action: .pop(count: 3, stack: nil)),
        .init(json: ["type": "popToTop", "stack": "tab:a"], action: .popToTop(stack: .stack(.tab("a")))),
        .init(json: ["type": "reset", "urls": ["os://a", "tt://b"]], action: .reset([.url("os://a"), .url("tt://b")], stack: nil)),
        .init(
            json: ["type": "reset", "routes": [["route": "home"], ["route": "product", "params": ["product_id": "1"]]], "stack": "tab:home"],
            action: .reset([.route("home", params: [:]), .route("product", params: ["product_id": "1"])], stack: .stack(.tab("home")))),
        .init(json: ["type": "selectTab", "tab": "search"], action: .selectTab("search")),
        .init(
            json: ["type": "setParams", "params": ["a": "1", "b": nil, "c": 2.5], "item": "W3"],
            action: .setParams(["a": "1", "b": String?.none, "c": "2.5"] as [String: String?], item: "W3")),
    ]

    @Test(arguments: good)
    func parses(_ c: Good) throws {
        #expect(try RouterAction(json: c.json) == c.action)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var json: JSONValue
        var messagePart: String
        var testDescription: String { json.jsonString }
    }

    static let bad: [Bad] = [
        .init(json: 42, messagePart: "a string or an object"),
        .init(json: "fly", messagePart: "unknown action type 'fly'"),
        .init(json: ["url": "x"], messagePart: "needs a string 'type'"),
        .init(json: "navigate", messagePart: "needs a string 'url' or a string 'route'"),
        .init(json: ["type": "navigate", "url": "a", "route": "b"], messagePart: "not both"),
        .init(json: ["type": "navigate", "urll": "a"], messagePart: "unknown field 'urll'"),
        .init(json: ["type": "navigate", "url": 1], messagePart: "needs a string 'url'"),
        .init(json: ["type": "navigate", "url": "a", "params": [:]], messagePart: "'params' goes with 'route'"),
        .init(json: ["type": "navigate", "route": "a", "params": ["x": [1]]], messagePart: "params.x must be"),
        .init(json: ["type": "navigate", "url": "a", "stack": "tabs"], messagePart: "unknown stack 'tabs'"),
        .init(json: ["type": "navigate", "url": "a", "stack": 3], messagePart: "'stack' must be a string"),
        .init(json: ["type": "navigate", "url": "a", "context": "x"], messagePart: "'context' must be a JSON object"),
        .init(json: ["type": "pop", "count": 0], messagePart: "positive integer"),
        .init(json: ["type": "pop", "count": 1.5], messagePart: "positive integer"),
        .init(json: ["type": "goBack", "x": 1], messagePart: "unknown field 'x'"),
        .init(json: ["type": "reset", "urls": []], messagePart: "at least one"),
        .init(json: ["type": "reset", "urls": [1]], messagePart: "urls[0] must be a string"),
        .init(json: ["type": "reset"], messagePart: "needs an array 'urls'"),
        .init(json: ["type": "reset", "routes": [["url": "x"]]], messagePart: "unknown field 'url' in routes[0]"),
        .init(json: ["type": "selectTab"], messagePart: "needs a string 'tab'"),
        .init(json: ["type": "setParams"], messagePart: "needs an object 'params'"),
        .init(json: ["type": "setParams", "params": ["a": [:]]], messagePart: "params.a must be"),
        .init(json: ["type": "setParams", "params": [:], "item": 3], messagePart: "'item' must be an item id"),
    ]

    @Test(arguments: bad)
    func rejects(_ c: Bad) {
        do {
            let a = try RouterAction(json: c.json)
            Issue.record("parsed as \(a)")
        } catch {
            #expect(error.code == .invalidParams)
            #expect(error.message.contains(c.messagePart), "\(error.message)")
        }
    }

    @Test func paramTextOfNumbersAndBooleans() {
        #expect(RouterAction.paramText(.int(42)) == "42")
        #expect(RouterAction.paramText(.double(2.5)) == "2.5")
        #expect(RouterAction.paramText(.bool(false)) == "false")
        #expect(RouterAction.paramText("s") == "s")
        #expect(RouterAction.paramText(nil) == nil)
        #expect(RouterAction.paramText([1]) == nil)
    }
}
