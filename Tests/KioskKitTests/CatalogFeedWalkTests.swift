import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #27 flaw 2: a walk of the change feed folds each page as it arrives and is bounded by bytes, entries and pages,
/// so that an endless feed of large `removed` lists fails at a bound instead of filling the app's memory.
@Suite("Catalog feed walk")
struct CatalogFeedWalkTests {
    static let mirror = CatalogMirror(
        catalogETag: "\"a\"",
        products: Dictionary(
            uniqueKeysWithValues: (0..<100).map { ("com.p\($0)", CatalogMirrorTests.product("com.p\($0)")) }))

    /// A page of the endless feed: `count` removed IDs of `length` bytes each, and always a next cursor.
    static func endlessPage(_ number: Int, count: Int = 500, length: Int = 200) -> CatalogChanges {
        let stem = String(repeating: "x", count: max(0, length - 16))
        return CatalogChanges(
            kind: .changes, catalogETag: "\"b\"",
            removed: (0..<count).map { "com.\(stem).\(number).\($0)" }, nextCursor: "page-\(number + 1)")
    }

    @Test func anEndlessFeedStopsAtTheByteBoundHoldingOnlyTheCatalogItBuilds() throws {
        let limits = CatalogFeedWalk.Limits(maximumResponseSize: 1 << 20)  // 2 MiB a walk
        var walk = CatalogFeedWalk(from: Self.mirror, limits: limits)
        var failure: KioskError?
        var largestHeld = 0
        for number in 0..<10_000 {
            let page = Self.endlessPage(number)
            let bytes = try KioskJSON.encode(page).count
            do {
                #expect(try walk.take(page, bodyBytes: bytes))
            } catch {
                failure = error
                break
            }
            largestHeld = max(largestHeld, walk.heldProducts)
        }
        #expect(failure == .responseTooLarge(limit: 2 << 20))
        #expect(walk.bytes > 2 << 20 && walk.bytes <= (2 << 20) + 200 << 10, "\(walk.bytes) bytes taken")
        // What the walk holds: the catalog it builds (the 100 products, none of the removals), never the pages.
        #expect(largestHeld == 100)
        #expect(walk.pages < 30, "\(walk.pages) pages")
    }

    @Test func manyTinyEntriesStopAtTheEntryBound() {
        let limits = CatalogFeedWalk.Limits(maximumBytes: 1 << 30, maximumEntries: 10_000, maximumPages: 1_000)
        var walk = CatalogFeedWalk(from: Self.mirror, limits: limits)
        var failure: KioskError?
        for number in 0..<1_000 {
            do { _ = try walk.take(Self.endlessPage(number, length: 1), bodyBytes: 100) } catch {
                failure = error
                break
            }
        }
        #expect(failure == .invalidResponse("the catalog feed listed over 10000 products and removals"))
        #expect(walk.entries == 10_000 + 500 && walk.pages == 21)
    }

    @Test func emptyPagesStopAtThePageBound() {
        let limits = CatalogFeedWalk.Limits(maximumBytes: 1 << 30, maximumEntries: 1 << 20, maximumPages: 50)
        var walk = CatalogFeedWalk(from: Self.mirror, limits: limits)
        var failure: KioskError?
        for _ in 0..<100 {
            do {
                _ = try walk.take(CatalogChanges(kind: .changes, catalogETag: "\"b\"", nextCursor: "x"), bodyBytes: 80)
            } catch {
                failure = error
                break
            }
        }
        #expect(failure == .invalidResponse("the catalog feed did not end after 50 pages"))
    }

    @Test func theDefaultsFollowTheResponseLimit() {
        let limits = CatalogFeedWalk.Limits(maximumResponseSize: 16 << 20)
        #expect(limits.maximumBytes == 32 << 20)
        #expect(limits.maximumEntries == 1_000_000)
        #expect(limits.maximumPages == 20_000)
    }
}
