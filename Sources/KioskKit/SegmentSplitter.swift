import Crypto
import Foundation
import KioskCore

/// Receives a range made of consecutive segments (the files of a pack run, or the chunks of a run of a file) in order,
/// and writes each segment's bytes through a writer of its own, hashing each segment as it goes; a segment's writer
/// is closed as soon as its last byte is written. An empty segment still gets its writer opened and closed (an empty
/// file).
///
/// Writes come from one transfer at a time, in order (a broken connection goes on from the next byte): a write at
/// any other offset is refused.
final class SegmentSplitter: PositionalPartFileWriter {
    private struct State {
        /// The bytes of the run written so far.
        var written: Int64 = 0
        /// The segment being written (index in ``lengths``).
        var current = 0
        var writer: (any PartFileWriter)?
        var hasher = SHA256()
        /// Each segment's digest once its last byte is written.
        var digests: [String?]
    }

    private let lengths: [Int64]
    private let start: Int64
    private let open: @Sendable (_ segment: Int) throws(KioskError) -> any PartFileWriter
    private let written: @Sendable (Int64) -> Void
    private let completed: @Sendable (_ index: Int, _ sha256: String) -> Void
    private let state: Locked<State>
    /// Where each segment starts in the range, then the range's length.
    private let runOffsets: [Int64]

    /// A splitter of a range starting at `start` (in the resource requested) made of segments of these `lengths`,
    /// each written through the writer `open` gives for its index; `written` is told the bytes of the range written
    /// so far, and `completed` each segment (its index and digest) once its last byte is written and its writer
    /// closed, in order.
    init(
        lengths: [Int64], start: Int64,
        open: @escaping @Sendable (_ segment: Int) throws(KioskError) -> any PartFileWriter,
        written: @escaping @Sendable (Int64) -> Void = { _ in },
        completed: @escaping @Sendable (_ index: Int, _ sha256: String) -> Void = { _, _ in }
    ) {
        self.lengths = lengths
        self.start = start
        self.open = open
        self.written = written
        self.completed = completed
        self.runOffsets = GrantPack.offsets(of: lengths)
        self.state = Locked(State(digests: Array(repeating: nil, count: lengths.count)))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        try write(bytes, at: start + state.withLock { $0.written })
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        let (total, done) = try state.withLock { state throws(KioskError) -> (Int64, Range<Int>) in
            let before = state.current
            guard offset == start + state.written else {
                throw KioskError.invalidResponse("the bytes of a range did not come in order")
            }
            var rest = bytes
            while true {
                try finishCompleted(&state)
                guard !rest.isEmpty else { break }
                guard state.current < lengths.count else {
                    throw KioskError.invalidResponse("the server sent more bytes than the range asked for")
                }
                let length = lengths[state.current]
                if state.writer == nil { state.writer = try open(state.current) }
                let fileWritten = state.written - offsetInRun(state.current)
                let count = Int(min(Int64(rest.count), length - fileWritten))
                let slice = UnsafeRawBufferPointer(rebasing: rest[..<count])
                try state.writer!.write(slice)
                state.hasher.update(bufferPointer: slice)
                state.written += Int64(count)
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
            return (state.written, before..<state.current)
        }
        written(total)
        report(done)
    }

    /// Closes the segment being written (the transfer ended), finishing the empty segments at the end of the range
    /// when every byte came (reported to `completed`), and returns each segment's digest (`nil` for a segment not
    /// complete).
    @discardableResult
    func finish() -> [String?] {
        let (done, digests) = state.withLock { state in
            let before = state.current
            try? finishCompleted(&state)
            state.writer?.close()
            state.writer = nil
            return (before..<state.current, state.digests)
        }
        report(done)
        return digests
    }

    /// Tells `completed` about the segments of `range`, outside the lock.
    private func report(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        let digests = state.withLock { state in range.map { state.digests[$0]! } }
        for (index, digest) in zip(range, digests) { completed(index, digest) }
    }

    func synchronize() throws(KioskError) {}

    func close() {}

    /// Finishes the current segment while it is complete (empty ones at once): closes it and keeps its digest.
    private func finishCompleted(_ state: inout State) throws(KioskError) {
        while state.current < lengths.count, state.written - offsetInRun(state.current) == lengths[state.current] {
            if state.writer == nil { state.writer = try open(state.current) }  // an empty segment
            state.writer?.close()
            state.writer = nil
            state.digests[state.current] = state.hasher.finalize().hexString
            state.hasher = SHA256()
            state.current += 1
        }
    }

    /// Where segment `index` starts in the range.
    private func offsetInRun(_ index: Int) -> Int64 { runOffsets[index] }
}

extension DownloadEngine {
    /// Fetches the range of `request` (nothing when nil) into `splitter`, in requests of at most `requestLength`
    /// bytes on one connection permit, with a set of blocks from `pool`; returns the request's error, if any, once
    /// the splitter has reported every segment it completed (the segments before a failure count), and ends
    /// `completion` then.
    func fetchSegments(
        _ request: FetchRequest?, into splitter: SegmentSplitter, blocks pool: BlockPool,
        requestLength: Int64 = FileFetcher.segmentSize,
        completion: AsyncStream<(index: Int, sha256: String)>.Continuation
    ) async -> (any Error)? {
        var failure: (any Error)?
        if let request {
            let fetcher = self.fetcher
            do {
                _ = try await budget.withPermit {
                    // At most one block set per permit: memory does not grow with the requests waiting.
                    let blocks = pool.take()
                    defer { pool.give(blocks) }
                    return try await fetcher.fetchRange(
                        request, into: splitter, blocks: blocks, segmentSize: requestLength)
                }
            } catch {
                failure = error
            }
        }
        splitter.finish()
        completion.finish()
        return failure
    }
}
