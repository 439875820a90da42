import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #9: files fetched by chunks — which chunk lists a grant may carry, which chunks are fetched, how verified chunks
/// are kept and counted, and how they survive the journal.
@Suite("Chunked downloads")
struct ChunkedDownloadTests {
    static let product = "com.example.a"
    /// The smallest chunking a grant may announce (``GrantLimits/chunkingBounds``), with a 256 KiB maximum.
    static let parameters = ChunkingParameters(minimum: 16 << 10, average: 64 << 10, maximum: 256 << 10)

    /// Chunk lengths in units of 256 bytes, so that a handful of chunks fits the bounds on how many cuts a file of
    /// their length allows (one per `minimum`, 16 KiB).
    static func scaled(_ lengths: [Int64]) -> [Int64] { lengths.map { $0 << 8 } }

    static func hex(_ byte: UInt8) -> String { String(repeating: String(format: "%02x", byte), count: 32) }

    /// A file of `lengths.reduce(+)` bytes cut into chunks of `lengths`.
    static func file(_ lengths: [Int64], path: String = "Contents/a.bin") -> GrantFile {
        var offset: Int64 = 0
        let chunks = lengths.enumerated().map { index, length in
            defer { offset += length }
            return GrantChunk(offset: offset, length: length, sha256: hex(UInt8(index)))
        }
        return GrantFile(
            path: path, length: lengths.reduce(0, +), sha256: hex(0xee), url: "/v1/content/\(product)/1.0/\(path)",
            chunks: chunks)
    }

    static func grant(_ files: [GrantFile], chunking: ChunkingParameters? = parameters) -> Grant {
        Grant(
            productID: product, contentVersion: "1.0", totalLength: files.reduce(0) { $0 + $1.length },
            expiresAt: Date(timeIntervalSince1970: 4_070_908_800), token: "t", files: files, chunking: chunking)
    }

