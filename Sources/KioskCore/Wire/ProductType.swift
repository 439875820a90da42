/// The store's kind of in-app purchase, as `Info.json` and the catalog spell it.
public enum ProductType: String, Codable, Sendable, CaseIterable {
    /// Bought, used up, bought again (coins, a one-off level pack).
    case consumable
    /// Bought once, owned for ever (a magazine issue, a book).
    case nonConsumable = "non_consumable"
    /// A subscription the store renews until the user cancels it.
    case autoRenewable = "auto_renewable"
    /// A subscription for a fixed period that the app itself tracks.
    case nonRenewing = "non_renewing"
}
