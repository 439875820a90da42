import Foundation
import KioskCore

/// The parsed `Info.json` of one product folder: the counterpart of Apple's `ContentInfo.plist`.
public struct ProductInfo: Sendable, Hashable {
    /// The store's product identifier; must equal the folder's name.
    public var productID: String
    /// The kind of purchase.
    public var type: ProductType
    /// The title shown in the catalog.
    public var title: String
    /// The current content version.
    public var contentVersion: String
    /// An optional longer description.
    public var description: String?
    /// When the product was published (used to order the catalog).
    public var publishedAt: Date?
    /// For subscriptions: how long one paid period lasts in the sandbox store (ISO 8601, default `P1M`).
    public var subscriptionPeriod: SubscriptionPeriod?
    /// For subscriptions: the products (issues) a paid period unlocks.
    public var unlocks: SubscriptionUnlocks? = nil
}

/// Which products a subscription unlocks (`"unlocks"` in its `Info.json`): those whose `published_at` falls inside
/// one of its paid periods, among the products named in `product_ids` or starting with `product_id_prefix`. An issue
/// obtained this way stays available after the subscription ends.
///
/// ```json
/// "unlocks": { "product_id_prefix": "com.example.kiosk.magazine." }
/// ```
public struct SubscriptionUnlocks: Sendable, Hashable {
    /// Products whose ID starts with this are unlocked.
    public var productIDPrefix: String?
    /// Products unlocked by name.
    public var productIDs: [String]

    /// Creates a rule.
    public init(productIDPrefix: String? = nil, productIDs: [String] = []) {
        self.productIDPrefix = productIDPrefix
        self.productIDs = productIDs
    }

    /// Whether the rule names `productID` (its `published_at` still decides).
    public func covers(_ productID: String) -> Bool {
        if productIDs.contains(productID) { return true }
        if let productIDPrefix { return productID.hasPrefix(productIDPrefix) }
        return false
    }

    /// Parses the `unlocks` object of the folder `folder`'s `Info.json`.
    static func parse(_ value: Any, folder: String) -> Result<SubscriptionUnlocks, ContentProblem> {
        func failure(_ message: String) -> Result<SubscriptionUnlocks, ContentProblem> {
            .failure(ContentProblem(folder: folder, field: "unlocks", message: message))
        }
        guard let fields = value as? [String: Any] else {
            return failure("must be an object such as {\"product_id_prefix\": \"com.example.magazine.\"}")
        }
        let known: Set<String> = ["product_id_prefix", "product_ids"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            return failure("has the unknown key '\(unknown)' (allowed: product_id_prefix, product_ids)")
        }
        var rule = SubscriptionUnlocks()
        if let prefix = fields["product_id_prefix"] {
            guard let text = prefix as? String, !text.isEmpty,
                Identifiers.isValidProductID(text.hasSuffix(".") ? String(text.dropLast()) : text)
            else {
                return failure("'product_id_prefix' must be the start of a product ID, such as com.example.magazine.")
            }
            rule.productIDPrefix = text
        }
        if let list = fields["product_ids"] {
            guard let ids = list as? [String] else { return failure("'product_ids' must be an array of product IDs") }
            if let bad = ids.first(where: { !Identifiers.isValidProductID($0) }) {
                return failure("'\(bad.prefix(64))' in 'product_ids' is not a valid product ID")
            }
            rule.productIDs = ids
        }
        guard rule.productIDPrefix != nil || !rule.productIDs.isEmpty else {
            return failure("must name products with 'product_id_prefix' or 'product_ids'")
        }
        return .success(rule)
    }
}

/// A problem with one product folder, reported at load time; the folder is skipped.
public struct ContentProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The product folder's name.
    public var folder: String
    /// The `Info.json` field at fault, if one is.
    public var field: String?
    /// What is wrong, as a sentence.
    public var message: String

    /// Creates a problem of the folder `folder`, with the field at fault if one is.
    package init(folder: String, field: String? = nil, message: String) {
        self.folder = folder
        self.field = field
        self.message = message
    }

    /// Renders `content/<folder>/Info.json: field 'x': message`.
    public var description: String {
        if let field { return "\(folder)/Info.json: field '\(field)': \(message)" }
        return "\(folder): \(message)"
    }
}

extension Character {
    /// `0` to `9` only (`Int("+1")` would accept a sign).
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// A subscription period such as `P1M` or `P7D` (ISO 8601 durations of days, weeks, months or years).
public struct SubscriptionPeriod: Sendable, Hashable, CustomStringConvertible {
    /// The calendar unit.
    public enum Unit: Character, Sendable { case day = "D", week = "W", month = "M", year = "Y" }
    /// How many units.
    public var count: Int
    /// The unit.
    public var unit: Unit