    /// The error validating `grant` throws, `nil` when it passes.
    static func refusal(_ grant: Grant, limits: GrantLimits = GrantLimits()) -> KioskError? {
        do {
            try GrantValidation.validate(grant, productID: product, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Validation

    @Test func contiguousChunksWithinTheLimitsAreAccepted() {
        let file = Self.file(Self.scaled([100, 1024, 64, 7]))
        #expect(Self.refusal(Self.grant([file])) == nil)
        #expect(GrantValidation.chunks(of: file, in: Self.grant([file])) == file.chunks)
    }

    /// Each way a chunk list can be wrong, as the server would send it.
    @Test(arguments: [
        "gap", "overlap", "notFromZero", "shortOfTheEnd", "pastTheEnd", "empty", "zeroLength", "overMaximum",
        "shortHash", "notHex", "tooMany",
    ])
    func aBadChunkListIsAnInvalidResponse(_ flaw: String) throws {
        var file = Self.file(Self.scaled([100, 200, 300]))
        var chunks = try #require(file.chunks)
        switch flaw {
        case "gap": chunks[1].offset += 1
        case "overlap": chunks[2].offset -= 1
        case "notFromZero": chunks[0].offset = 1
        case "shortOfTheEnd": chunks.removeLast()
        case "pastTheEnd": chunks[2].length += 1
        case "empty": chunks = []
        case "zeroLength": chunks.insert(GrantChunk(offset: 0, length: 0, sha256: Self.hex(9)), at: 0)
        case "overMaximum":
            file = Self.file(Self.scaled([1025]))
            chunks = try #require(file.chunks)
        case "shortHash": chunks[1].sha256.removeLast()
        case "notHex": chunks[1].sha256 = String(repeating: "g", count: 64)
        case "tooMany":
            // 600 1-byte chunks: more than the file's length / minimum (16 KiB) + 1 cuts allow.
            chunks = (0..<600).map { GrantChunk(offset: Int64($0), length: 1, sha256: Self.hex(1)) }
        default: Issue.record("unknown flaw \(flaw)")
        }
        file.chunks = chunks
        let error = try #require(Self.refusal(Self.grant([file])))
        guard case .invalidResponse(let message) = error else {
            Issue.record("expected invalidResponse, got \(error)")
            return
        }
        #expect(message.contains("Contents/a.bin"))
    }

    @Test func theGrantsChunkCountIsCapped() {
        let files = (0..<3).map { Self.file(Self.scaled([100, 100]), path: "Contents/\($0).bin") }
        #expect(Self.refusal(Self.grant(files), limits: GrantLimits(maximumChunkCount: 6)) == nil)
        let error = Self.refusal(Self.grant(files), limits: GrantLimits(maximumChunkCount: 5))
        guard case .invalidResponse? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
    }

    /// An older or newer server: chunks cut by an algorithm this client does not know, or without parameters, are
    /// ignored (even malformed ones), and the file is verified whole.
    @Test(arguments: ["unknownAlgorithm", "noChunking"])
    func chunksUnderUnknownChunkingAreIgnored(_ case_: String) throws {
        var file = Self.file([100, 200])
        file.chunks?[1].offset = 7  // would be refused under a supported chunking
        var chunking: ChunkingParameters? = nil
        if case_ == "unknownAlgorithm" {
            chunking = ChunkingParameters(algorithm: "rabin-v9", minimum: 64, average: 256, maximum: 1024)
        }
        let grant = Self.grant([file], chunking: chunking)
        #expect(Self.refusal(grant) == nil)
        #expect(GrantValidation.chunks(of: file, in: grant) == nil)
    }

    @Test func aFileWithoutChunksIsFetchedWhole() {
        let file = GrantFile(
            path: "Contents/a.bin", length: 10, sha256: Self.hex(1),
            url: "/v1/content/\(Self.product)/1.0/Contents/a.bin")
        let grant = Self.grant([file])
        #expect(Self.refusal(grant) == nil)
        #expect(GrantValidation.chunks(of: file, in: grant) == nil)
    }

    // MARK: - Planning

    @Test func onlyChunksNotVerifiedAreFetchedInFileOrder() {
        #expect(ChunkPlan.pending(chunkCount: 6, verified: [0, 2, 3]) == [1, 4, 5])
        #expect(ChunkPlan.pending(chunkCount: 3, verified: [0, 1, 2]).isEmpty)
        #expect(ChunkPlan.pending(chunkCount: 3, verified: []) == [0, 1, 2])
    }

    @Test(arguments: [
        // (pending, per file, budget) -> lanes
        (10, 4, 8, 4), (10, 4, 2, 2), (3, 4, 8, 3), (0, 4, 8, 0), (10, 0, 8, 1), (10, 16, 8, 8), (1, 4, 8, 1),
    ])
    func requestsInFlightPerFileStayWithinBothLimits(_ values: (Int, Int, Int, Int)) {
        #expect(ChunkPlan.lanes(pending: values.0, perFile: values.1, budget: values.2) == values.3)
    }

    @Test func chunksNextToEachOtherGoInOneRunWithinItsLength() {
        let chunks = (0..<8).map { GrantChunk(offset: Int64($0) * 100, length: 100, sha256: "") }
        // Runs break at a gap and at the length; a chunk longer than the length is a run of its own.
        #expect(
            ChunkPlan.runs(pending: [0, 1, 2, 4, 5, 7], chunks: chunks, maximumLength: 250) == [
                [0, 1], [2], [4, 5], [7],
            ])
        #expect(ChunkPlan.runs(pending: Array(0..<8), chunks: chunks, maximumLength: 800) == [Array(0..<8)])
        #expect(ChunkPlan.runs(pending: [3], chunks: chunks, maximumLength: 50) == [[3]])
        #expect(ChunkPlan.runs(pending: [], chunks: chunks, maximumLength: 800).isEmpty)
        // A chunk cut short earlier (it goes on from its next byte) starts a run.
        #expect(
            ChunkPlan.runs(pending: Array(0..<6), chunks: chunks, maximumLength: 800, startingRunsAt: [2, 5]) == [
                [0, 1], [2, 3, 4], [5],
            ])
        // The length shares the pending bytes between the connections, within 8 MiB.
        #expect(ChunkPlan.runLength(pendingBytes: 1 << 30, lanes: 4) == ChunkPlan.maximumRunLength)
        #expect(ChunkPlan.runLength(pendingBytes: 4 << 20, lanes: 4) == 1 << 20)
        #expect(ChunkPlan.runLength(pendingBytes: 0, lanes: 4) == 1)
    }

    @Test func aChunkIsFetchedInSegmentsOfBoundedSize() {
        let size = FileFetcher.segmentSize
        #expect(FileFetcher.segments(from: 0, to: size) == [0...(size - 1)])
        #expect(
            FileFetcher.segments(from: 10, to: 10 + 2 * size + 1) == [
                10...(9 + size), (10 + size)...(9 + 2 * size), (10 + 2 * size)...(10 + 2 * size),
            ])
        #expect(FileFetcher.segments(from: 5, to: 5).isEmpty)
    }

    // MARK: - Bookkeeping

    func work(_ grant: Grant) -> DownloadWork {
        var work = DownloadWork(
            productID: Self.product, proof: .receipt("r"), grant: nil, grantReceivedAt: nil, entityTags: [:],
            verifiedPaths: [], integrityFailures: [:])
        work.record(.grant(grant, receivedAt: nil))
        return work
    }

