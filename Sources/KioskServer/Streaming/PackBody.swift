import Hummingbird
import KioskCore
import NIOCore

/// The body of a pack answer: each file's piece of the range in turn, each file opened (from the catalog's cache)
/// just before its piece is sent.
struct PackBody: RangedBody {
    let product: CatalogProduct
    let pack: ProductPack
    let access: ContentAccess
    let chunkSize: Int
    let sendTimeout: Duration
    let metrics: ServerMetrics
    let channel: any Channel

    /// A body of `contentLength` bytes: the pack's bytes in `segments`, through `faults` when given. A pack is
    /// answered one range at a time (``RangeResponder/Resource/answersMultipleRanges``), so every segment is a range.
    func body(segments: [FileBody.Segment], contentLength: Int64, faults: FaultyBodyWriter?) -> ResponseBody {
        ResponseBody(contentLength: Int(contentLength)) { writer in
            metrics.activeStreams.increment()
            defer { metrics.activeStreams.decrement() }
            var faults = faults
            for segment in segments {
                guard case .file(let range) = segment else { preconditionFailure("a pack answer has no multipart") }
                for piece in pack.pieces(of: range) {
                    let file = product.files[piece.index]
                    // A file replaced since the catalog hashed it: the answer stops short (the connection closes),
                    // the catalog reloads, and the client asks again.
                    guard let opened = await access.packFile(file, of: product.info.productID) else {
                        throw FileBody.FileShortened()
                    }
                    let fileBody = FileBody(
                        file: opened, chunkSize: chunkSize, sendTimeout: sendTimeout, metrics: metrics,
                        channel: channel)
                    try await fileBody.write([.file(piece.range)], to: &writer, faults: &faults)
                }
            }
            try await writer.finish(nil)
        }
    }
}
