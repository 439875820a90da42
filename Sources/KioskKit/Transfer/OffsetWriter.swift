import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes what a transfer receives into a shared file at consecutive offsets from `offset`: one chunk of a file
/// fetched by chunks, while other chunks of it are written by other transfers. Closing it leaves the file open.
final class OffsetWriter: PartFileWriter {
    let file: any PositionalPartFileWriter
    private(set) var offset: Int64

    init(_ file: any PositionalPartFileWriter, at offset: Int64) {
        self.file = file
        self.offset = offset
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        try file.write(bytes, at: offset)
        offset += Int64(bytes.count)
    }

    func close() {}
}