    @Test func verifiedChunksCountOnceAndTheFileCompletesTheirBytes() {
        let file = Self.file([100, 200, 300])
        var work = work(Self.grant([file]))
        work.record(.chunkVerified(path: file.path, index: 1), file: file)
        work.record(.chunkVerified(path: file.path, index: 1), file: file)  // twice: counted once
        work.record(.chunkVerified(path: file.path, index: 2), file: file)
        #expect(work.verifiedBytes == 500 && work.verifiedLength == 500)
        #expect(work.verifiedChunks == [file.path: [1, 2]])
        work.record(.verified(path: file.path), file: file)
        #expect(work.verifiedBytes == 600 && work.verifiedLength == 600)
        #expect(work.verifiedChunks.isEmpty)  // the file's record replaces its chunks'
        work.record(.discarded(path: file.path))
        #expect(work.verifiedBytes == 0)
    }

    @Test func discardingAFileForgetsItsChunks() {
        let file = Self.file([100, 200, 300])
        var work = work(Self.grant([file]))
        work.record(.chunkVerified(path: file.path, index: 0), file: file)
        work.record(.discarded(path: file.path))
        #expect(work.verifiedBytes == 0 && work.verifiedChunks.isEmpty)
    }

    /// A renewed grant keeps a file's verified chunks only when they still name the same bytes.
    @Test(arguments: ["same", "otherHash", "otherCuts", "otherChunking", "gone"])
    func aNewGrantKeepsChunksOnlyUnderTheSameCuts(_ change: String) {
        let file = Self.file([100, 200, 300])
        var record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: "r", priority: .normal, sequence: 0, state: .active,
            attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [], integrityFailures: [:], createdAt: Date())
        record.apply(.grant(Self.grant([file]), receivedAt: nil))
        record.apply(.chunkVerified(path: file.path, index: 0))
        var newFile = file
        var chunking = Self.parameters
        switch change {
        case "otherHash": newFile.sha256 = Self.hex(0xdd)
        case "otherCuts": newFile = Self.file([150, 150, 300])
        case "otherChunking": chunking.average = 128 << 10
        case "gone": newFile.path = "Contents/b.bin"
        default: break
        }
        record.apply(.grant(Self.grant([newFile], chunking: chunking), receivedAt: nil))
        #expect(record.verifiedChunks == (change == "same" ? [file.path: [0]] : [:]))
    }

    // MARK: - Journal

    @Test func verifiedChunksSurviveTheJournal() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-chunks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let layout = CacheLayout(root: root)
        let journal = Journal(layout: layout)
        try journal.replace(with: JournalSnapshot())
        let file = Self.file([100, 200, 300])
        let record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: "r", priority: .normal, sequence: 0, state: .active,
            attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [], integrityFailures: [:],
            createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        journal.append([.created(record)])
        journal.append([.changed(id: record.id, .grant(Self.grant([file]), receivedAt: nil))])
        journal.append([.changed(id: record.id, .chunkVerified(path: file.path, index: 2))])
        journal.append([.changed(id: record.id, .chunkVerified(path: file.path, index: 0))])
        await journal.waitUntilDurable()
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads.first?.verifiedChunks == [file.path: [0, 2]])
        #expect(loaded.downloads.first?.verifiedLength == 400)
    }

    /// The chunks of one file share one ``UnsyncedFile``: a group commit fsyncs it once for all of them, and does
    /// not close it (the other chunks are still being written); it is closed when the last holder lets it go.
    @Test func aSharedPartFileIsSynchronizedOncePerGroupAndStaysOpen() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-chunks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let writer = CountingWriter(
            try POSIXPartFileWriter(url: root.appendingPathComponent("a.part"), truncatingTo: 0))
        let shared = UnsyncedFile(shared: writer)
        let journal = Journal(layout: CacheLayout(root: root))
        try journal.replace(with: JournalSnapshot())
        let id = DownloadID()
        for index in 0..<10 {
            journal.append([.changed(id: id, .chunkVerified(path: "a", index: index))], file: shared)
        }
        await journal.waitUntilDurable()
        #expect(writer.synchronizations.withLock { $0 } == 1)
        #expect(writer.closes.withLock { $0 } == 0)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 3, alignment: 1)
        defer { bytes.deallocate() }
        bytes.copyBytes(from: Data("abc".utf8))
        try writer.write(UnsafeRawBufferPointer(bytes), at: 3)  // still open
        #expect(FileManager.default.contents(atPath: root.appendingPathComponent("a.part").path)?.count == 6)
        // Closed once nothing holds it any more.
        _ = consume shared
        await journal.waitUntilDurable()
        // The journal's writer lets go of its batch just after the waiters are resumed: allow it a moment.
        for _ in 0..<200 where writer.closes.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(writer.closes.withLock { $0 } == 1)
    }
}

