import Testing

@testable import BridgeProtocol

@Suite struct RouteResolveTests {
    let router = RouterFixture.router()

    // MARK: Schemes

    @Test func nativeSchemeOpensTheNativeScreen() throws {
        let r = try router.resolve("tt://products/42")
        #expect(r.route.name == "product")
        #expect(r.route.pathParams == ["product_id": "42"])
        #expect(r.screen == .native("ProductScreen"))
        #expect(r.rule == .nativeAvailable)
        #expect(r.stack == .tab("home"))
        #expect(r.presentation == .push)
        #expect(r.title == "Product")
        // Without `//` and with extra leading slashes, the same path.
        #expect(try router.resolve("tt:products/42").route.pathParams == ["product_id": "42"])
        #expect(try router.resolve("TT:///products/42").route.pathParams == ["product_id": "42"])
    }

    @Test func webSchemeOpensAWebViewOnTheWebBase() throws {
        let r = try router.resolve("os://products/42?ref=mail#tab=reviews")
        #expect(r.screen == .webview("https://shop.example/app/products/42?ref=mail#tab=reviews"))
        #expect(r.rule == .webScheme)
        #expect(r.route.name == "product")  // still matched: name and parameters are known
        #expect(r.route.params == ["product_id": "42", "ref": "mail", "tab": "reviews"])
        // An unmatched os:// path is a plain page of the app.
        let plain = try router.resolve("os://about/team")
        #expect(plain.route.name == nil)
        #expect(plain.screen == .webview("https://shop.example/app/about/team"))
        // A native-only route has no web version: native even from os://.
        #expect(try router.resolve("os://settings").screen == .native("SettingsScreen"))
    }

    @Test func ownOriginLinksAreDeepLinks() throws {
        let r = try router.resolve("https://shop.example/app/products/7")
        #expect(r.route.name == "product")
        #expect(r.screen == .native("ProductScreen"))
        let page = try router.resolve("https://SHOP.example:443/app/about")
        #expect(page.route.name == nil)
        #expect(page.screen == .webview("https://SHOP.example:443/app/about"))
        #expect(page.route.path == "about")
        // The base itself, with or without its slash, is the root path.
        #expect(try router.resolve("https://shop.example/app").route.path == "")
        #expect(try router.resolve("https://shop.example/app/").route.path == "")
        // Another own origin (the daemon's), path outside the base: the whole path.
        let local = try router.resolve("http://127.0.0.1:8787/products/9")
        #expect(local.route.name == "product")
        #expect(local.screen == .native("ProductScreen"))
        // Web fallback of an own-origin link is the link itself.
        let web = try RouterFixture.router(nativeProduct: false).resolve("http://127.0.0.1:8787/products/9")
        #expect(web.screen == .webview("http://127.0.0.1:8787/products/9"))
    }

