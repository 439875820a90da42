/// A name the instances sharing a database signal changes on (PostgreSQL's `LISTEN`/`NOTIFY`): see
/// ``KioskDatabase/follow(_:every:_:)``.
public struct DatabaseChannel: Sendable, Hashable {
    /// The channel's name, a plain lowercase identifier.
    public let name: String

    /// Revocations recorded in `ledger_revocation_events`.
    public static let revocations = DatabaseChannel(name: "kiosk_revocations")
}