    /// Parses `P<n><D|W|M|Y>`.
    public init?(iso8601 text: String) {
        let digits = text.dropFirst().dropLast()
        guard text.count >= 3, text.first == "P", let unit = text.last.flatMap(Unit.init(rawValue:)),
            digits.allSatisfy(\.isASCIIDigit), let count = Int(digits), count > 0, count <= 1000
        else { return nil }
        self.count = count
        self.unit = unit
    }

    /// `P1M`-style text.
    public var description: String { "P\(count)\(unit.rawValue)" }

    /// The end of a period starting at `start`, in UTC calendar arithmetic.
    public func end(from start: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        return calendar.date(byAdding: component, value: count, to: start) ?? start
    }
}

extension ProductInfo {
    /// Parses and validates an `Info.json` document found in the folder `folder`.
    ///
    /// Every problem names the folder and the field, so an operator can fix it at once.
    public static func parse(_ data: Data, folder: String) -> Result<ProductInfo, ContentProblem> {
        func problem(_ field: String?, _ message: String) -> Result<ProductInfo, ContentProblem> {
            .failure(ContentProblem(folder: folder, field: field, message: message))
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            return problem(nil, "Info.json is not valid JSON (\(error.localizedDescription))")
        }
        guard let fields = object as? [String: Any] else {
            return problem(nil, "Info.json must hold a JSON object")
        }
        func requiredString(_ key: String) -> Result<String, ContentProblem> {
            guard let value = fields[key] else {
                return .failure(ContentProblem(folder: folder, field: key, message: "is required"))
            }
            guard let text = value as? String else {
                return .failure(ContentProblem(folder: folder, field: key, message: "must be a string"))
            }
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                return .failure(ContentProblem(folder: folder, field: key, message: "must not be empty"))
            }
            return .success(text)
        }
        func optionalString(_ key: String) -> Result<String?, ContentProblem> {
            guard let value = fields[key], !(value is NSNull) else { return .success(nil) }
            guard let text = value as? String else {
                return .failure(ContentProblem(folder: folder, field: key, message: "must be a string"))
            }
            return .success(text)
        }
        do {
            let productID = try requiredString("product_id").get()
            guard Identifiers.isValidProductID(productID) else {
                return problem(
                    "product_id", "'\(productID)' is not a valid product ID (letters, digits, '.', '_', '-')")
            }
            guard productID == folder else {
                return problem("product_id", "'\(productID)' does not match the folder name '\(folder)'")
            }
            let typeText = try requiredString("type").get()
            guard let type = ProductType(rawValue: typeText) else {
                let allowed = ProductType.allCases.map(\.rawValue).joined(separator: ", ")
                return problem("type", "'\(typeText)' is not one of \(allowed)")
            }
            let title = try requiredString("title").get()
            let version = try requiredString("content_version").get()
            guard Identifiers.isValidContentVersion(version) else {
                return problem(
                    "content_version", "'\(version)' is not a valid version (letters, digits, '.', '_', '-')")
            }
            let description = try optionalString("description").get()
            var publishedAt: Date?
            if let text = try optionalString("published_at").get() {
                guard let date = RFC3339.date(from: text) else {
                    return problem(
                        "published_at", "'\(text)' is not an RFC 3339 date-time such as 2026-11-01T00:00:00Z")
                }
                publishedAt = date
            }
            var period: SubscriptionPeriod?
            if let text = try optionalString("subscription_period").get() {
                guard type == .autoRenewable || type == .nonRenewing else {
                    return problem("subscription_period", "only subscriptions have a period")
                }
                guard let parsed = SubscriptionPeriod(iso8601: text) else {
                    return problem("subscription_period", "'\(text)' is not a period such as P1M, P7D or P1Y")
                }
                period = parsed
            }
            var unlocks: SubscriptionUnlocks?
            if let value = fields["unlocks"], !(value is NSNull) {
                guard type == .autoRenewable || type == .nonRenewing else {
                    return problem("unlocks", "only subscriptions unlock other products")
                }
                let rule = try SubscriptionUnlocks.parse(value, folder: folder).get()
                guard !rule.covers(productID) else { return problem("unlocks", "a subscription cannot unlock itself") }
                unlocks = rule
            }
            return .success(
                ProductInfo(
                    productID: productID, type: type, title: title, contentVersion: version,
                    description: description, publishedAt: publishedAt, subscriptionPeriod: period, unlocks: unlocks))
        } catch {
            return .failure(error)
        }
    }
}
