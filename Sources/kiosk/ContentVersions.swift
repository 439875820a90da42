import Foundation
import KioskCore
import KioskServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The product versions `kiosk content check` saw last, each with its chunk manifest, kept in the data folder
/// (``fileName``) so that the next check can say how much of a new version an app already has.
///
/// The file is text, written atomically (a temporary file renamed over it), owner-only:
///
///     kiosk-content-versions 1 <algorithm> <minimum> <average> <maximum>
///     product <product_id> <content_version> <file count>
///     <chunks> <path>                          (one line per file, in path order)
///
/// where `<chunks>` is `-` for an empty file, otherwise `<length>:<sha256>` for each chunk, comma-separated; a file
/// of one chunk is one chunk of its whole-file SHA-256. The header names the chunking parameters the chunks were cut
/// with (``ChunkingParameters/standard``).
struct ContentVersions: Sendable, Equatable {
    /// The file's name in the data folder.
    static let fileName = "content-versions.txt"
    /// The first line of the file.
    static let header =
        "kiosk-content-versions 1 \(ChunkingParameters.standard.algorithm) \(ChunkingParameters.standard.minimum) "
        + "\(ChunkingParameters.standard.average) \(ChunkingParameters.standard.maximum)"

    /// One file of a recorded version: its path and its chunks, in order.
    struct File: Sendable, Equatable {
        var path: String
        var chunks: [FileChunk]

        /// Its size in bytes.
        var length: Int64 { chunks.reduce(0) { $0 + Int64($1.length) } }
    }

    /// One recorded version of a product.
    struct Version: Sendable, Equatable {
        var contentVersion: String
        /// The files, in path order.
        var files: [File]

        /// The sum of the file sizes.
        var length: Int64 { files.reduce(0) { $0 + $1.length } }

        /// The version the catalog serves for `product`: a file of one chunk counts as one chunk of its digest.
        init(_ product: CatalogProduct) {
            contentVersion = product.info.contentVersion
            files = product.files.map { file in
                let chunks =
                    if !file.chunks.isEmpty {
                        file.chunks
                    } else if file.length > 0 {
                        // A file without a chunk list is at most one chunk long (4 MiB): the catalog cuts longer ones.
                        [FileChunk(length: UInt32(file.length), digest: file.digest)]
                    } else {
                        [FileChunk]()
                    }
                return File(path: file.path, chunks: chunks)
            }
        }

        init(contentVersion: String, files: [File]) {
            self.contentVersion = contentVersion
            self.files = files
        }
    }

    /// Why the file cannot be used; its description names the file and the line.
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// The recorded versions by product ID.
    var products: [String: Version] = [:]

    /// No version recorded.
    init() {}

    /// Reads the file at `url`; a missing file is an empty record. Anything else that does not read as a whole
    /// (another format or chunking, a damaged or truncated line) is an error: comparing against half a record would
    /// report wrong figures.
    init(contentsOf url: URL) throws(ReadError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return
        } catch {
            throw ReadError(description: "\(url.path) cannot be read: \(error.localizedDescription)")
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        func failure(_ line: Int, _ message: String) -> ReadError {
            ReadError(description: "\(url.path), line \(line): \(message)")
        }
        guard let first = lines.first, first.elementsEqual(Self.header.utf8) else {
            throw failure(
                1, "not a record of this release's format and chunking (expected '\(Self.header)')")
        }
        guard lines.last?.isEmpty == true else { throw failure(lines.count, "the last line is cut off") }
        var index = 1
        while index < lines.count - 1 {
            let fields = lines[index].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
            guard fields.count == 4, fields[0] == "product", Identifiers.isValidProductID(fields[1]),
                Identifiers.isValidContentVersion(fields[2]), let count = Int(fields[3]), count >= 0
            else { throw failure(index + 1, "expected 'product <product_id> <content_version> <file count>'") }
            guard products[fields[1]] == nil else { throw failure(index + 1, "\(fields[1]) is recorded twice") }
            guard index + count < lines.count - 1 else {
                throw failure(lines.count, "\(fields[1]) lists \(count) files, the file ends before")
            }
            var files: [File] = []
            for line in (index + 1)...(index + count) {
                guard let file = Self.file(lines[line]) else {
                    throw failure(line + 1, "expected '<length>:<sha256>,… <path>' or '- <path>'")
                }
                files.append(file)
            }
            products[fields[1]] = Version(contentVersion: fields[2], files: files)
            index += count + 1
        }
    }

