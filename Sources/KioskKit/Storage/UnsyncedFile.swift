import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A complete file whose bytes may not be durable yet. The journal's writer fsyncs it in the group commit that
/// records it as verified, so that the download goes on meanwhile and files verified close together share the
/// journal's fsync.
///
/// `@unchecked Sendable`: its writer has one owner at a time (the transfer, then the journal's writer queue).
final class UnsyncedFile: @unchecked Sendable {
    private enum Source {
        case open(any PartFileWriter)
        case shared(any PositionalPartFileWriter)
        case path(URL, any KioskFileSystem)
    }

    private let source: Source

    /// A file still open for writing.
    init(_ writer: any PartFileWriter) { source = .open(writer) }

    /// A file that several ranges are still being written to (a file fetched by chunks): each synchronization
    /// fsyncs it and leaves it open; it is closed when this value goes away, that is once the transfer and every
    /// journal append naming it are done with it. One such value is shared by every checkpoint of the file, so
    /// that a group commit fsyncs it once.
    init(shared writer: any PositionalPartFileWriter) { source = .shared(writer) }

    deinit {
        if case .shared(let writer) = source { writer.close() }
    }

    /// A file found complete on disk (written by an earlier session, perhaps never fsynced).
    init(_ url: URL, fileSystem: any KioskFileSystem) { source = .path(url, fileSystem) }

    /// fsyncs the file and closes it (a shared file stays open).
    func synchronize() throws(KioskError) {
        switch source {
        case .open(let writer):
            defer { writer.close() }
            try writer.synchronize()
        case .shared(let writer):
            try writer.synchronize()
        case .path(let url, let fileSystem):
            do throws(SystemCallError) {
                let file = try fileSystem.open(url, mode: .read)
                defer { file.close() }
                try file.synchronize()
            } catch {
                throw .fileSystem(path: url.lastPathComponent, underlying: error.message)
            }
        }
    }
}
