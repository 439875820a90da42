import Crypto
import Foundation
import KioskCore

extension DownloadEngine {
    /// Fetches the range of `request` (nothing when nil) into `splitter`, in requests of at most `requestLength`
    /// bytes on one connection permit, with a set of blocks from `pool`; returns the request's error, if any, once
    /// the splitter has reported every segment it completed (the segments before a failure count), and ends
    /// `completion` then.
    func fetchSegments<Report>(
        _ request: FetchRequest?, into splitter: SegmentSplitter, blocks pool: BlockPool,
        requestLength: Int64 = FileFetcher.segmentSize, completion: AsyncStream<Report>.Continuation
    ) async -> (any Error)? {
        var failure: (any Error)?
        if let request {
            do {
                try await fetchRange(request, into: splitter, blocks: pool, requestLength: requestLength)
            } catch {
                failure = error
            }
        }
        splitter.finish()
        completion.finish()
        return failure
    }

    /// Fetches the range of `request` into `writer`, at the file's offsets, holding one permit of the connection
    /// budget: the one way every range is fetched (chunk runs, pack runs, subchunk gaps), with the same answer
    /// checks (``TransferHandler``) and the same continuation of a broken connection (``RetryPolicy``).
    func fetchRange(
        _ request: FetchRequest, into writer: any PositionalPartFileWriter, blocks pool: BlockPool,
        requestLength: Int64 = FileFetcher.segmentSize
    ) async throws {
        let fetcher = self.fetcher
        try await budget.withPermit {
            // At most one block set per permit: memory does not grow with the requests waiting. A transport that
            // delivers inline needs none.
            let blocks = fetcher.transport.delivery == .queued ? pool.take() : nil
            defer { if let blocks { pool.give(blocks) } }
            try await fetcher.fetchRange(request, into: writer, blocks: blocks, segmentSize: requestLength)
        }
    }
}
