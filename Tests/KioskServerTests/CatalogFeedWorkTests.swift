import Foundation
import KioskCore
import NIOCore
import Testing

@testable import KioskServer

/// What a change-feed page costs: the change since a tag is computed once per snapshot, and pages of any `limit` or
/// cursor are slices of it (#27 flaw 6).
@Suite("Catalog feed work")
struct CatalogFeedWorkTests {
    /// Products `com.p<i>` for `range`, at `version`.
    static func products(_ range: Range<Int>, version: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: range.map { ("com.p\(String(format: "%03d", $0))", version) })
    }

    /// Three snapshots: 300 products; then 100 changed, 50 removed, 50 added; then 30 of those changed again.
    static func history() throws -> (first: EncodedCatalog, current: EncodedCatalog, history: CatalogHistory) {
        let first = try CatalogHistoryTests.catalog(products(0..<300, version: "1"))
        let second = try CatalogHistoryTests.catalog(
            products(0..<100, version: "2").merging(products(100..<250, version: "1")) { $1 }
                .merging(products(300..<350, version: "1")) { $1 })
        let third = try CatalogHistoryTests.catalog(
            products(0..<30, version: "3").merging(products(30..<100, version: "2")) { $1 }
                .merging(products(100..<250, version: "1")) { $1 }.merging(products(300..<350, version: "1")) { $1 })
        let history = CatalogHistory(first: first).advanced(from: first, to: second).advanced(from: second, to: third)
        return (first, third, history)
    }

    static func decode(_ representation: CatalogRepresentation) throws -> CatalogChanges {
        try KioskJSON.decode(CatalogChanges.self, from: Data(buffer: representation.json))
    }

    /// The IDs of a page in the order of the feed: products added or changed in catalog order (all published the
    /// same day here, so in ID order), then removed IDs.
    static func ids(_ page: CatalogChanges) -> [String] {
        (page.added + page.changed).map(\.id).sorted() + page.removed
    }

    @Test func pagesOfAnyLimitOrCursorComputeTheChangesOnce() throws {
        let (first, current, history) = try Self.history()
        let feed = CatalogFeed(catalog: current, history: history)
        let whole = try Self.decode(feed.answer(since: first.tag, cursor: nil, cursorText: nil, limit: 500))
        #expect(whole.nextCursor == nil)
        #expect(whole.added.count == 50 && whole.changed.count == 100 && whole.removed.count == 50)
        var requests = 1
        // First pages of every limit from 1 to 120: each a distinct answer.
        for limit in 1...120 {
            let page = try Self.decode(feed.answer(since: first.tag, cursor: nil, cursorText: nil, limit: limit))
            requests += 1
            #expect(Self.ids(page) == Array(Self.ids(whole).prefix(limit)), "first page of \(limit)")
        }
        // Whole walks with small limits: every page a distinct cursor; together they are the whole answer.
        for limit in [3, 7, 13, 29] {
            var walked: [String] = []
            var cursorText: String?
            repeat {
                let page = try Self.decode(
                    feed.answer(
                        since: first.tag, cursor: cursorText.flatMap(CatalogCursor.init(encoded:)),
                        cursorText: cursorText, limit: limit))
                requests += 1
                #expect(page.kind == .changes && page.catalogETag == "\"\(current.tag)\"")
                walked += Self.ids(page)
                cursorText = page.nextCursor
            } while cursorText != nil
            #expect(walked == Self.ids(whole), "walk by \(limit)")
        }
        #expect(requests >= 200)
        #expect(
            current.changeSets.computations == 1,
            "\(requests) feed requests for one 'since' computed the change set \(current.changeSets.computations) times"
        )
        // Another remembered tag has a change set of its own; unknown tags get the whole catalog and none.
        _ = feed.answer(since: history.tags[1], cursor: nil, cursorText: nil, limit: 10)
        for unknown in 0..<50 { _ = feed.answer(since: "unknown\(unknown)", cursor: nil, cursorText: nil, limit: 10) }
        #expect(current.changeSets.computations == 2)
    }
}
