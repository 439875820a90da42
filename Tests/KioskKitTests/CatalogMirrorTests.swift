import Foundation
import KioskCore
import Testing

@testable import KioskKit

extension CatalogMirror {
    /// The copy after `pages` taken by one walk of the feed, nil when they do not make one walk.
    func applying(_ pages: [CatalogChanges]) -> CatalogMirror? {
        var walk = CatalogFeedWalk(from: self, limits: CatalogFeedWalk.Limits(maximumResponseSize: 16 << 20))
        for page in pages {
            guard (try? walk.take(page, bodyBytes: 0)) == true else { return nil }
        }
        return walk.result
    }
}

@Suite("Catalog mirror")
struct CatalogMirrorTests {
    static func product(_ id: String, title: String = "T", published: TimeInterval? = nil) -> Product {
        Product(
            id: id, type: .nonConsumable, title: title, description: "", contentVersion: "1", contentLength: 1,
            fileCount: 1, publishedAt: published.map { Date(timeIntervalSince1970: $0) })
    }

    static let mirror = CatalogMirror(
        catalogETag: "\"a\"",
        products: ["com.a": product("com.a"), "com.b": product("com.b", published: 100), "com.c": product("com.c")])

    @Test func changesAreAppliedAcrossPages() throws {
        let pages = [
            CatalogChanges(
                kind: .changes, catalogETag: "\"b\"", added: [Self.product("com.d", published: 200)],
                changed: [Self.product("com.a", title: "New")], nextCursor: "x"),
            CatalogChanges(kind: .changes, catalogETag: "\"b\"", removed: ["com.c", "com.unknown"]),
        ]
        let next = try #require(Self.mirror.applying(pages))
        #expect(next.catalogETag == "\"b\"")
        #expect(next.ordered.map(\.id) == ["com.d", "com.b", "com.a"])
        #expect(next.products["com.a"]?.title == "New")
    }

    @Test func aFullWalkReplacesTheCopy() throws {
        let pages = [
            CatalogChanges(kind: .full, catalogETag: "\"z\"", products: [Self.product("com.x")], nextCursor: "1"),
            CatalogChanges(kind: .full, catalogETag: "\"z\"", products: [Self.product("com.y")]),
        ]
        let next = try #require(Self.mirror.applying(pages))
        #expect(next.ordered.map(\.id) == ["com.x", "com.y"])
    }

    @Test func pagesOfDifferentWalksAreNotApplied() {
        #expect(Self.mirror.applying([]) == nil)
        let mixed = [
            CatalogChanges(kind: .changes, catalogETag: "\"b\"", nextCursor: "x"),
            CatalogChanges(kind: .changes, catalogETag: "\"c\""),
        ]
        #expect(Self.mirror.applying(mixed) == nil)
        let kinds = [
            CatalogChanges(kind: .changes, catalogETag: "\"b\"", nextCursor: "x"),
            CatalogChanges(kind: .full, catalogETag: "\"b\""),
        ]
        #expect(Self.mirror.applying(kinds) == nil)
    }

    @Test func theCopyRoundTripsOnDiskAndAnUnreadableOneIsIgnored() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("catalog-mirror.json")
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem()) == nil)
        try Self.mirror.save(to: url, fileSystem: POSIXFileSystem())
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem()) == Self.mirror)
        try Data("{\"format\":2,\"catalog_etag\":\"x\",\"products\":{}}".utf8).write(to: url)
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem()) == nil)
        try Data("garbage".utf8).write(to: url)
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem()) == nil)
    }

    /// What the copy says about installed content depends on when it learnt it: a copy that changed after the install
    /// serves news, an older one does not (the install fetched what the server served then).
    @Test func anInstallIsOutOfDateOnlyForACopyThatChangedAfterIt() throws {
        let installedAt = Date(timeIntervalSince1970: 1_000)
        let content = InstalledContent(
            productID: "com.a", version: "0", directory: URL(fileURLWithPath: "/tmp/a"), files: [],
            installedAt: installedAt)
        var mirror = Self.mirror
        #expect(mirror.newerVersion(than: content) == nil)  // written before `changed_at` existed: no news
        mirror.changedAt = installedAt.addingTimeInterval(-1)
        #expect(mirror.newerVersion(than: content) == nil)
        mirror.changedAt = installedAt.addingTimeInterval(1)
        #expect(mirror.newerVersion(than: content) == "1")
        var current = content
        current.version = "1"
        #expect(mirror.newerVersion(than: current) == nil)
        // A walk of the feed that changes nothing keeps the date (and so leaves the copy on disk as it is).
        let same = try #require(mirror.applying([CatalogChanges(kind: .changes, catalogETag: mirror.catalogETag)]))
        #expect(same == mirror)
        // The date survives the disk; an older copy without it reads.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("catalog-mirror.json")
        try mirror.save(to: url, fileSystem: POSIXFileSystem())
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem())?.changedAt == mirror.changedAt)
        try Data("{\"format\":1,\"catalog_etag\":\"x\",\"products\":{}}".utf8).write(to: url)
        #expect(CatalogMirror.load(from: url, fileSystem: POSIXFileSystem())?.changedAt == nil)
    }
}
