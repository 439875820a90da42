import Foundation
import KioskServerTestSupport
import Testing

@testable import KioskServer

/// A SQLite database kept outside the data directory (`--database sqlite:PATH`) is owner-only, as the data
/// directory's files are, although SQLite makes it with the process's umask (0644 under the usual 022).
@Suite("SQLite database outside the data directory")
struct SQLiteOutsideDataDirectoryTests {
    @Test func theDatabaseFileIsOwnerOnly() async throws {
        let content = try ServerTestDirectory("outside-content")
        let data = try ServerTestDirectory("outside-data")
        let elsewhere = try ServerTestDirectory("outside-database")
        let path = elsewhere.url.appendingPathComponent("ledger.sqlite").path
        var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
        configuration.database = .sqlite(path: path)
        let live = try await LiveKioskServer.start(configuration: configuration, logger: LogRecorder().logger)
        await live.stop()
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
            #expect(mode.map { $0.intValue & 0o077 } == 0, "\(file): \(String(describing: mode))")
        }
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
