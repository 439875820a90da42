import Foundation

/// The data folder holds the ledger, the sandbox store's state and the signing keys: it is created owner-only
/// (0700), and at every start the folder and everything in it lose any group and other permissions.
enum DataDirectory {
    /// Creates `url` (0700) if needed, then tightens it and everything in it.
    static func prepare(_ url: URL) throws {
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try tighten(url)
    }

    /// Removes the group and other permissions of `url` and of every file and folder below it, so that files made
    /// by libraries with the process's umask (SQLite's database, `-wal`, `-shm` and journal files) are owner-only.
    /// Symbolic links are not followed.
    static func tighten(_ url: URL) throws {
        let root = url.resolvingSymlinksInPath()
        try restrict(root.path)
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return }
        while let relative = walker.nextObject() as? String {
            try restrict(root.appendingPathComponent(relative).path)
        }
    }

    /// Tightens a SQLite database kept outside the data directory (`--database sqlite:PATH`): the file and, when
    /// present, its `-wal`, `-shm` and `-journal` files. SQLite makes those later with the database file's own mode.
    static func tightenDatabase(at path: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try restrict(path + suffix)
        }
    }

    /// Clears the group and other bits of `path`'s mode, when any is set; a symbolic link is left alone (`chmod`
    /// would change what it points to).
    private static func restrict(_ path: String) throws {
        let manager = FileManager.default
        let attributes = try manager.attributesOfItem(atPath: path)
        guard (attributes[.type] as? FileAttributeType) != .typeSymbolicLink,
            let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0
        else { return }
        try manager.setAttributes([.posixPermissions: mode & 0o700], ofItemAtPath: path)
    }
}
