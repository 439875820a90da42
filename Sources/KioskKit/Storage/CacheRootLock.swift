import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What makes one ``KioskClient`` the owner of its cache root: an exclusive `flock` on the root's `.lock` file,
/// taken when the client opens and released by ``KioskClient/close()``, by the client's end, or by the process's
/// end (the system drops the lock with the descriptor, so a killed app never leaves the root locked).
///
/// Two clients on one root would download into the same staging folder and journal over each other; the second is
/// refused at once with ``KioskError/cacheRootInUse(path:)``, whether it is in the same process or another (a
/// `flock` belongs to the open file, not the process).
final class CacheRootLock: Sendable {
    /// The lock file's name in the cache root.
    static let fileName = ".lock"

    private let descriptor = Locked<Int32?>(nil)

    /// How long a lock held elsewhere is waited for before the root counts as in use: a process this one starts
    /// holds a copy of every descriptor from its fork to its `exec` (when the lock's copy closes), and a client
    /// closed in that moment would otherwise leave its root looking taken. A client that holds the root keeps it far
    /// longer.
    static let patience = Duration.milliseconds(500)

    /// Takes the lock of `root`, which must exist.
    ///
    /// - Throws: ``KioskError/cacheRootInUse(path:)`` when another client holds it (after ``patience``);
    ///   ``KioskError/fileSystem(path:underlying:)`` when the lock file cannot be opened (a link planted in its
    ///   place is not followed).
    init(root: URL) async throws(KioskError) {
        let path = root.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .fileSystem(path: Self.fileName, underlying: String(cString: strerror(errno)))
        }
        let deadline = ContinuousClock.now + Self.patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EWOULDBLOCK, ContinuousClock.now < deadline,
                (try? await Task.sleep(for: .milliseconds(10))) != nil
            else {
                close(fd)
                if error == EWOULDBLOCK { throw .cacheRootInUse(path: root.path) }
                throw .fileSystem(path: Self.fileName, underlying: String(cString: strerror(error)))
            }
        }
        descriptor.withLock { $0 = fd }
    }

    deinit { release() }

    /// Releases the lock (once; later calls do nothing).
    func release() {
        guard let fd = descriptor.withLock({ fd -> Int32? in
            defer { fd = nil }
            return fd
        }) else { return }
        close(fd)
    }
}