/// A positional writer that counts its fsyncs and closes.
private final class CountingWriter: PositionalPartFileWriter {
    let inner: POSIXPartFileWriter
    let synchronizations = Locked(0)
    let closes = Locked(0)

    init(_ inner: POSIXPartFileWriter) { self.inner = inner }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) { try inner.write(bytes) }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        try inner.write(bytes, at: offset)
    }
    func synchronize() throws(KioskError) {
        synchronizations.withLock { $0 += 1 }
        try inner.synchronize()
    }
    func close() {
        closes.withLock { $0 += 1 }
        inner.close()
    }
}

/// A chunk cut short by the end of a transfer goes on from its next byte in the next one (#9): the splitter reports
/// how far it got and the digest of what came, and a later splitter starts from the bytes in the part file once they
/// are checked against that digest.
@Suite("Chunks cut short")
struct ChunkResumeTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aChunkCutShortGoesOnFromItsNextByteWithTheSameDigest() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let part = folder.appendingPathComponent("file.part")
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let file = try POSIXPartFileWriter(url: part, truncatingTo: 0)
        defer { file.close() }
        // Chunks of 100 and 200 bytes at 1000 in the part; the first transfer ends 130 bytes in: chunk 0 done,
        // chunk 1 cut short after 30 bytes.
        let first = SegmentSplitter(
            lengths: [100, 200], start: 1000, open: { segment in OffsetWriter(file, at: 1000 + Int64(segment) * 100) })
        try bytes[0..<130].withUnsafeBytes { try first.write($0, at: 1000) }
        let digests = first.finish()
        #expect(digests[0] == SHA256.hash(data: bytes[0..<100]).hexString && digests[1] == nil)
        let cut = try #require(first.cutShort)
        #expect(cut.segment == 1 && cut.point.bytes == 30)
        #expect(cut.point.prefixSHA256 == SHA256.hash(data: bytes[100..<130]).hexString)

        // The next transfer: the 30 bytes read back and checked, the rest requested from byte 1130.
        let resuming = try #require(
            ChunkResumePoints.resumption(cut.point, in: part, at: 1100, fileSystem: POSIXFileSystem()))
        #expect(resuming.bytes == 30)
        let second = SegmentSplitter(
            lengths: [200], start: 1100, resuming: resuming, open: { _ in OffsetWriter(file, at: 1130) })
        #expect(second.resumeOffset == 1130)
        try bytes[130..<300].withUnsafeBytes { try second.write($0, at: 1130) }
        #expect(second.finish() == [SHA256.hash(data: bytes[100..<300]).hexString])
        #expect(second.cutShort == nil)
        #expect(try Data(contentsOf: part)[1000..<1300] == Data(bytes))
    }

    @Test func bytesNoLongerAsReceivedAreNotResumed() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let part = folder.appendingPathComponent("file.part")
        let bytes = Data((0..<64).map { UInt8($0) })
        try bytes.write(to: part)
        let point = ChunkResumePoints.Point(bytes: 32, prefixSHA256: SHA256.hash(data: bytes[16..<48]).hexString)
        let fileSystem = POSIXFileSystem()
        #expect(ChunkResumePoints.resumption(point, in: part, at: 16, fileSystem: fileSystem) != nil)
        // Other bytes at that place (the part written again), a part too short, or no part at all: start over.
        #expect(ChunkResumePoints.resumption(point, in: part, at: 15, fileSystem: fileSystem) == nil)
        #expect(ChunkResumePoints.resumption(point, in: part, at: 40, fileSystem: fileSystem) == nil)
        try FileManager.default.removeItem(at: part)
        #expect(ChunkResumePoints.resumption(point, in: part, at: 16, fileSystem: fileSystem) == nil)
    }

    @Test func pointsAreTakenOnceAndBounded() {
        let points = ChunkResumePoints()
        let key = ChunkResumePoints.Key(part: "/p", offset: 0, sha256: "aa")
        let point = ChunkResumePoints.Point(bytes: 5, prefixSHA256: "bb")
        points.record(key, point)
        #expect(points.take(key) == point)
        #expect(points.take(key) == nil)
        for offset in 0..<(ChunkResumePoints.limit + 10) {
            points.record(ChunkResumePoints.Key(part: "/p", offset: Int64(offset), sha256: "aa"), point)
        }
        #expect(points.count == ChunkResumePoints.limit)
    }
}
