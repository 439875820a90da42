// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Kiosk",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .visionOS(.v1)],
    products: [
        .library(name: "KioskCore", targets: ["KioskCore"]),
        .library(name: "KioskKit", targets: ["KioskKit"]),
        .library(name: "KioskServer", targets: ["KioskServer"]),
        .executable(name: "kiosk", targets: ["kiosk"]),
    ],
    traits: [
        .trait(
            name: "Server",
            description: "The server, the kiosk command and the tests: every dependency but swift-crypto."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .target(name: "KioskCore"),
        .target(name: "KioskStore", dependencies: ["KioskCore"]),
        .target(
            name: "KioskServer",
            dependencies: [
                "KioskCore", "KioskStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its HTTP/1.1 channel, which KioskHTTP1Channel extends with the event loops' direct answers.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA PKCS#1 v1.5 for app receipt signatures (AppReceiptVerifier).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The application's side of a connection, set up when first needed (KioskHTTP1Channel).
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "KioskKit",
            dependencies: [
                "KioskCore",
                .product(name: "Crypto", package: "swift-crypto"),
                // Content on Linux (NIOSegmentTransport); with the trait "Server" only, like the rest below.
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client",
                    condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(
                    name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
            ]
        ),
        .executableTarget(
            name: "kiosk",
            dependencies: [
                "KioskCore", "KioskKit", "KioskServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"]),
        // Fixtures the store and server tests share: Apple's verifyReceipt answers, products and dates.
        .target(name: "KioskStoreTestSupport", dependencies: ["KioskStore"], path: "Tests/KioskStoreTestSupport"),
        // KioskStore alone, as the fuzzers and tools build it: no server.
        .testTarget(name: "KioskStoreTests", dependencies: ["KioskStore", "KioskCore", "KioskStoreTestSupport"]),
        // What the server and end-to-end tests share: the live-server starter, its executor, the log recorder, the
        // PostgreSQL test server.
        .target(
            name: "KioskServerTestSupport",
            dependencies: [
                "KioskServer", .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/KioskServerTestSupport"),
        .testTarget(
            name: "KioskServerTests",
            dependencies: [
                "KioskServer", "KioskStore", "KioskCore", "KioskStoreTestSupport", "KioskServerTestSupport",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "KioskKitTests", dependencies: ["KioskKit", "KioskCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "KioskCLITests", dependencies: ["kiosk"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "KioskServer", "KioskKit", "KioskCore", "KioskServerTestSupport",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// KioskKit needs only swift-crypto. Every other package serves the server, the `kiosk` command and the tests, so
// it is behind the trait "Server", on by default: an app that adds this package with `traits: []` resolves and pins
// swift-crypto and what it needs, not the server stack (README, "Adding KioskKit").
for target in package.targets {
    target.dependencies = target.dependencies.map { dependency in
        guard case .productItem(let name, let package?, let moduleAliases, nil) = dependency,
            package != "swift-crypto"
        else { return dependency }
        return .productItem(
            name: name, package: package, moduleAliases: moduleAliases, condition: .when(traits: ["Server"]))
    }
}
