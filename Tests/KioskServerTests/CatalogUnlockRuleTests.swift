import Foundation
import Testing

@testable import KioskServer

@Suite("Catalog: subscription unlock rules")
struct CatalogUnlockRuleTests {
    @Test("The loader reports unlocked products that do not exist or have no published_at")
    func crossChecks() throws {
        let directory = try ServerTestDirectory()
        try directory.write(
            "com.example.sub/Info.json",
            #"{"product_id": "com.example.sub", "type": "auto_renewable", "title": "S", "content_version": "1", "unlocks": {"product_id_prefix": "com.example.mag.", "product_ids": ["com.example.gone"]}}"#
        )
        try directory.writeProduct(id: "com.example.mag.1", publishedAt: "2026-11-01T00:00:00Z")
        try directory.writeProduct(id: "com.example.mag.2")
        let snapshot = CatalogTestFixtures.load(directory)
        #expect(snapshot.products["com.example.sub"]?.info.unlocks?.covers("com.example.mag.1") == true)
        let messages = snapshot.problems.filter { $0.field == "unlocks" }.map(\.message)
        #expect(messages.count == 2)
        #expect(messages.contains { $0.contains("'com.example.gone' is not in the catalog") })
        #expect(messages.contains { $0.contains("'com.example.mag.2' has no published_at") })
    }

    @Test("The sample catalog's subscription unlocks the magazine without problems")
    func sample() throws {
        let content = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("content")
        var cache = HashCache()
        let snapshot = CatalogLoader(contentDirectory: content, hashCacheURL: nil).load(cache: &cache)
        #expect(snapshot.problems.isEmpty)
        let rule = try #require(snapshot.products["com.example.kiosk.subscription.monthly"]?.info.unlocks)
        #expect(rule.covers("com.example.kiosk.magazine.2026-11"))
    }
}