    @Test func externalLinksFollowThePolicy() throws {
        let open = try router.resolve("https://elsewhere.example/products/1")
        #expect(open.screen == .external("https://elsewhere.example/products/1"))
        #expect(open.route.name == nil)  // never matched against the app's routes
        // Same host, other port or scheme: another origin.
        #expect(try router.resolve("http://shop.example/app/products/1").screen == .external("http://shop.example/app/products/1"))
        #expect(try router.resolve("https://shop.example:8443/app/x").screen == .external("https://shop.example:8443/app/x"))

        let pushing = RouterFixture.router(external: .push)
        #expect(try pushing.resolve("https://elsewhere.example/a").screen == .webview("https://elsewhere.example/a"))

        let denying = RouterFixture.router(external: .deny)
        #expect(throws: RouterError(.notAllowed, "external link 'https://elsewhere.example/a' is denied by the external-link policy")) {
            try denying.resolve("https://elsewhere.example/a")
        }
    }

    struct BadURL: Sendable, CustomTestStringConvertible {
        var url: String
        var messagePart: String
        var testDescription: String { url }
    }

    static let badURLs: [BadURL] = [
        .init(url: "ftp://shop.example/app/x", messagePart: "unknown scheme 'ftp:'"),
        .init(url: "mailto:a@b.c", messagePart: "unknown scheme 'mailto:'"),
        .init(url: "javascript:alert(1)", messagePart: "unknown scheme 'javascript:'"),
        .init(url: "/products/1", messagePart: "not an absolute URL"),
        .init(url: "products/1", messagePart: "not an absolute URL"),
        .init(url: "", messagePart: "not an absolute URL"),
        .init(url: "1tt://x", messagePart: "not a valid scheme"),
        .init(url: "tt://products/4 2", messagePart: "space or a control character"),
        .init(url: "tt://nothing/here", messagePart: "no route matches 'nothing/here'"),
        .init(url: "tt://products", messagePart: "no route matches 'products'"),
        .init(url: "tt://products//", messagePart: "no route matches"),
        .init(url: "tt://products/%zz", messagePart: "malformed percent-encoding"),
        .init(url: "tt://products/1?x=%E0%A4", messagePart: "does not decode to UTF-8"),
        .init(url: "tt://products/1?is_modal=maybe", messagePart: "is_modal must be true or false"),
        .init(url: "https:///app/x", messagePart: "no host"),
        .init(url: "https://shop.example:99999/app", messagePart: "malformed port"),
    ]

    @Test(arguments: badURLs)
    func unknownOrMalformedLinks(_ c: BadURL) {
        do {
            let r = try router.resolve(c.url)
            Issue.record("resolved to \(r.screen)")
        } catch {
            #expect(error.code == .unknownRoute)
            #expect(error.message.contains(c.messagePart), "\(error.message)")
        }
    }

    // MARK: Parameters

    @Test func pathQueryAndFragmentParameters() throws {
        let r = try router.resolve("tt://products/a%20b?color=dark+blue&size=M&product_id=evil#tab=reviews&color=red&anchor")
        #expect(r.route.pathParams == ["product_id": "a b"])
        #expect(r.route.query == ["color": "dark blue", "size": "M", "product_id": "evil"])
        #expect(r.route.fragmentParams == ["tab": "reviews", "color": "red"])
        #expect(r.route.fragment == "tab=reviews&color=red&anchor")
        // path > query > fragment
        #expect(r.route.params == ["product_id": "a b", "color": "dark blue", "size": "M", "tab": "reviews"])
    }

    @Test func conventionalQueryParameters() throws {
        let r = try router.resolve("tt://products/1?is_modal=true&title=Hello+there")
        #expect(r.route.isModal == true)
        #expect(r.route.title == "Hello there")
        #expect(r.title == "Hello there")
        #expect(r.presentation == .modal)
        #expect(r.stack == .modal)
        #expect(try router.resolve("tt://products/1?is_modal=0").route.isModal == false)
        #expect(try router.resolve("tt://products/1").route.isModal == nil)
        // is_modal=false overrides a modal route
        let cart = try router.resolve("tt://cart?is_modal=false")
        #expect(cart.presentation == .push)
        #expect(cart.stack == nil)
        #expect(try router.resolve("tt://cart").presentation == .modal)
    }

    // MARK: Conflicting templates: the most specific wins, whatever the order

    @Test func mostSpecificTemplateWins() throws {
        #expect(try router.resolve("tt://products/new").route.name == "products_new")  // literal > parameter
        #expect(try router.resolve("tt://products/1/reviews").route.name == "product_reviews")
        #expect(try router.resolve("tt://help").route.name == "help")
        #expect(try router.resolve("tt://help/a/b").route.pathParams == ["topic": "a/b"])
        // ":section/list" vs nothing else: matches any first segment
        #expect(try router.resolve("tt://shoes/list").route.pathParams == ["section": "shoes"])
        // "products/list": "products/:product_id" (literal first) beats ":section/list"
        #expect(try router.resolve("tt://products/list").route.name == "product")

        // Declaration order does not matter.
        var reversed = RouterFixture.config()
        reversed.routes.reverse()
        let r2 = try Router(config: reversed)
        for url in ["tt://products/new", "tt://products/1", "tt://products/list", "tt://shoes/list", "tt://help/x"] {
            #expect(try r2.resolve(url).route.name == router.resolve(url).route.name, "\(url)")
        }
    }

    // MARK: Route rules

    @Test func ruleOneNativeOnlyGetsItsNativeScreen() throws {
        let r = try router.resolve("tt://settings")
        #expect(r.screen == .native("SettingsScreen"))
        #expect(r.rule == .nativeOnly)
        // even from a web link or the app's own origin
        #expect(try router.resolve("https://shop.example/app/settings").rule == .nativeOnly)
    }

    @Test func ruleOneBeatsAnOffFeatureFlag() throws {
        var c = RouterFixture.config()
        c.featureFlags["settings_flag"] = false
        c.routes[7].featureFlag = "settings_flag"
        #expect(c.routes[7].name == "settings")
        let r = try Router(config: c).resolve("tt://settings")
        #expect(r.rule == .nativeOnly)
        #expect(r.screen == .native("SettingsScreen"))
    }

    @Test(arguments: [true, false])
    func ruleTwoFeatureFlagOffFallsBackToAWebView(flag: Bool) throws {
        let r = try RouterFixture.router(nativeProduct: flag).resolve("tt://products/42?x=1")
        if flag {
            #expect(r.rule == .nativeAvailable)
            #expect(r.screen == .native("ProductScreen"))
        } else {
            #expect(r.rule == .featureFlagOff)
            #expect(r.screen == .webview("https://shop.example/app/products/42?x=1"))
        }
    }

    @Test func flagsCanChangeAtRunTime() throws {
        var r = RouterFixture.router(nativeProduct: false)
        #expect(try r.resolve("tt://products/1").rule == .featureFlagOff)
        r.featureFlags["native_product"] = true
        #expect(try r.resolve("tt://products/1").rule == .nativeAvailable)
    }

    @Test func ruleThreeNativeScreenAvailable() throws {
        let r = try router.resolve("tt://account")
        #expect(r.rule == .nativeAvailable)
        #expect(r.screen == .native("AccountScreen"))
    }

    @Test func ruleFourEverythingElseIsAWebView() throws {
        // A route without a native screen.
        let reviews = try router.resolve("tt://products/1/reviews")
        #expect(reviews.rule == .web)
        #expect(reviews.screen == .webview("https://shop.example/app/products/1/reviews"))
        // A route whose native screen this build does not have.
        let orders = try router.resolve("tt://orders/5")
        #expect(orders.rule == .web)
        #expect(orders.screen == .webview("https://shop.example/app/orders/5"))
    }

    @Test func modalRoutesArePresentedModally() throws {
        let r = try router.resolve("tt://cart")
        #expect(r.presentation == .modal)
        #expect(r.stack == .modal)
        #expect(r.screen == .native("CartScreen"))
    }

    // MARK: Reverse routing

    @Test func urlForRoute() throws {
        #expect(try router.url(forRoute: "product", params: ["product_id": "a/b c", "ref": "x&y"]) == "tt://products/a%2Fb%20c?ref=x%26y")
        let r = try router.resolve(router.url(forRoute: "product", params: ["product_id": "a/b c", "ref": "x&y"]))
        #expect(r.route.params == ["product_id": "a/b c", "ref": "x&y"])
        #expect(throws: RouterError.self) { try router.url(forRoute: "nope") }
        #expect(throws: RouterError.self) { try router.url(forRoute: "product") }
    }

    @Test func resolutionJSON() throws {
        let json = try router.resolve("tt://products/42?title=T").toJSON()
        #expect(json["screen"] == ["kind": "native", "screen": "ProductScreen"])
        #expect(json["rule"] == "native-available")
        #expect(json["stack"] == "tab:home")
        #expect(json["route"]?["name"] == "product")
        #expect(json["route"]?["params"] == ["product_id": "42", "title": "T"])
        #expect(json["route"]?["isModal"] == .null)
        #expect(json["title"] == "T")
    }
}
