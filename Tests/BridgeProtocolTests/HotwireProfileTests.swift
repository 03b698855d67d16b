import Testing

@testable import BridgeProtocol

@Suite struct HotwireProfileTests {
    @Test func noProfile() throws {
        #expect(try HotwireProfile.parse(["url": "http://a.test/"]) == nil)
        #expect(try HotwireProfile.parse(["profile": "astro"]) == nil)
    }

    @Test func full() throws {
        let p = try #require(try HotwireProfile.parse([
            "profile": "hotwire-native", "platform": "android", "bridgeComponents": ["form", "menu", "form"],
            "pathConfiguration": ["rules": [["patterns": ["/new$"], "properties": ["context": "modal"]]]],
        ]))
        #expect(p.platform == .android)
        #expect(p.components == ["form", "menu"])
        #expect(p.configuration.properties(for: "/x/new", platform: .android).context == .modal)
        let d = try #require(try HotwireProfile.parse(["profile": "hotwire-native", "pathConfigurationUrl": "http://a.test/pc.json"]))
        #expect(d.platform == .ios && d.components.isEmpty && d.configurationURL == "http://a.test/pc.json")
    }

    @Test(arguments: [
        (["profile": "other"], "unknown profile \"other\": \"astro\" (the default), \"hotwire-native\" or \"capacitor\"", nil),
        (["profile": "astro", "platform": "ios"], "'platform' needs \"profile\": \"hotwire-native\"", "platform"),
        (["platform": "ios"], "'platform' needs \"profile\": \"hotwire-native\"", "platform"),
        (["profile": "hotwire-native", "platform": "web"], "platform must be \"ios\" or \"android\", not \"web\"", "platform"),
        (["profile": "hotwire-native", "pathConfiguration": [:]], "a path configuration needs 'rules'", "pathConfiguration"),
        (["profile": "hotwire-native", "pathConfiguration": ["rules": []], "pathConfigurationUrl": "http://a/"],
         "give pathConfiguration or pathConfigurationUrl, not both", "pathConfiguration"),
        (["profile": "hotwire-native", "pathConfigurationUrl": "file:///etc/passwd"],
         "pathConfigurationUrl must be an http(s) URL, not \"file:///etc/passwd\"", "pathConfigurationUrl"),
        (["profile": "hotwire-native", "bridgeComponents": "form"], "bridgeComponents must be an array of names", "bridgeComponents"),
        (["profile": "hotwire-native", "bridgeComponents": ["a b"]],
         "bridge component \"a b\" is not a name (letters, digits, '-', '_'; at most 64 bytes)", "bridgeComponents"),
    ] as [(JSONObject, String, String?)])
    func refused(_ params: JSONObject, _ message: String, _ param: String?) {
        #expect(throws: HotwireConfigurationError(message, param: param)) { try HotwireProfile.parse(params) }
    }

    @Test func componentLimit() throws {
        let names = (0..<HotwireProfile.maxComponents).map { JSONValue.string("c\($0)") }
        let p = try HotwireProfile.parse(["profile": "hotwire-native", "bridgeComponents": .array(names)])
        #expect(p?.components.count == 64)
        #expect(throws: HotwireConfigurationError("65 bridge components: at most 64", param: "bridgeComponents")) {
            try HotwireProfile.parse(["profile": "hotwire-native", "bridgeComponents": .array(names + ["x"])])
        }
    }
}
