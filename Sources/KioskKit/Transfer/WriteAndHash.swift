import Crypto
import Foundation
import KioskCore

/// Writes a piece of a body and hashes it at the same time: on two threads for a queued block of 64 KiB or more,
/// one after the other otherwise (below that, handing half the work to another thread costs more than it saves;
/// and inline pieces are already on their connection's own thread).
enum WriteAndHash {
    /// The smallest piece written and hashed on two threads at once.
    static let parallelMinimum = 64 << 10

    /// Writes `bytes` through `writer` and adds them to `hasher`. Returns the hasher, or the write's error (the
    /// hash is then of no use).
    static func run(
        _ bytes: UnsafeRawBufferPointer, writer: any PartFileWriter, hasher: SHA256, parallel: Bool
    ) -> Result<SHA256, KioskError> {
        let step = Step(writer: writer, bytes: bytes, hasher: hasher)
        let work: @Sendable (Int) -> Void = { index in
            if index == 0 {
                do throws(KioskError) { try step.writer.write(step.bytes) } catch { step.writeError = error }
            } else {
                step.hasher.update(bufferPointer: step.bytes)
            }
        }
        if parallel && bytes.count >= parallelMinimum {
            DispatchQueue.concurrentPerform(iterations: 2, execute: work)
        } else {
            work(0)
            work(1)
        }
        return step.writeError.map(Result.failure) ?? .success(step.hasher)
    }

    /// The piece and the two results of working on it. `@unchecked Sendable`: the two iterations only read `bytes`
    /// and `writer`, each writes one result, and both are read after both iterations have finished.
    private final class Step: @unchecked Sendable {
        let writer: any PartFileWriter
        let bytes: UnsafeRawBufferPointer
        var hasher: SHA256
        var writeError: KioskError?

        init(writer: any PartFileWriter, bytes: UnsafeRawBufferPointer, hasher: SHA256) {
            self.writer = writer
            self.bytes = bytes
            self.hasher = hasher
        }
    }
}
