// swift-tools-version:6.1
// The benchmarks of bridged, a package of their own so the daemon's package (and `make test`)
// never builds them. `make bench` builds and runs them; see docs/PERFORMANCE.md.
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/bridge-load --help
//   swift run -c release --package-path Benchmarks engine-bench --help
import PackageDescription

// The daemon's package by path (the repository's root). A path dependency's identity is the name
// of its directory, which depends on where the repository was cloned: read it here.
let project = String(#filePath.split(separator: "/").dropLast(2).last ?? "bridged")

let package = Package(
    name: "bridged-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // epoll, TCP_NODELAY, and libwebsockets' SHA-1/base64 for the load generator.
        .target(
            name: "CBenchSupport",
            linkerSettings: [.linkedLibrary("websockets")]
        ),
        // The load generator of `make bench`: WebSocket on raw sockets and one epoll loop.
        .executableTarget(
            name: "bridge-load",
            dependencies: [
                "CBenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Transitions per second and allocations per transition of the stacking engine.
        .executableTarget(
            name: "engine-bench",
            dependencies: [
                .product(name: "BridgeProtocol", package: project),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
