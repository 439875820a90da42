import Foundation
import KioskCore
import KioskServerTestSupport
import KioskStore
import Testing

@testable import KioskServer

/// The change feed's history: net changes over several reloads, and its bounds.
@Suite("Catalog history and cursors")
struct CatalogHistoryTests {
    /// The encoded catalog of products with these versions.
    static func catalog(_ versions: [String: String]) throws -> EncodedCatalog {
        let products = try versions.map { id, version in
            let json = ServerTestFixtures.infoJSON(id: id, version: version, publishedAt: "2026-01-01T00:00:00Z")
            return CatalogProduct(info: try ProductInfo.parse(Data(json.utf8), folder: id).get(), files: [])
        }
        return CatalogSnapshot(products: products, problems: []).encoded
    }

    @Test func netChangesOverSeveralReloads() throws {
        let first = try Self.catalog(["com.a": "1", "com.b": "1", "com.c": "1"])
        let second = try Self.catalog(["com.a": "2", "com.b": "1", "com.d": "1"])
        let third = try Self.catalog(["com.a": "2", "com.b": "2", "com.e": "1"])
        var history = CatalogHistory(first: first)
        history = history.advanced(from: first, to: second).advanced(from: second, to: third)
        let sinceFirst = try #require(history.changes(since: first.tag))
        #expect(sinceFirst.added == ["com.e"], "com.d came and went")
        #expect(sinceFirst.changed == ["com.a", "com.b"])
        #expect(sinceFirst.removed == ["com.c"])
        let sinceSecond = try #require(history.changes(since: second.tag))
        #expect(sinceSecond.added == ["com.e"] && sinceSecond.changed == ["com.b"])
        #expect(sinceSecond.removed == ["com.d"])
        let current = try #require(history.changes(since: third.tag))
        #expect(current.added.isEmpty && current.changed.isEmpty && current.removed.isEmpty)
        #expect(history.changes(since: "unknown") == nil)
        #expect(history.advanced(from: third, to: third).tags == history.tags, "an unchanged catalog adds no tag")
    }

    @Test func keepsAtMostTheStatedNumberOfTags() throws {
        var previous = try Self.catalog(["com.a": "0"])
        let first = previous
        var history = CatalogHistory(first: previous)
        for version in 1...CatalogHistory.maximumTags {
            let next = try Self.catalog(["com.a": "\(version)"])
            history = history.advanced(from: previous, to: next)
            previous = next
        }
        #expect(history.tags.count == CatalogHistory.maximumTags)
        #expect(history.changes(since: first.tag) == nil, "the oldest tag was dropped")
        #expect(history.changes(since: history.tags[0])?.changed == ["com.a"])
    }

    @Test func keepsAtMostTheStatedNumberOfRemovals() throws {
        let many = Dictionary(uniqueKeysWithValues: (0...CatalogHistory.maximumRemovals).map { ("com.p\($0)", "1") })
        let full = try Self.catalog(many.merging(["com.keep": "1"]) { $1 })
        let half = try Self.catalog(["com.keep": "1", "com.p0": "1"])
        let empty = try Self.catalog(["com.keep": "1"])
        var history = CatalogHistory(first: full).advanced(from: full, to: half)
        #expect(history.changes(since: full.tag)?.removed.count == CatalogHistory.maximumRemovals)
        history = history.advanced(from: half, to: empty)
        #expect(history.changes(since: full.tag) == nil, "over the removal bound: the oldest transition goes")
        #expect(history.changes(since: half.tag)?.removed == ["com.p0"])
    }

    @Test func cursorsRoundTripAndForeignOnesAreRefused() {
        var cursor = CatalogCursor(after: CatalogKey(published: 1_767_225_600.5, id: "com.a"))
        cursor.since = "abc"
        #expect(CatalogCursor(encoded: cursor.encoded) == cursor)
        #expect(!cursor.encoded.contains("=") && !cursor.encoded.contains("+") && !cursor.encoded.contains("/"))
        for bad in ["", "nope", "e30", String(repeating: "a", count: 2000), "eyJ2IjoyfQ"] {
            #expect(CatalogCursor(encoded: bad) == nil, "\(bad.prefix(20))")
        }
    }

    @Test func undatedProductsComeLast() {
        let dated = CatalogKey(published: 0, id: "com.z")
        let older = CatalogKey(published: -1e12, id: "com.y")
        let undated = CatalogKey(published: nil, id: "com.a")
        #expect([undated, older, dated].sorted() == [dated, older, undated])
    }
}

/// Reloads keep the history the feed answers from, and an unchanged reload reuses the encoded catalog.
@Suite("Catalog reloads and history")
struct CatalogReloadHistoryTests {
    @Test func anUnchangedReloadReusesTheSnapshotAndAChangeAdvancesTheHistory() async throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let catalog = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
        let first = catalog.snapshotAndHistory
        await catalog.reload()
        let again = catalog.snapshotAndHistory
        #expect(again.snapshot.encoded.answers === first.snapshot.encoded.answers, "not encoded again")
        #expect(again.history.tags == [first.snapshot.encoded.tag])

        try content.writeProduct(id: "com.b")
        await catalog.reloadIfChanged()
        let changed = catalog.snapshotAndHistory
        #expect(changed.history.tags == [first.snapshot.encoded.tag, changed.snapshot.encoded.tag])
        #expect(changed.history.changes(since: first.snapshot.encoded.tag)?.added == ["com.b"])
    }
}
