import KioskCore

/// The byte-keeping rule applied when a grant is renewed (token expired, version gone, relaunch).
///
/// Identity is product + version, never URL: the same version keeps every byte; a new version keeps the files
/// whose path *and* SHA-256 (and length) are unchanged, and starts the others over.
enum GrantRenewal {
    /// What happens to one file of the old grant.
    enum Disposition: Sendable, Hashable {
        /// Keep its bytes (verified or partial) and its `If-Range` validator.
        case keep
        /// Delete its bytes: the new version has no such file or a different one.
        case discard
    }

    /// Decides, for every path of `old`, whether its bytes stay valid under `new`.
    static func plan(old: Grant, new: Grant) -> [String: Disposition] {
        guard old.productID == new.productID else { return Dictionary(old.files.map { ($0.path, .discard) }, uniquingKeysWith: { a, _ in a }) }
        let newFiles = Dictionary(new.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var plan: [String: Disposition] = [:]
        for file in old.files {
            // Same version normally means the same manifest; comparing hashes also covers a file replaced on the
            // server without a version bump.
            if let replacement = newFiles[file.path],
               replacement.sha256.lowercased() == file.sha256.lowercased(), replacement.length == file.length {
                plan[file.path] = .keep
            } else {
                plan[file.path] = .discard
            }
        }
        return plan
    }
}