    /// One file line, nil when it does not read.
    private static func file(_ line: Data.SubSequence) -> File? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 1, omittingEmptySubsequences: false)
        guard fields.count == 2 else { return nil }
        let path = String(decoding: fields[1], as: UTF8.self)
        guard Identifiers.isValidFilePath(path) else { return nil }
        if fields[0].elementsEqual("-".utf8) { return File(path: path, chunks: []) }
        var chunks: [FileChunk] = []
        for item in fields[0].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let parts = item.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            guard parts.count == 2, let length = UInt32(String(decoding: parts[0], as: UTF8.self)), length > 0,
                let digest = SHA256Digest(hexUTF8: parts[1])
            else { return nil }
            chunks.append(FileChunk(length: length, digest: digest))
        }
        return File(path: path, chunks: chunks)
    }

    /// Writes the record to `url` atomically and owner-only, creating its folder (0700) when missing.
    func write(to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var text = Self.header + "\n"
        for (id, version) in products.sorted(by: { $0.key < $1.key }) {
            text += "product \(id) \(version.contentVersion) \(version.files.count)\n"
            for file in version.files {
                text +=
                    file.chunks.isEmpty
                    ? "-" : file.chunks.map { "\($0.length):\($0.digest.hexString)" }.joined(separator: ",")
                text += " \(file.path)\n"
            }
        }
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path]) }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    /// The record after a check that loaded `snapshot`: every product it loaded at its current version, and the
    /// previous entry of each product folder the check skipped for a problem (a folder broken for one check keeps
    /// its history). Products that are gone are forgotten.
    func updated(with snapshot: CatalogSnapshot) -> ContentVersions {
        var next = ContentVersions()
        let skipped = Set(snapshot.problems.map(\.folder))
        for (id, version) in products where snapshot.products[id] == nil && skipped.contains(id) {
            next.products[id] = version
        }
        for product in snapshot.ordered {
            next.products[product.info.productID] = Version(product)
        }
        return next
    }
}

/// How much of a new version of a product an app that has the previous one already holds, by chunk.
struct VersionShare: Sendable, Equatable {
    /// The bytes of the new version.
    var totalBytes: Int64
    /// The bytes of the new version in chunks the previous version has (anywhere, under any path).
    var sharedBytes: Int64
    /// The new version's files.
    var fileCount: Int
    /// The new version's files whose path the previous version has.
    var keptPathCount: Int
    /// The bytes of the new version in files of several chunks whose path the previous version has: files where a
    /// small edit keeps most chunks.
    var keptMultiChunkBytes: Int64

    /// The most an app updating from the previous version fetches: each chunk the previous version lacks, where
    /// it occurs; the rest it copies from what it has. It fetches less where the server cuts such a chunk into
    /// subchunks the previous version holds (a record keeps chunk hashes, not bytes, so that part is not known here).
    var fetchedBytes: Int64 { totalBytes - sharedBytes }

    /// The shared part, from 0 to 1 (1 for an empty version).
    var sharedFraction: Double { totalBytes == 0 ? 1 : Double(sharedBytes) / Double(totalBytes) }

    /// The sign of whole-pack compression or encryption: almost nothing shared (under 5 %), although most files
    /// kept their paths and most bytes are in such files of several chunks, where an edit keeps most chunks. A
    /// product of small files (one chunk each) edited throughout shares nothing too, and is not flagged.
    var defeatsDeltas: Bool {
        sharedFraction < 0.05 && keptPathCount * 2 > fileCount && keptMultiChunkBytes * 2 > totalBytes
    }

    /// Compares `current` with `previous`.
    init(previous: ContentVersions.Version, current: ContentVersions.Version) {
        let known = Set(previous.files.lazy.flatMap(\.chunks).map(\.digest))
        let previousPaths = Set(previous.files.map(\.path))
        totalBytes = 0
        sharedBytes = 0
        fileCount = current.files.count
        keptPathCount = 0
        keptMultiChunkBytes = 0
        for file in current.files {
            let kept = previousPaths.contains(file.path)
            if kept { keptPathCount += 1 }
            if kept && file.chunks.count > 1 { keptMultiChunkBytes += file.length }
            for chunk in file.chunks {
                totalBytes += Int64(chunk.length)
                if known.contains(chunk.digest) { sharedBytes += Int64(chunk.length) }
            }
        }
    }

    /// The report of a product whose version changed: one line, plus a warning line when ``defeatsDeltas``.
    func report(productID: String, from previous: String, to current: String) -> [String] {
        let percent = String(format: "%.1f", sharedFraction * 100)
        var lines = [
            "\(productID) \(previous) -> \(current): shares \(sharedBytes) of \(totalBytes) bytes (\(percent) %) "
                + "with \(previous) by chunk; an app updating from \(previous) fetches at most \(fetchedBytes) bytes"
        ]
        if defeatsDeltas {
            lines.append(
                "warning: \(productID) \(current) shares almost nothing with \(previous) although \(keptPathCount) "
                    + "of \(fileCount) files kept their paths: whole-pack compression or encryption defeats delta "
                    + "updates, and every update is downloaded in full; compress or encrypt file by file, so that an "
                    + "edit changes only its own file")
        }
        return lines
    }
}
