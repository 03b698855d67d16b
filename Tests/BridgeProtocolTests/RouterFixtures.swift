@testable import BridgeProtocol

/// The app most router tests use: three tabs, a modal cart, a native-only settings screen, a
/// product screen behind a feature flag.
enum RouterFixture {
    static func config(
        nativeProduct: Bool = true, external: ExternalLinkPolicy = .open, back: BackBehavior = .none, maxDepth: Int = 256
    ) -> RouterConfig {
        RouterConfig(
            webBase: "https://shop.example/app/",
            nativeSchemes: ["tt"],
            webSchemes: ["os"],
            ownOrigins: ["http://127.0.0.1:8787"],
            externalLinks: external,
            backBehavior: back,
            tabs: [
                TabConfig(name: "home", url: "os://home", title: "Home"),
                TabConfig(name: "search", url: "os://search"),
                TabConfig(name: "account", url: "tt://account"),
            ],
            routes: [
                RouteConfig(name: "home", template: "home", tab: "home"),
                RouteConfig(name: "search", template: "search", tab: "search"),
                RouteConfig(name: "account", template: "account", native: "AccountScreen", tab: "account"),
                RouteConfig(name: "product", template: "products/:product_id", native: "ProductScreen", featureFlag: "native_product", tab: "home", title: "Product"),
                RouteConfig(name: "product_reviews", template: "products/:product_id/reviews"),
                RouteConfig(name: "products_new", template: "products/new"),
                RouteConfig(name: "cart", template: "cart", native: "CartScreen", modal: true),
                RouteConfig(name: "settings", template: "settings", native: "SettingsScreen", nativeOnly: true),
                RouteConfig(name: "orders", template: "orders/:order_id", native: "OrderScreen"),
                RouteConfig(name: "help", template: "help/*topic"),
                RouteConfig(name: "category", template: ":section/list"),
            ],
            nativeScreens: ["ProductScreen", "CartScreen", "SettingsScreen", "AccountScreen"],
            featureFlags: ["native_product": nativeProduct],
            maxStackDepth: maxDepth
        )
    }

    static func router(
        nativeProduct: Bool = true, external: ExternalLinkPolicy = .open, back: BackBehavior = .none, maxDepth: Int = 256
    ) -> Router {
        try! Router(config: config(nativeProduct: nativeProduct, external: external, back: back, maxDepth: maxDepth))
    }

    static func item(_ id: String, _ url: String = "", of: String? = nil) -> RouteStackItem {
        RouteStackItem(id: ItemID(stringLiteral: id), url: url.isEmpty ? "https://shop.example/app/\(id)" : url,
                       of: of.map { ItemID(stringLiteral: $0) })
    }

    /// A tree from id lists: `tree(home: ["W1"], search: ["W2"], account: ["N1"], active: 0)`.
    static func tree(
        home: [String], search: [String] = ["W90"], account: [String] = ["N90"], modal: [String] = [], active: Int = 0,
        drawer: Bool = false
    ) -> NavigationTree {
        NavigationTree(
            tabs: [
                TabStack(name: "home", items: home.map { item($0) }),
                TabStack(name: "search", items: search.map { item($0) }),
                TabStack(name: "account", items: account.map { item($0) }),
            ],
            activeTab: active, modal: modal.map { item($0) }, drawerOpen: drawer)
    }

    static func ids(_ items: [RouteStackItem]) -> [String] { items.map(\.id.description) }
}

/// Item ids written as in the contract (`"W1"`, `"P2"`) in test expectations and fixtures.
extension ItemID: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) {
        guard let id = ItemID(parsing: text) else { preconditionFailure("'\(text)' is no item id") }
        self = id
    }
}
