import Foundation
import KioskCore

/// One change of the journal, appended to `journal.log` as one line of JSON.
///
/// JSON lines rather than a binary format: a torn append (a crash in the middle of a write) leaves a last line
/// without its newline or one that does not decode, which recovery recognises and drops; the entries reuse the
/// `Codable` records of the snapshot, so the two cannot drift apart; and a person can read the log.
enum JournalEntry: Sendable, Hashable, Codable {
    /// A new download.
    case created(DownloadRecord)
    /// A download's state and attempt count.
    case state(id: DownloadID, DownloadState, attempt: Int)
    /// A download's proof of purchase and priority (enqueued again).
    case proof(id: DownloadID, receipt: String?, signedTransaction: String?, priority: DownloadPriority)
    /// A change of a download's grant or files.
    case changed(id: DownloadID, DownloadChange)
    /// A download the client no longer keeps.
    case forgotten(id: DownloadID)
    /// A product version installed (or moved), replacing the product's previous one.
    case installed(InstalledContent)
    /// A product's installed content removed.
    case removed(productID: String)
    /// The app asked to keep the installed version when the download installs another one.
    case keepsPrevious(id: DownloadID)

    /// Whether the entry only says how far a chunk in flight has come (``ChunkPrefix``): the journal writes these
    /// sooner and without an fsync of their own.
    var isChunkProgress: Bool {
        if case .changed(_, .chunkProgress) = self { return true }
        return false
    }
}
