import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// The journal's one-pass JSON encoder writes what Foundation's `JSONEncoder` (the journal's encoder until #16's
/// memory work) writes, so that journals of either kind load with either release.
@Suite("Journal encoder")
struct JournalEncoderTests {
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    static let grant = Grant(
        productID: "com.example.a", contentVersion: "1.0", totalLength: 30, expiresAt: date, token: "t/\"k\"",
        files: [
            GrantFile(
                path: "Contents/a b/é.bin", length: 10, sha256: String(repeating: "a", count: 64),
                url: "/v1/content/com.example.a/1.0/Contents/a%20b/%C3%A9.bin",
                chunks: [GrantChunk(offset: 0, length: 10, sha256: String(repeating: "b", count: 64))]),
            GrantFile(path: "Contents/1.bin", length: 20, sha256: String(repeating: "c", count: 64), url: "/v1/1"),
        ],
        chunking: .standard)

    static var record: DownloadRecord {
        DownloadRecord(
            id: DownloadID(), productID: "com.example.a", receipt: "cmVj\nZWlwdA==", signedTransaction: nil,
            priority: .high, sequence: 7, state: .waitingToRetry(until: date, attempt: 3), attempt: 3, grant: grant,
            grantReceivedAt: date, entityTags: ["Contents/1.bin": "\"e\\1\""], verifiedPaths: ["Contents/1.bin"],
            integrityFailures: ["Contents/a b/é.bin": 1], createdAt: date)
    }

    static var installed: InstalledContent {
        InstalledContent(
            productID: "com.example.a", version: "1.0",
            directory: URL(fileURLWithPath: "/tmp/cache/Content/com.example.a/1.0", isDirectory: true),
            files: [InstalledFile(path: "Contents/\u{1}\t.bin", length: 5, sha256: "")], installedAt: date)
    }

    static var entries: [JournalEntry] {
        let id = DownloadID()
        return [
            .created(record),
            .state(id: id, .active, attempt: 1),
            .state(id: id, .paused(.insufficientStorage), attempt: 0),
            .state(
                id: id, .failed(.server(status: 503, code: "busy", message: "later", retryAfter: 1.5)), attempt: 2),
            .state(id: id, .failed(.insufficientStorage(needed: 10, available: nil)), attempt: 2),
            .proof(id: id, receipt: nil, signedTransaction: "a.b.c", priority: .low),
            .changed(id: id, .grant(grant, receivedAt: date)),
            .changed(id: id, .grant(nil, receivedAt: nil)),
            .changed(id: id, .verified(path: "Contents/1.bin")),
            .changed(id: id, .entityTag(path: "Contents/1.bin", tag: nil)),
            .changed(id: id, .integrityFailures(path: "Contents/1.bin", count: 2)),
            .changed(id: id, .discarded(path: "Contents/1.bin")),
            .forgotten(id: id),
            .installed(installed),
            .removed(productID: "com.example.a"),
        ]
    }

    /// The JSON value of `data` (keys sorted), to compare two encodings whatever their key order.
    func canonical(_ data: Data) throws -> Data {
        try JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            options: [.sortedKeys, .fragmentsAllowed])
    }

    @Test func everyEntryEncodesAsJSONEncoderEncodesItAndReadsBack() throws {
        for entry in Self.entries {
            let streamed = try JournalEncoder.encode(entry)
            #expect(!streamed.contains(0x0A), "\(entry)")  // one entry, one log line
            #expect(try canonical(streamed) == canonical(KioskJSON.makeEncoder().encode(entry)), "\(entry)")
            #expect(try KioskJSON.decode(JournalEntry.self, from: streamed) == entry)
        }
    }

    @Test func aSnapshotEncodesAsJSONEncoderEncodesItAndReadsBack() throws {
        let snapshot = JournalSnapshot(
            nextSequence: 8, downloads: [Self.record], installed: [Self.installed], generation: 3)
        let streamed = try JournalEncoder.encode(snapshot)
        #expect(try canonical(streamed) == canonical(KioskJSON.makeEncoder().encode(snapshot)))
        #expect(try KioskJSON.decode(JournalSnapshot.self, from: streamed) == snapshot)
        #expect(try KioskJSON.decode(JournalSnapshot.self, from: JournalEncoder.encode(JournalSnapshot())) == .init())
    }

    @Test(arguments: [1, 64, 4096])
    func aValueEncodedInPiecesIsTheWholeEncodingAndNoPieceOutgrowsItsSize(pieceSize: Int) throws {
        let snapshot = JournalSnapshot(downloads: [Self.record], installed: [Self.installed])
        var pieces: [Data] = []
        try JournalEncoder.encode(snapshot, pieceSize: pieceSize) { pieces.append(Data($0)) }
        #expect(pieces.reduce(Data(), +) == (try JournalEncoder.encode(snapshot)))
        // A piece ends at the first value boundary past `pieceSize`: by at most the longest value (the receipt's
        // 64-character hashes here) and its key.
        #expect(pieces.allSatisfy { $0.count < pieceSize + 128 })
        if pieceSize < 1024 { #expect(pieces.count > 1) }
    }

    @Test func anErrorOfTheOutputEndsTheEncodingAndIsThrown() {
        struct Full: Error {}
        var calls = 0
        #expect(throws: Full.self) {
            try JournalEncoder.encode(JournalSnapshot(downloads: [Self.record]), pieceSize: 16) { _ in
                calls += 1
                throw Full()
            }
        }
        #expect(calls == 1)  // nothing is handed on after the first failure
    }

    @Test func numbersThatJSONCannotCarryAreRefused() {
        #expect(throws: EncodingError.self) { try JournalEncoder.encode([Double.nan]) }
        #expect(try! canonical(JournalEncoder.encode([1.0, 0.5, -2])) == canonical(Data("[1,0.5,-2]".utf8)))
    }

    /// A journal as the release before the one-pass encoder wrote it (Foundation's `JSONEncoder`, sorted keys): a
    /// snapshot and a log of the same generation still load.
    @Test func aFormat2JournalWrittenByJSONEncoderLoads() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-enc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let journal = Journal(layout: CacheLayout(root: root))
        let encoder = KioskJSON.makeEncoder()
        var record = Self.record
        record.grant = nil
        let snapshot = JournalSnapshot(nextSequence: 8, downloads: [record], installed: [], generation: 5)
        try encoder.encode(snapshot).write(to: journal.url)
        var log = try encoder.encode(Journal.LogHeader(generation: 5)) + Data([0x0A])
        let entries: [JournalEntry] = [
            .changed(id: record.id, .grant(Self.grant, receivedAt: Self.date)),
            .changed(id: record.id, .verified(path: "Contents/a b/é.bin")),
            .installed(Self.installed),
        ]
        for entry in entries { log += try encoder.encode(entry) + Data([0x0A]) }
        try log.write(to: journal.logURL)

        let (loaded, recovery) = journal.load()
        #expect(recovery == .loaded)
        var expected = snapshot
        for entry in entries { expected.apply(entry) }
        // Installed content in the caches is read back under the journal's root.
        #expect(loaded == expected.resolved(in: journal.layout))
        #expect(loaded.downloads.first?.verifiedPaths == ["Contents/1.bin", "Contents/a b/é.bin"])
    }
}
