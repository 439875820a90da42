// swift-tools-version:6.2
import Foundation
import PackageDescription

// The README's KioskKit snippets, compiled as an app compiles them: KioskKit added with `traits: []` (so only
// swift-crypto is resolved besides Kiosk) and `import KioskKit` alone. Built by .ci/run.
// A path dependency's identity is its folder's name, whatever the clone is called.
let kiosk = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "ReadmeSnippets",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .visionOS(.v1)],
    dependencies: [.package(path: "../..", traits: [])],
    targets: [
        // StoreKit and Security do not exist on Linux: the few names of them that the snippets use.
        .target(name: "StoreKit"),
        .target(name: "Security"),
        .target(
            name: "ReadmeSnippets",
            dependencies: [
                .product(name: "KioskKit", package: kiosk.lastPathComponent.lowercased()),
                .target(name: "StoreKit", condition: .when(platforms: [.linux])),
                .target(name: "Security", condition: .when(platforms: [.linux])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
