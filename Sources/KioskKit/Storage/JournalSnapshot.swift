import Foundation
import KioskCore

/// The journal's content: the queue, each download's state, and the installed content.
struct JournalSnapshot: Sendable, Hashable, Codable {
    /// 1: the whole journal in `journal.json`, rewritten at every change. 2: a snapshot plus `journal.log`.
    static let currentFormat = 2

    var format: Int = JournalSnapshot.currentFormat
    var nextSequence: UInt64 = 0
    var downloads: [DownloadRecord] = []
    var installed: [InstalledContent] = []
    /// The generation of the log that continues this snapshot (format 2); a log of another generation is stale.
    var generation: UInt64? = nil

    /// Applies one log entry (O(downloads) to find the record, O(1) for the change itself but a grant's).
    mutating func apply(_ entry: JournalEntry) {
        switch entry {
        case .created(let record):
            downloads.removeAll { $0.id == record.id }
            downloads.append(record)
            nextSequence = max(nextSequence, record.sequence + 1)
        case .state(let id, let state, let attempt):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].state = state
            downloads[index].attempt = attempt
        case .keepsPrevious(let id):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].keepsPrevious = true
        case .proof(let id, let receipt, let signedTransaction, let priority):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].receipt = receipt
            downloads[index].signedTransaction = signedTransaction
            downloads[index].priority = priority
        case .changed(let id, let change):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].apply(change)
        case .forgotten(let id):
            downloads.removeAll { $0.id == id }
        case .installed(let content):
            installed.removeAll { $0.productID == content.productID }
            installed.append(content)
            installed.sort { $0.productID < $1.productID }
        case .removed(let productID):
            installed.removeAll { $0.productID == productID }
        }
    }
}
