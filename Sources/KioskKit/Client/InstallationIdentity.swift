import Foundation

/// Where a ``KioskClient``'s installation ID comes from: the ID it sends with every grant request, by which the
/// server counts the installations a purchase serves (`installation_limit` beyond its cap).
///
/// What survives what:
///
/// | | a purge of Caches | a moved app container | a reinstall |
/// |---|---|---|---|
/// | ``stored(in:)`` in Application Support (the default) | kept | kept | new ID |
/// | ``app(_:)`` with an ID the app keeps in the Keychain | kept | kept | kept |
///
/// A new ID takes a new place of the purchase; ``KioskClient/removeInstallation(_:productID:proof:)`` frees an old
/// one.
public enum InstallationIdentity: Sendable, Hashable {
    /// The app's own ID: 1 to 128 letters, digits, `.`, `_` or `-` (a UUID string, for example), the same at
    /// every launch. Keep it in the Keychain (<doc:Restore#Installations>) so that a reinstall is the same
    /// installation.
    case app(String)
    /// An ID KioskKit creates once (a random UUID) and keeps in the file `installation-id` of `directory`, out of
    /// the cache root, so that a purge of Caches or a new cache root keeps the installation. An ID that an older
    /// KioskKit kept in the cache root is taken over when `directory` has none yet.
    case stored(in: URL)

    /// The default: ``stored(in:)`` in the app's Application Support folder (`Kiosk/`), which the system does not
    /// purge and which moves with the app's container; on Linux `$XDG_DATA_HOME/kiosk` or `~/.local/share/kiosk`.
    public static var standard: InstallationIdentity { .stored(in: defaultDirectory) }

    /// `Kiosk` in Application Support; on Linux, `kiosk` in `$XDG_DATA_HOME` or `~/.local/share`.
    public static var defaultDirectory: URL {
        #if os(Linux)
            let environment = ProcessInfo.processInfo.environment
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("kiosk", isDirectory: true)
            }
            return FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".local/share/kiosk", isDirectory: true)
        #else
            let support =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            return support.appendingPathComponent("Kiosk", isDirectory: true)
        #endif
    }

    /// The name of the file that keeps a stored ID, in its directory and (from older KioskKit) in a cache root.
    static let fileName = "installation-id"

    /// The installation ID for a client on `layout`.
    ///
    /// - Throws: ``KioskError/invalidArgument(_:)`` for an ``app(_:)`` ID that is not 1 to 128 letters, digits, `.`,
    ///   `_` or `-`. A stored ID that cannot be written is used for this session only (the next launch makes
    ///   another), as a read-only folder leaves no other choice.
    func resolve(cacheLayout layout: CacheLayout, fileSystem: any KioskFileSystem) throws(KioskError) -> String {
        switch self {
        case .app(let id):
            guard Self.isValid(id) else {
                throw .invalidArgument(
                    "The installation ID '\(id.prefix(140))' is not 1 to 128 letters, digits, '.', '_' or '-'.")
            }
            return id
        case .stored(let directory):
            let file = directory.appendingPathComponent(Self.fileName, isDirectory: false)
            if let id = Self.read(file, fileSystem: fileSystem) { return id }
            let id = Self.read(layout.installationIDFile, fileSystem: fileSystem) ?? UUID().uuidString.lowercased()
            if (try? CacheFiles.createRoot(directory, fileSystem: fileSystem)) != nil {
                try? CacheFiles.writeAtomically(Data(id.utf8), to: file, fileSystem: fileSystem)
            }
            return id
        }
    }

    /// The ID kept in `file`, when it holds a valid one.
    private static func read(_ file: URL, fileSystem: any KioskFileSystem) -> String? {
        guard let data = fileSystem.contents(of: file),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            isValid(text)
        else { return nil }
        return text
    }

    /// Whether `id` is what the server takes: 1 to 128 letters, digits, `.`, `_` or `-`.
    static func isValid(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
