import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Key files in the data directory: created once, readable by the owner only from the first byte, never replaced.
enum SecretFile {
    /// Why a key file could not be read or created.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The file's contents; on first use (the file does not exist) `make()` is written to it first. Two servers
    /// starting at once on one data directory end up with the same contents: creation is exclusive, and the loser
    /// reads the winner's file.
    static func loadOrCreate(at url: URL, make: () -> Data) throws -> Data {
        if let existing = try read(at: url) { return existing }
        let contents = make()
        if try createExclusively(at: url, contents: contents) { return contents }
        guard let existing = try read(at: url) else { throw Failure(description: "cannot read \(url.path)") }
        return existing
    }

    /// The file's contents, or nil if it does not exist. Any other failure throws: a key file that exists but
    /// cannot be read must not be silently replaced.
    static func read(at url: URL) throws -> Data? {
        do {
            return try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        } catch {
            throw Failure(description: "cannot read \(url.path): \(error.localizedDescription)")
        }
    }

    /// Creates the file with mode 0600, writes `contents` and syncs it; false if the file already exists.
    private static func createExclusively(at url: URL, contents: Data) throws -> Bool {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd < 0 {
            if errno == EEXIST { return false }
            throw Failure(description: "cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        try contents.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    throw Failure(description: "cannot write \(url.path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
        guard fsync(fd) == 0 else { throw Failure(description: "cannot sync \(url.path)") }
        return true
    }
}
