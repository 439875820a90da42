import Foundation
import KioskCore
import KioskStore
import KioskStoreTestSupport
import Testing

/// One bad `Info.json` and the problem it must produce.
struct ProductInfoBadCase: Sendable, CustomTestStringConvertible {
    var name: String
    var json: String
    var folder: String = ProductInfoTestFixtures.folder
    /// The field the problem must name (nil: the document as a whole).
    var field: String?
    /// Text the message must contain (empty: any message).
    var message: String

    var testDescription: String { name }
}

enum ProductInfoTestFixtures {
    static let folder = "com.example.kiosk.magazine.2026-11"

    static var valid: [String: Any] {
        ["product_id": folder, "type": "non_consumable", "title": "November", "content_version": "1.0"]
    }

    /// The valid minimal document with `changes` applied (`NSNull()` to set null, `nil` value removes the key).
    static func document(_ changes: [String: Any?]) -> String {
        var fields = valid
        for (key, value) in changes {
            if let value { fields[key] = value } else { fields.removeValue(forKey: key) }
        }
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    static func bad(
        _ name: String, _ changes: [String: Any?], field: String, _ message: String, folder: String = folder
    ) -> ProductInfoBadCase {
        ProductInfoBadCase(name: name, json: document(changes), folder: folder, field: field, message: message)
    }

    static let required = ["product_id", "type", "title", "content_version"]

    static let notJSON: [ProductInfoBadCase] = [
        .init(name: "empty file", json: "", field: nil, message: "not valid JSON"),
        .init(name: "truncated object", json: #"{"product_id": "#, field: nil, message: "not valid JSON"),
        .init(name: "plist", json: "<?xml version=\"1.0\"?><plist></plist>", field: nil, message: "not valid JSON"),
        .init(name: "two objects", json: "{} {}", field: nil, message: "not valid JSON"),
        .init(name: "string", json: #""com.example""#, field: nil, message: ""),
        .init(name: "number", json: "42", field: nil, message: ""),
        .init(name: "null", json: "null", field: nil, message: ""),
        .init(name: "JSON array", json: "[]", field: nil, message: "must hold a JSON object"),
        .init(name: "array of the object", json: "[\(document([:]))]", field: nil, message: "must hold a JSON object"),
    ]

    static let missing: [ProductInfoBadCase] = required.map { bad("missing \($0)", [$0: nil], field: $0, "is required") }

    static let wrongTypes: [ProductInfoBadCase] = required.flatMap { key -> [ProductInfoBadCase] in
        [
            bad("\(key) number", [key: 42], field: key, "must be a string"),
            bad("\(key) null", [key: NSNull()], field: key, "must be a string"),
            bad("\(key) object", [key: ["a": "b"]], field: key, "must be a string"),
            bad("\(key) array", [key: ["a"]], field: key, "must be a string"),
            bad("\(key) bool", [key: true], field: key, "must be a string"),
        ]
    } + ["description", "published_at", "subscription_period"].flatMap { key -> [ProductInfoBadCase] in
        [
            bad("optional \(key) number", [key: 1], field: key, "must be a string"),
            bad("optional \(key) object", [key: [String: String]()], field: key, "must be a string"),
        ]
    }

    static let blank: [ProductInfoBadCase] = required.flatMap { key -> [ProductInfoBadCase] in
        ["", " ", "\t\n "].map { bad("\(key) blank \($0.debugDescription)", [key: $0], field: key, "must not be empty") }
    }

    static let badType: [ProductInfoBadCase] = (["subscription", "NonConsumable", "non-consumable", "Consumable", " consumable"] as [String])
        .map { bad("type \($0)", ["type": $0], field: "type", "is not one of consumable, non_consumable") }

    static let badProductID: [ProductInfoBadCase] = [
        "../x", "a/b", ".hidden", "with space", "café", "a:b", "a\\b", String(repeating: "p", count: 256), "..",
    ].map { id in bad("product_id \(id.prefix(20).debugDescription)", ["product_id": id], field: "product_id", "is not a valid product ID", folder: id) }

    static let mismatchedFolder: [ProductInfoBadCase] = [
        bad("other product", ["product_id": "com.example.kiosk.magazine.2026-12"], field: "product_id", "does not match the folder name"),
        bad("other case", ["product_id": folder.uppercased()], field: "product_id", "does not match the folder name"),
        bad("prefix", ["product_id": "com.example"], field: "product_id", "does not match the folder name"),
    ]

    static let badVersion: [ProductInfoBadCase] = ["../x", "a/b", ".hidden", "1 0", " 1.0", "1.0\n", "..", "v1/", "ü", String(repeating: "1", count: 256)]
        .map { bad("content_version \($0.prefix(20).debugDescription)", ["content_version": $0], field: "content_version", "is not a valid version") }

    static let badPublishedAt: [ProductInfoBadCase] = [
        "yesterday", "2026-13-01T00:00:00Z", "2026-11-01", "2026/11/01 00:00", "", "1793491200", "2026-11-01 00:00:00",
    ].map { bad("published_at \($0.debugDescription)", ["published_at": $0], field: "published_at", "is not an RFC 3339 date-time") }

    static let periodOnNonSubscription: [ProductInfoBadCase] = (["non_consumable", "consumable"] as [String]).map {
        bad("period on \($0)", ["type": $0, "subscription_period": "P1M"], field: "subscription_period", "only subscriptions have a period")
    }

    static let badPeriod: [ProductInfoBadCase] = ["1M", "P0M", "PXM", "P", "PM", "P1", "P1X", "p1m", "P-1M", "P1.5M", "PT1M", "P1001D", "P1M ", "", "P1M1D"]
        .map { bad("period \($0.debugDescription)", ["type": "auto_renewable", "subscription_period": $0], field: "subscription_period", "is not a period such as P1M") }
}

@Suite("ProductInfo.parse")
struct ProductInfoTests {
    typealias F = ProductInfoTestFixtures

    private func check(_ testCase: ProductInfoBadCase, sourceLocation: SourceLocation = #_sourceLocation) {
        switch ProductInfo.parse(Data(testCase.json.utf8), folder: testCase.folder) {
        case .success(let info):
            Issue.record("\(testCase.name): accepted as \(info)", sourceLocation: sourceLocation)
        case .failure(let problem):
            #expect(problem.folder == testCase.folder, sourceLocation: sourceLocation)
            #expect(problem.field == testCase.field, sourceLocation: sourceLocation)
            if !testCase.message.isEmpty {
                #expect(problem.message.contains(testCase.message), "message: \(problem.message)", sourceLocation: sourceLocation)
            }
            // The rendered problem names the folder and, when there is one, the field.
            #expect(problem.description.hasPrefix(testCase.folder), sourceLocation: sourceLocation)
            if let field = testCase.field {
                #expect(problem.description.contains("Info.json: field '\(field)'"), sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: F.notJSON) func documentsThatAreNotAnObject(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.missing) func missingRequiredFields(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.wrongTypes) func fieldsOfTheWrongType(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.blank) func blankRequiredFields(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.badType) func unknownTypes(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.badProductID) func invalidProductIDs(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.mismatchedFolder) func productIDMustMatchTheFolder(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.badVersion) func invalidVersions(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.badPublishedAt) func invalidPublicationDates(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.periodOnNonSubscription) func periodOnlyOnSubscriptions(_ testCase: ProductInfoBadCase) { check(testCase) }
    @Test(arguments: F.badPeriod) func invalidPeriods(_ testCase: ProductInfoBadCase) { check(testCase) }

    @Test(arguments: ["2026-11-31T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-01T24:30:00Z", "2026-11-01T00:61:00Z"])
    func impossibleCalendarDatesAreRefused(text: String) {
        let result = ProductInfo.parse(Data(F.document(["published_at": text]).utf8), folder: F.folder)
        #expect(result.failure?.field == "published_at", "\(text) was read as \(String(describing: try? result.get().publishedAt))")
    }

    @Test(arguments: ["P+1M", "P+7D"])
    func signedPeriodCountsAreRefused(text: String) {
        #expect(SubscriptionPeriod(iso8601: text) == nil)
    }

    @Test func unknownTypeMessageListsEveryAllowedType() throws {
        let problem = try #require(ProductInfo.parse(Data(F.document(["type": "x"]).utf8), folder: F.folder).failure)
        for type in ProductType.allCases { #expect(problem.message.contains(type.rawValue)) }
    }

    @Test func problemDescriptionFormat() {
        let withField = ContentProblem(folder: "f", field: "type", message: "is bad")
        #expect(withField.description == "f/Info.json: field 'type': is bad")
        let withoutField = ContentProblem(folder: "f", field: nil, message: "Info.json is missing")
        #expect(withoutField.description == "f: Info.json is missing")
    }

    // MARK: Valid documents

    @Test func minimalDocumentParses() throws {
        let info = try ProductInfo.parse(Data(F.document([:]).utf8), folder: F.folder).get()
        #expect(info.productID == F.folder)
        #expect(info.type == .nonConsumable)
        #expect(info.title == "November")
        #expect(info.contentVersion == "1.0")
        #expect(info.description == nil)
        #expect(info.publishedAt == nil)
        #expect(info.subscriptionPeriod == nil)
    }

    @Test func fullDocumentParses() throws {
        let json = F.document([
            "type": "auto_renewable", "description": "All the issues", "published_at": "2026-11-01T00:00:00Z",
            "subscription_period": "P1M", "unknown_field": ["ignored": true],
        ])
        let info = try ProductInfo.parse(Data(json.utf8), folder: F.folder).get()
        #expect(info.type == .autoRenewable)
        #expect(info.description == "All the issues")
        #expect(info.publishedAt == VerificationFixtures.november2026)
        #expect(info.subscriptionPeriod == SubscriptionPeriod(iso8601: "P1M"))
        #expect(info.subscriptionPeriod?.count == 1)
        #expect(info.subscriptionPeriod?.unit == .month)
    }

    @Test func nullOptionalFieldsAreAbsent() throws {
        let json = F.document(["description": NSNull(), "published_at": NSNull(), "subscription_period": NSNull()])
        let info = try ProductInfo.parse(Data(json.utf8), folder: F.folder).get()
        #expect(info.description == nil)
        #expect(info.publishedAt == nil)
        #expect(info.subscriptionPeriod == nil)
    }

    @Test(arguments: ProductType.allCases)
    func everyTypeParses(type: ProductType) throws {
        let info = try ProductInfo.parse(Data(F.document(["type": type.rawValue]).utf8), folder: F.folder).get()
        #expect(info.type == type)
    }

    @Test(arguments: [
        ("2026-11-01T00:00:00Z", 0.0),
        ("2026-11-01T00:00:00.500Z", 0.5),
        ("2026-11-01T01:00:00+01:00", 0.0),
        ("2026-10-31T19:00:00-05:00", 0.0),
    ])
    func publicationDatesInRFC3339Forms(text: String, offset: Double) throws {
        let info = try ProductInfo.parse(Data(F.document(["published_at": text]).utf8), folder: F.folder).get()
        let date = try #require(info.publishedAt)
        #expect(abs(date.timeIntervalSince(VerificationFixtures.november2026) - offset) < 0.001)
    }

    @Test(arguments: [
        ("P1D", 1, SubscriptionPeriod.Unit.day), ("P7D", 7, .day), ("P2W", 2, .week), ("P1M", 1, .month),
        ("P6M", 6, .month), ("P1Y", 1, .year), ("P1000D", 1000, .day),
    ])
    func validPeriods(text: String, count: Int, unit: SubscriptionPeriod.Unit) throws {
        for type in ["auto_renewable", "non_renewing"] {
            let json = F.document(["type": type, "subscription_period": text])
            let info = try ProductInfo.parse(Data(json.utf8), folder: F.folder).get()
            let period = try #require(info.subscriptionPeriod)
            #expect(period.count == count)
            #expect(period.unit == unit)
            #expect(period.description == text)
        }
    }

    @Test func versionsAndTitlesKeepTheirText() throws {
        let json = F.document(["content_version": "2026-11-r2_b.3", "title": "  Spaced «title» ✓ "])
        let info = try ProductInfo.parse(Data(json.utf8), folder: F.folder).get()
        #expect(info.contentVersion == "2026-11-r2_b.3")
        #expect(info.title == "  Spaced «title» ✓ ")
    }

    // MARK: Period arithmetic

    @Test(arguments: [
        ("P1M", "2026-01-31T12:00:00Z", "2026-02-28T12:00:00Z"),
        ("P1M", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"),
        ("P1Y", "2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"),
        ("P7D", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"),
        ("P2W", "2026-11-01T00:00:00Z", "2026-11-15T00:00:00Z"),
    ])
    func periodEnds(period: String, start: String, end: String) throws {
        let parsed = try #require(SubscriptionPeriod(iso8601: period))
        let from = try #require(RFC3339.date(from: start))
        #expect(parsed.end(from: from) == RFC3339.date(from: end))
    }
}

extension Result {
    /// The failure, if this is one (test helper).
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
