import Foundation
import KioskCore
import KioskServer
import Logging
import Testing

@testable import kiosk

/// #10, for publishers: `kiosk content check` says how much of a new version an app already holds, by chunk.
@Suite("Content check: what a new version shares with the previous one")
struct ContentVersionsTests {
    static let product = "com.example.kiosk.levels.pack1"

    /// A content folder in a temporary directory, with one product whose files are set per version.
    final class ContentFolder {
        let root: URL

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-versions-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        var content: URL { root.appendingPathComponent("content") }
        var data: URL { root.appendingPathComponent("data") }

        /// Makes the product's folder hold exactly `files` (paths under `Contents/`) at `version`.
        func publish(version: String, files: [String: [UInt8]]) throws {
            let folder = content.appendingPathComponent(ContentVersionsTests.product)
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("Contents"), withIntermediateDirectories: true)
            let info = """
                {"product_id": "\(ContentVersionsTests.product)", "type": "non_consumable", "title": "Levels", \
                "content_version": "\(version)"}
                """
            try Data(info.utf8).write(to: folder.appendingPathComponent("Info.json"))
            for (path, bytes) in files {
                let url = folder.appendingPathComponent("Contents/\(path)")
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(bytes).write(to: url)
            }
        }

        /// The product's version as the catalog loads it (files hashed and cut into chunks).
        func load() async throws -> ContentVersions.Version {
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let catalog = await ContentCatalog(contentDirectory: content, dataDirectory: nil, logger: logger)
            let product = try #require(catalog.snapshot.products[ContentVersionsTests.product])
            return ContentVersions.Version(product)
        }
    }

    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return generator.bytes(count)
    }

    @Test func anInsertionInAFileKeepsMostChunks() async throws {
        let folder = try ContentFolder()
        let level = Self.random(6 << 20, seed: 1)
        try folder.publish(version: "1.0", files: ["level.bin": level])
        let before = try await folder.load()
        var edited = level
        edited.insert(contentsOf: Self.random(64 << 10, seed: 2), at: 3 << 20)
        try folder.publish(version: "2.0", files: ["level.bin": edited])
        let after = try await folder.load()

        #expect(before.files[0].chunks.count > 2)
        let share = VersionShare(previous: before, current: after)
        #expect(share.totalBytes == Int64(edited.count))
        // The chunks around the insertion are new, at most two of at most 4 MiB, the rest is kept.
        #expect(share.sharedFraction > 0.5, "\(share)")
        #expect(share.fetchedBytes >= 64 << 10)
        #expect(share.fetchedBytes == share.totalBytes - share.sharedBytes)
        #expect(!share.defeatsDeltas)
        #expect(share.report(productID: Self.product, from: "1.0", to: "2.0").count == 1)
    }

    @Test func aRenamedFileIsShared() async throws {
        let folder = try ContentFolder()
        let big = Self.random(3 << 20, seed: 3)
        let small = Self.random(1000, seed: 4)
        try folder.publish(version: "1.0", files: ["a.bin": big, "notes.json": small])
        let before = try await folder.load()
        try folder.publish(version: "1.1", files: ["levels/b.bin": big, "read-me.json": small])
        let after = try await folder.load()

        let share = VersionShare(previous: before, current: after)
        #expect(share.sharedBytes == Int64(big.count + small.count))
        #expect(share.fetchedBytes == 0)
        #expect(share.keptPathCount == 0)
        #expect(
            share.report(productID: Self.product, from: "1.0", to: "1.1") == [
                "\(Self.product) 1.0 -> 1.1: shares 3146728 of 3146728 bytes (100.0 %) with 1.0 by chunk; "
                    + "an app updating from 1.0 fetches at most 0 bytes"
            ])
    }

    @Test func aRecompressedPackSharesNothingAndWarns() async throws {
        let folder = try ContentFolder()
        // A pack compressed or encrypted as a whole: after a one-byte edit of what it holds, every byte differs,
        // as with a new key (here: the same plaintext under another keystream).
        let plaintext = Self.random(5 << 20, seed: 5)
        let pack = { (seed: UInt64) in zip(plaintext, Self.random(plaintext.count, seed: seed)).map { $0 ^ $1 } }
        let manifest = Self.random(2000, seed: 7)
        try folder.publish(version: "1.0", files: ["pack.bin": pack(10), "manifest.json": manifest])
        let before = try await folder.load()
        try folder.publish(version: "2.0", files: ["pack.bin": pack(11), "manifest.json": manifest])
        let after = try await folder.load()

        let share = VersionShare(previous: before, current: after)
        #expect(share.sharedBytes == Int64(manifest.count))
        #expect(share.sharedFraction < 0.001)
        #expect(share.defeatsDeltas)
        let report = share.report(productID: Self.product, from: "1.0", to: "2.0")
        #expect(report.count == 2)
        #expect(
            report.last?.hasPrefix(
                "warning: \(Self.product) 2.0 shares almost nothing with 1.0 although 2 of 2 files kept their paths")
                == true)
    }

    @Test func smallFilesEditedThroughoutAreNotFlagged() async throws {
        let folder = try ContentFolder()
        try folder.publish(
            version: "1", files: ["a.json": Self.random(5000, seed: 1), "b.json": Self.random(9000, seed: 2)])
        let before = try await folder.load()
        try folder.publish(
            version: "2", files: ["a.json": Self.random(5000, seed: 3), "b.json": Self.random(9000, seed: 4)])
        let share = VersionShare(previous: before, current: try await folder.load())
        #expect(share.sharedBytes == 0)
        // Each file is one chunk: any edit replaces it whole, which says nothing about the pack format.
        #expect(!share.defeatsDeltas)
    }

    @Test func theRecordReadsBackAndRefusesADamagedFile() async throws {
        let folder = try ContentFolder()
        try folder.publish(
            version: "1.0", files: ["big.bin": Self.random(3 << 20, seed: 1), "empty": [], "s.txt": [1, 2, 3]])
        var record = ContentVersions()
        record.products[Self.product] = try await folder.load()
        let url = folder.data.appendingPathComponent(ContentVersions.fileName)
        try record.write(to: url)
        #expect(try ContentVersions(contentsOf: url) == record)
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try ContentVersions(contentsOf: folder.root.appendingPathComponent("none.txt")) == ContentVersions())

        let text = try String(contentsOf: url, encoding: .utf8)
        let damaged: [(String, String)] = [
            ("kiosk-hash-cache 2\n", "line 1: not a record of this release's format"),
            (text.replacingOccurrences(of: " 3\n", with: " 4\n"), "lists 4 files, the file ends before"),
            (String(text.dropLast(10)), "the last line is cut off"),
            (text.replacingOccurrences(of: "\n3:", with: "\nx:"), "line 5: expected '<length>:<sha256>,… <path>'"),
            (text.replacingOccurrences(of: "product ", with: "produce "), "line 2: expected 'product"),
        ]
        for (contents, message) in damaged {
            try Data(contents.utf8).write(to: url)
            let error = #expect(throws: ContentVersions.ReadError.self) { try ContentVersions(contentsOf: url) }
            #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
            #expect(error?.description.contains(url.path) == true)
        }
    }

    @Test func aProductSkippedForAProblemKeepsItsEntryAndAGoneOneIsForgotten() async throws {
        let folder = try ContentFolder()
        try folder.publish(version: "1.0", files: ["a.bin": Self.random(1000, seed: 1)])
        let recorded = try await folder.load()
        var record = ContentVersions()
        record.products[Self.product] = recorded
        record.products["com.example.kiosk.gone"] = ContentVersions.Version(contentVersion: "3", files: [])
        // The product's Info.json is broken for this check: it is skipped, with a problem naming its folder.
        try Data("{".utf8).write(
            to: folder.content.appendingPathComponent(Self.product).appendingPathComponent("Info.json"))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let snapshot = await ContentCatalog(contentDirectory: folder.content, dataDirectory: nil, logger: logger)
            .snapshot
        #expect(snapshot.products.isEmpty)
        #expect(record.updated(with: snapshot).products == [Self.product: recorded])
    }

    /// The `kiosk` executable built beside the test bundle.
    static let kiosk = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("kiosk")

    /// Runs `kiosk arguments…` and returns its exit status, standard output and standard error.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = kiosk
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    @Test func theCommandReportsAChangedVersionOnce() async throws {
        let folder = try ContentFolder()
        let level = Self.random(4 << 20, seed: 1)
        try folder.publish(version: "1.0", files: ["level.bin": level, "cover.png": Self.random(4000, seed: 2)])
        let check = ["content", "check", folder.content.path, "--data", folder.data.path]

        let first = try Self.run(check)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.split(separator: "\n").count == 3, "the table and the totals only:\n\(first.output)")
        let recorded = try ContentVersions(contentsOf: folder.data.appendingPathComponent(ContentVersions.fileName))
        #expect(recorded.products[Self.product]?.contentVersion == "1.0")

        // The same version again: nothing new.
        let same = try Self.run(check)
        #expect(same.output == first.output)

        var edited = level
        edited.replaceSubrange((2 << 20)..<((2 << 20) + 100), with: Self.random(100, seed: 3))
        try folder.publish(version: "1.1", files: ["level.bin": edited, "cover.png": Self.random(4000, seed: 2)])
        // --no-record compares and remembers nothing: the next check compares with 1.0 again.
        let dry = try Self.run(check + ["--no-record"])
        let second = try Self.run(check)
        #expect(second.status == 0, "\(second.error)")
        #expect(dry.output == second.output)
        let lines = second.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(second.output)")
        let share = try #require(lines.last)
        #expect(share.hasPrefix("\(Self.product) 1.0 -> 1.1: shares "))
        #expect(share.contains(" of \(level.count + 4000) bytes ("))
        #expect(share.contains("with 1.0 by chunk; an app updating from 1.0 fetches at most "))

        // Recorded: the next check finds 1.1 unchanged.
        let third = try Self.run(check)
        #expect(third.output.split(separator: "\n").count == 3)

        // A damaged record is an error, with the file named, and is left alone.
        let url = folder.data.appendingPathComponent(ContentVersions.fileName)
        try Data("garbage\n".utf8).write(to: url)
        let broken = try Self.run(check)
        #expect(broken.status == 1)
        #expect(broken.error.contains("error: \(url.path), line 1: not a record of this release's format"))
        #expect(try String(contentsOf: url, encoding: .utf8) == "garbage\n")
    }
}
