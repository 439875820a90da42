import Foundation
import Testing

@testable import KioskKit

/// #28 item 8: installed file paths keep the server's `Contents/` prefix, so `content.url(for: "issue.pdf")` used to
/// point nowhere. A file is found by its path as the grant lists it or within `Contents/`.
@Suite("Installed content")
struct InstalledContentTests {
    static let content = InstalledContent(
        productID: "com.example.a", version: "1.0", directory: URL(fileURLWithPath: "/c/Content/com.example.a/1.0"),
        files: [
            InstalledFile(path: "Contents/issue.pdf", length: 1, sha256: ""),
            InstalledFile(path: "Contents/images/cover.jpg", length: 1, sha256: ""),
            InstalledFile(path: "readme.txt", length: 1, sha256: ""),
        ], installedAt: Date())

    @Test func aFileIsFoundByItsGrantPathOrWithinContents() {
        let content = Self.content
        #expect(content.url(for: "issue.pdf").path == "/c/Content/com.example.a/1.0/Contents/issue.pdf")
        #expect(content.url(for: "Contents/issue.pdf").path == "/c/Content/com.example.a/1.0/Contents/issue.pdf")
        #expect(
            content.url(for: "images/cover.jpg").path == "/c/Content/com.example.a/1.0/Contents/images/cover.jpg")
        // A file listed outside Contents/ is found where it is; a path naming nothing resolves as it is given.
        #expect(content.url(for: "readme.txt").path == "/c/Content/com.example.a/1.0/readme.txt")
        #expect(content.url(for: "missing.bin").path == "/c/Content/com.example.a/1.0/missing.bin")
    }
}
