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
        /// Set by ``finish()`` when a segment was cut short (see ``cutShort``).
        var cutShort: (segment: Int, point: ChunkResumePoints.Point)?
    }

    private let lengths: [Int64]
    private let start: Int64
    private let open: @Sendable (_ segment: Int) throws(KioskError) -> any PartFileWriter
    private let written: @Sendable (Int64) -> Void
    private let completed: @Sendable (_ index: Int, _ sha256: String) -> Void
    private let progressInterval: Int64?
    private let progressed: @Sendable (_ index: Int, _ point: ChunkResumePoints.Point) -> Void
    private let state: Locked<State>
    /// Where each segment starts in the range, then the range's length.
    private let runOffsets: [Int64]

    /// A splitter of a range starting at `start` (in the resource requested) made of segments of these `lengths`,
    /// each written through the writer `open` gives for its index; `written` is told the bytes of the range written
    /// so far, and `completed` each segment (its index and digest) once its last byte is written and its writer
    /// closed, in order. With `resuming`, the first segment's first `bytes` are in place already and `hasher` has
    /// hashed them: the first write comes at `start + bytes`, and the first segment's writer starts there. With
    /// `progressInterval`, `progressed` is told each time a segment not yet complete passes a multiple of it: how
    /// many of its first bytes are written, and their digest (``ChunkPrefix``).
    init(
        lengths: [Int64], start: Int64, resuming: (bytes: Int64, hasher: SHA256)? = nil,
        open: @escaping @Sendable (_ segment: Int) throws(KioskError) -> any PartFileWriter,
        written: @escaping @Sendable (Int64) -> Void = { _ in },
        completed: @escaping @Sendable (_ index: Int, _ sha256: String) -> Void = { _, _ in },
        progressInterval: Int64? = nil,
        progressed: @escaping @Sendable (_ index: Int, _ point: ChunkResumePoints.Point) -> Void = { _, _ in }
    ) {
        self.lengths = lengths
        self.start = start
        self.open = open
        self.written = written
        self.completed = completed
        self.progressInterval = progressInterval
        self.progressed = progressed
        self.runOffsets = GrantPack.offsets(of: lengths)
        var state = State(digests: Array(repeating: nil, count: lengths.count))
        if let resuming, let first = lengths.first, resuming.bytes > 0, resuming.bytes < first {
            state.written = resuming.bytes
            state.hasher = resuming.hasher
        }
        self.state = Locked(state)
    }

    /// Where the range resumes: `start` plus the bytes of the first segment already in place.
    var resumeOffset: Int64 { start + state.withLock { $0.written } }

    /// After ``finish()``: the segment that was being written when the transfer ended, when some but not all of its
    /// bytes came, with their count and digest (``ChunkResumePoints``); `nil` otherwise.
    var cutShort: (segment: Int, point: ChunkResumePoints.Point)? { state.withLock { $0.cutShort } }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        try write(bytes, at: start + state.withLock { $0.written })
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        typealias Reports = (Int64, [(Int, String)], [(Int, ChunkResumePoints.Point)])
        let (total, done, points) = try state.withLock { state throws(KioskError) -> Reports in
            guard offset == start + state.written else {
                throw KioskError.invalidResponse("the bytes of a range did not come in order")
            }
            var done: [(Int, String)] = []
            var points: [(Int, ChunkResumePoints.Point)] = []
            var rest = bytes
            while true {
                try finishCompleted(&state, into: &done)
                guard !rest.isEmpty else { break }
                guard state.current < lengths.count else {
                    throw KioskError.invalidResponse("the server sent more bytes than the range asked for")
                }
                if state.writer == nil { state.writer = try open(state.current) }
                let segmentWritten = state.written - runOffsets[state.current]
                let count = Int(min(Int64(rest.count), lengths[state.current] - segmentWritten))
                let slice = UnsafeRawBufferPointer(rebasing: rest[..<count])
                try state.writer!.write(slice)
                state.hasher.update(bufferPointer: slice)
                state.written += Int64(count)
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
                let after = segmentWritten + Int64(count)
                if let interval = progressInterval, after < lengths[state.current],
                    after / interval > segmentWritten / interval
                {
                    let prefix = state.hasher.finalize().hexString
                    points.append((state.current, ChunkResumePoints.Point(bytes: after, prefixSHA256: prefix)))
                }
            }
            return (state.written, done, points)
        }
        written(total)
        for (index, point) in points { progressed(index, point) }
        for (index, digest) in done { completed(index, digest) }
    }

    /// Closes the segment being written (the transfer ended), finishing the empty segments at the end of the range
    /// when every byte came (reported to `completed`), and returns each segment's digest (`nil` for a segment not
    /// complete).
    @discardableResult
    func finish() -> [String?] {
        let (done, digests) = state.withLock { state in
            var done: [(Int, String)] = []
            try? finishCompleted(&state, into: &done)
            state.writer?.close()
            state.writer = nil
            if state.current < lengths.count {
                let bytes = state.written - runOffsets[state.current]
                if bytes > 0 {
                    let prefix = state.hasher
                    state.cutShort = (
                        state.current,
                        ChunkResumePoints.Point(bytes: bytes, prefixSHA256: prefix.finalize().hexString)
                    )
                }
            }
            return (done, state.digests)
        }
        for (index, digest) in done { completed(index, digest) }
        return digests
    }

    func synchronize() throws(KioskError) {}

    func close() {}

    /// Finishes the current segment while it is complete (empty ones at once): closes it, keeps its digest and adds
    /// it to `done`, for `completed` once the lock is released.
    private func finishCompleted(_ state: inout State, into done: inout [(Int, String)]) throws(KioskError) {
        while state.current < lengths.count, state.written - runOffsets[state.current] == lengths[state.current] {
            if state.writer == nil { state.writer = try open(state.current) }  // an empty segment
            state.writer?.close()
            state.writer = nil
            let digest = state.hasher.finalize().hexString
            state.digests[state.current] = digest
            done.append((state.current, digest))
            state.hasher = SHA256()
            state.current += 1
        }
    }
}
