// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "bridged",
    // Linux only (glibc, epoll, libwebsockets from Debian, posix_spawn with Linux file
    // actions): no `platforms`, which would claim a macOS deployment target that is never built.
    products: [
        .executable(name: "bridged", targets: ["bridged"]),
        .library(name: "BridgeProtocol", targets: ["BridgeProtocol"]),
        // Test support for the daemon and the browser layer (docs/ARCHITECTURE.md, "Testing the
        // browser layer without Chromium"): FakeTransport, FakeChromium, Inbox.
        .library(name: "BridgeTesting", targets: ["BridgeTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // libwebsockets 4.1.6 from Debian's libwebsockets-dev, plus a shim header for what Swift
        // cannot import (LWS_PRE, log macros, variadic functions).
        .systemLibrary(
            name: "CWebsockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // RFC 6455 masking and request-head size checks lws 4.1.6 lacks, on the bytes it reads: a `recv` interposer (C).
        .target(name: "CWireCheck"),
        // Pure Swift: the stacking engine, the protocol state machine, the JSON codec, the router.
        // No I/O, no threads, no lws.
        .target(name: "BridgeProtocol"),
        // Route configuration files (YAML) parsed into BridgeProtocol's router types.
        .target(
            name: "BridgeConfig",
            dependencies: [
                "BridgeProtocol",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The libwebsockets glue: transport, timers, HTTP, and the daemon that drives the
        // protocol state machine. Only the lws service thread touches lws.
        // Files under Sources/BridgeServer/Assets/ (bridge.js is a link to js-client/bridge.js)
        // are compiled in by the EmbedAssets plugin: `EmbeddedAssets.bytes(named: "bridge.js")`.
        .target(
            name: "BridgeServer",
            dependencies: [
                "CWebsockets",
                "CWireCheck",
                "BridgeProtocol",
                "BridgeConfig",
                "BridgeBrowser",
                "BridgeTrace",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            exclude: ["Assets"],
            plugins: [.plugin(name: "EmbedAssets")]
        ),
        // Pure: the trace format (record), its replay against a fresh state machine, and the stack
        // diagram in the seed's notation.
        .target(name: "BridgeTrace", dependencies: ["BridgeProtocol", "BridgeConfig"]),
        // `bridged check`: steps, the app-awareness rules over an observation log (pure), the
        // reports (table, JUnit, HTML).
        .target(name: "BridgeCheck", dependencies: ["BridgeProtocol", .product(name: "Yams", package: "Yams")]),
        // Build-tool plugin (Plugins/EmbedAssets) and the generator it runs at build time.
        .plugin(name: "EmbedAssets", capability: .buildTool(), dependencies: ["embed-assets"]),
        .executableTarget(name: "embed-assets", path: "Plugins/EmbedAssetsTool"),
        // The native shell in a real browser: Chromium over the DevTools pipe, a tab per web view.
        .target(name: "BridgeBrowser", dependencies: ["BridgeProtocol"]),
        // Test support, a product: a fake transport the daemon runs on (time driven by hand), a
        // fake Chromium that plays the DevTools side by script, and an inbox to wait on what
        // arrives from other threads (docs/ARCHITECTURE.md, the browser layer).
        .target(name: "BridgeTesting", dependencies: ["BridgeServer", "BridgeBrowser", "BridgeProtocol"]),
        .executableTarget(
            name: "bridged",
            dependencies: [
                "BridgeTrace",
                "BridgeCheck",
                "BridgeServer",
                "BridgeProtocol",
                "BridgeConfig",
                "BridgeBrowser",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "BridgeProtocolTests",
            dependencies: [
                "BridgeProtocol",
                "BridgeConfig",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "BridgeTraceTests", dependencies: ["BridgeTrace", "BridgeProtocol"]),
        .testTarget(name: "BridgeCheckTests", dependencies: ["BridgeCheck"]),
        .testTarget(
            name: "BridgeServerTests",
            dependencies: [
                "BridgeServer",
                "BridgeTesting",
                "CWebsockets",
                "CWireCheck",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "BridgeBrowserTests", dependencies: ["BridgeBrowser", "BridgeTesting", "BridgeProtocol"]),
    ],
    swiftLanguageModes: [.v6]
)
