import Crypto
import Foundation
import NIOCore
import NIOPosix

#if canImport(Darwin)
    import Darwin
#else
    import Glibc
#endif

/// The folder `kiosk bench` serves. It is opened once, and every file is opened inside it one path component at a
/// time (`openat(2)`), never following a link: a symbolic link anywhere in the path (to a file or a folder, inside
/// the folder or out of it) is not served, nor is anything but a regular file. Paths come decoded and checked by
/// ``BenchPath``.
///
/// The SHA-256 of each file (its `ETag` and `Repr-Digest`) is computed the first time the file is asked for,
/// from the open descriptor, once however many requests ask at the same time, and kept for as long as the file is
/// the same (its ``FileIdentity``): a file that changes is hashed again. The SHA-256 of its changed version (the
/// fault `changed`, ``ChangedVersion``) is kept the same way, computed the first time a request under `changed`
/// or the report asks for it.
public final class BenchFolder: Sendable {
    /// The folder, as given.
    public let path: String
    /// The open folder, owned by this object.
    private let descriptor: CInt
    private let digests = FileVersionDigests()
    private let changedDigests = ChangedDigests()

    /// Why the folder cannot be served.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens the folder at `path` (a link to a folder is followed here, once: the folder is what it names).
    /// - Throws: ``Failure`` when it is not a folder that can be read.
    public init(path: String) throws(Failure) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Failure(description: "\(path) is not a folder that can be read (\(String(cString: strerror(errno))))")
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// The regular file at `relativePath` (components separated by `/`, already checked by ``BenchPath``), opened
    /// and hashed, or nil when there is none (missing, a link, a folder, a device…). Runs on the thread pool.
    func file(at relativePath: String) async throws -> OpenContentFile? {
        let opening: @Sendable () -> (CInt, FileIdentity)? = { [descriptor] in
            Self.openRegularFile(relativePath, in: descriptor)
        }
        guard let (fileDescriptor, identity) = try await NIOThreadPool.singleton.runIfActive(opening) else {
            return nil
        }
        let file: OpenContentFile
        do {
            let digest = try await digests.digest(of: relativePath, identity: identity) {
                // The descriptor is open until this returns: later callers wait for this task.
                try await FileVersionDigests.sha256(of: fileDescriptor, identity: identity)
            }
            file = OpenContentFile(
                adopting: fileDescriptor, productID: "",
                file: ManifestFile(path: relativePath, directory: path, digest: digest, identity: identity))
        } catch {
            close(fileDescriptor)
            throw error
        }
        return file
    }

    /// The SHA-256 of the changed version of `file` (one of ``file(at:)``), computed on the thread pool once per
    /// file identity.
    func changedDigest(of file: OpenContentFile) async throws -> SHA256Digest {
        try await changedDigests.digest(of: file)
    }

    /// Opens `relativePath` under the folder `root`, one component at a time without following links, and checks
    /// that it is a regular file. Blocking.
    static func openRegularFile(_ relativePath: String, in root: CInt) -> (CInt, FileIdentity)? {
        let components = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let name = components.last, !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else { return nil }
        var folder = root
        defer { if folder != root { close(folder) } }
        for component in components.dropLast() {
            let next = openat(folder, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { return nil }
            if folder != root { close(folder) }
            folder = next
        }
        // Non-blocking: a FIFO put in the folder must not hold a thread; it is refused below anyway.
        let file = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else { return nil }
        var info = CStat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(file)
            return nil
        }
        return (file, FileIdentity(info))
    }
}
