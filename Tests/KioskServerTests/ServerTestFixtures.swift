import Foundation
import KioskStoreTestSupport

@testable import KioskServer

/// Shared helpers for the server unit tests: temporary folders, product folders, a settable clock (the log recorder is
/// ``LogRecorder``, shared with the end-to-end tests).
enum ServerTestFixtures {
    /// 2026-11-01T00:00:00Z.
    static let november2026 = VerificationFixtures.november2026

    /// An `Info.json` document as text.
    static func infoJSON(
        id: String, type: String = "non_consumable", title: String = "A title", version: String = "1.0",
        publishedAt: String? = nil, subscriptionPeriod: String? = nil
    ) -> String {
        var fields: [String: String] = ["product_id": id, "type": type, "title": title, "content_version": version]
        if let publishedAt { fields["published_at"] = publishedAt }
        if let subscriptionPeriod { fields["subscription_period"] = subscriptionPeriod }
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

extension ServerConfiguration {
    /// A server for a test: an ephemeral port, `content` and `data` as its folders, no periodic reload, and the
    /// tests' long wait for a PostgreSQL connection (``TestDatabase/connectionWait``).
    static func forTests(content: URL, data: URL) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.contentDirectory = content
        configuration.dataDirectory = data
        configuration.reloadInterval = .zero
        configuration.databaseWait = TestDatabase.connectionWait
        return configuration
    }
}

/// A temporary directory, removed when the value is released.
final class ServerTestDirectory: @unchecked Sendable {  // Sendable: immutable after init.
    let url: URL

    init(_ label: String = "kiosk-server-tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.path }

    /// The URL of a relative path inside the directory.
    func url(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    /// Writes a file (creating intermediate folders) and returns its URL.
    @discardableResult
    func write(_ relative: String, _ data: Data) throws -> URL {
        let target = url(relative)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target)
        return target
    }

    @discardableResult
    func write(_ relative: String, _ text: String) throws -> URL { try write(relative, Data(text.utf8)) }

    /// Makes a folder (and its parents).
    func makeFolder(_ relative: String) throws {
        try FileManager.default.createDirectory(at: url(relative), withIntermediateDirectories: true)
    }

    /// Creates a symbolic link at `relative` pointing at `destination`.
    func symlink(_ relative: String, to destination: String) throws {
        let target = url(relative)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: target.path, withDestinationPath: destination)
    }

    /// Writes `<id>/Info.json` and the given files below `<id>/` (paths such as `Contents/a.pdf`).
    func writeProduct(
        id: String, type: String = "non_consumable", version: String = "1.0", publishedAt: String? = nil,
        subscriptionPeriod: String? = nil, files: [String: Data] = [:]
    ) throws {
        try write(
            "\(id)/Info.json",
            ServerTestFixtures.infoJSON(
                id: id, type: type, version: version, publishedAt: publishedAt, subscriptionPeriod: subscriptionPeriod))
        for (path, data) in files { try write("\(id)/\(path)", data) }
    }

    /// Sets a file's modification date.
    func setModified(_ relative: String, to date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url(relative).path)
    }
}

/// The settable clock the unit tests inject: the server's ``ManualClock``.
typealias ServerTestClock = ManualClock

extension ManualClock {
    /// A `now` closure reading this clock.
    var closure: @Sendable () -> Date { { [self] in self.now } }
}
