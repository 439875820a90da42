import Crypto
import Foundation
import KioskCore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The bytes of a ``URLDownload`` so far: the partial file, its resume record (``URLResumeRecord``, written before
/// any byte of a new answer) and the running SHA-256 of its bytes.
struct PartialFile {
    let file: URL
    let record: URL
    /// The URL the bytes come from.
    let url: URL
    /// The file's representation the bytes belong to.
    private(set) var representation: URLRepresentation?
    private(set) var bytesOnDisk: Int64 = 0
    private var hasher = SHA256()

    /// Opens what an earlier run left for `url`: its bytes are kept when its record is of this format, for the same
    /// URL (the query aside) and no longer than the file; otherwise both are removed.
    init(file: URL, record: URL, url: URL) throws(KioskError) {
        self.file = file
        self.record = record
        self.url = url
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value
        if let size, let data = try? Data(contentsOf: record),
            let saved = try? JSONDecoder().decode(URLResumeRecord.self, from: data),
            saved.format == URLResumeRecord.currentFormat, saved.location == URLResumeRecord.location(of: url),
            size <= saved.representation.length ?? .max
        {
            do {
                try FileHashing.update(&hasher, withContentsOf: file, upTo: size, fileSystem: POSIXFileSystem())
            } catch {
                throw KioskError.fileSystem(path: file.path, underlying: "\(error)")
            }
            representation = saved.representation
            bytesOnDisk = size
        } else {
            try discard()
        }
    }

    /// The lowercase hex SHA-256 of the bytes on disk.
    var sha256: String { hasher.finalize().hexString }

    /// Writes `body` from byte `offset` (0: over whatever was there; otherwise the bytes on disk), keeping
    /// `representation` first; `written` is told each piece's size and the bytes on disk after it. Returns why the
    /// body ended early: nil when it ended on its own, the network error that cut it, or
    /// ``KioskError/invalidResponse(_:)`` when it went on past the file's length (the excess is not written).
    ///
    /// - Throws: ``KioskError/cancelled(productID:)`` when the task is cancelled; file system errors.
    mutating func take(
        _ body: any AnswerBody, from offset: Int64, representation: URLRepresentation,
        written: (_ piece: Int64, _ bytesOnDisk: Int64) -> Void
    ) async throws(KioskError) -> KioskError? {
        defer { body.cancel() }
        if offset != bytesOnDisk {
            precondition(offset == 0, "a body is written from byte 0 or where the bytes on disk end")
            hasher = SHA256()
            bytesOnDisk = 0
        }
        self.representation = representation
        try save()
        let writer = try POSIXPartFileWriter(url: file, truncatingTo: offset)
        defer { writer.close() }
        while true {
            let next: Data?
            do {
                next = try await body.next()
            } catch {
                if case .cancelled = error { throw error }
                return error
            }
            guard var piece = next else { return nil }
            var overran = false
            if let length = representation.length, bytesOnDisk + Int64(piece.count) > length {
                piece = piece.prefix(Int(length - bytesOnDisk))
                overran = true
            }
            var failure: KioskError?
            piece.withUnsafeBytes { bytes in
                do throws(KioskError) { try writer.write(bytes) } catch { failure = error }
            }
            if let failure { throw failure }
            hasher.update(data: piece)
            bytesOnDisk += Int64(piece.count)
            written(Int64(piece.count), bytesOnDisk)
            if overran, let length = representation.length {
                return .invalidResponse("the body went on past the file's \(length) bytes")
            }
        }
    }

    /// Removes the bytes and the record: the download starts from nothing.
    mutating func discard() throws(KioskError) {
        for url in [file, record] {
            do {
                try FileManager.default.removeItem(at: url)
            } catch CocoaError.fileNoSuchFile {
            } catch {
                throw KioskError.fileSystem(path: url.path, underlying: error.localizedDescription)
            }
        }
        hasher = SHA256()
        bytesOnDisk = 0
        representation = nil
    }

    /// Makes the bytes durable and renames the file to `destination` (replacing what is there), then removes the
    /// record.
    mutating func move(to destination: URL) throws(KioskError) {
        let writer = try POSIXPartFileWriter(url: file, truncatingTo: bytesOnDisk)
        defer { writer.close() }
        try writer.synchronize()
        guard rename(file.path, destination.path) == 0 else {
            throw KioskError.fileSystem(path: destination.path, underlying: String(cString: strerror(errno)))
        }
        try? FileManager.default.removeItem(at: record)
    }

    private func save() throws(KioskError) {
        guard let representation else { return }
        let kept = URLResumeRecord(url: url, representation: representation)
        do {
            try JSONEncoder().encode(kept).write(to: record, options: .atomic)
        } catch {
            throw KioskError.fileSystem(path: record.path, underlying: error.localizedDescription)
        }
    }
}
