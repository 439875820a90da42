import Crypto
import Foundation
import Testing

@testable import KioskServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The folder `kiosk bench` serves: only its regular files, never through a link, with their SHA-256 computed once
/// per version.
@Suite("Bench: the folder served")
struct BenchFolderTests {
    /// A temporary folder with `served/` (a file, a nested file, links in and out, a FIFO) and `outside/`.
    private struct Layout {
        let root: URL
        var served: URL { root.appendingPathComponent("served") }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-\(UUID().uuidString)")
            let manager = FileManager.default
            try manager.createDirectory(
                at: root.appendingPathComponent("served/levels/pack"), withIntermediateDirectories: true)
            try manager.createDirectory(at: root.appendingPathComponent("outside"), withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: root.appendingPathComponent("outside/secret.txt"))
            try Data("hello".utf8).write(to: served.appendingPathComponent("hello.txt"))
            try Data(repeating: 7, count: 3000).write(to: served.appendingPathComponent("levels/pack/level 1.pak"))
            try manager.createSymbolicLink(
                atPath: served.appendingPathComponent("out.txt").path, withDestinationPath: "../outside/secret.txt")
            try manager.createSymbolicLink(
                atPath: served.appendingPathComponent("in.txt").path, withDestinationPath: "hello.txt")
            try manager.createSymbolicLink(
                atPath: served.appendingPathComponent("outdir").path, withDestinationPath: "../outside")
            try manager.createSymbolicLink(
                atPath: served.appendingPathComponent("indir").path, withDestinationPath: "levels")
            #expect(mkfifo(served.appendingPathComponent("fifo").path, 0o600) == 0)
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func regularFilesAreServedWithTheirDigest() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let folder = try BenchFolder(path: layout.served.path)
        let hello = try #require(try await folder.file(at: "hello.txt"))
        let digest = Data(SHA256.hash(data: Data("hello".utf8)))
        #expect(hello.representationDigest == "sha-256=:\(digest.base64EncodedString()):")
        #expect(hello.entityTagHeader == "\"\(digest.map { String(format: "%02x", $0) }.joined())\"")
        #expect(hello.representation.length == 5)
        #expect(hello.contentType.hasPrefix("text/plain"))
        let nested = try #require(try await folder.file(at: "levels/pack/level 1.pak"))
        #expect(nested.representation.length == 3000)
    }

    @Test(arguments: [
        "out.txt", "in.txt", "outdir/secret.txt", "indir/pack/level 1.pak", "fifo", "levels",
        "levels/pack", "missing.txt", "hello.txt/x", "../outside/secret.txt", "levels/../hello.txt", "./hello.txt",
    ])
    func nothingButARegularFileReachedWithoutALinkIsServed(path: String) async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let folder = try BenchFolder(path: layout.served.path)
        #expect(try await folder.file(at: path) == nil)
    }

    @Test func aFileThatChangesIsHashedAgain() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let folder = try BenchFolder(path: layout.served.path)
        let before = try #require(try await folder.file(at: "hello.txt"))
        let again = try #require(try await folder.file(at: "hello.txt"))
        #expect(again.entityTagHeader == before.entityTagHeader)
        // A new version (another inode, as an editor's save or a copy gives it).
        let path = layout.served.appendingPathComponent("hello.txt")
        try FileManager.default.removeItem(at: path)
        try Data("hello, again".utf8).write(to: path)
        let after = try #require(try await folder.file(at: "hello.txt"))
        #expect(after.entityTagHeader != before.entityTagHeader)
        #expect(after.representation.length == 12)
    }

    @Test func manyRequestsForANewFileAgreeOnItsDigest() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let big = layout.served.appendingPathComponent("big.bin")
        try Data((0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: big)
        let folder = try BenchFolder(path: layout.served.path)
        let tags = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<16 { group.addTask { try await folder.file(at: "big.bin")?.entityTagHeader } }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(tags.count == 1 && tags.first! != nil)
    }

    /// The fault `changed`: the SHA-256 of the file with every byte XOR 0x5A, computed once per version of the file,
    /// however many requests ask at the same time.
    @Test func theChangedVersionsDigestIsComputedOncePerVersion() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let folder = try BenchFolder(path: layout.served.path)
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let path = layout.served.appendingPathComponent("big.bin")
        try Data(bytes).write(to: path)
        let file = try #require(try await folder.file(at: "big.bin"))
        let digests = try await withThrowingTaskGroup(of: KioskServer.SHA256Digest.self) { group in
            for _ in 0..<8 { group.addTask { try await folder.changedDigest(of: file) } }
            return try await group.reduce(into: Set<KioskServer.SHA256Digest>()) { $0.insert($1) }
        }
        let expected = Data(SHA256.hash(data: Data(bytes.map { $0 ^ 0x5A })))
        #expect(digests.map { Data($0.bytes) } == [expected])
        #expect(Data(try await folder.changedDigest(of: file).bytes) != Data(SHA256.hash(data: Data(bytes))))
        // A new version of the file: its changed version is another.
        try FileManager.default.removeItem(at: path)
        try Data(bytes.reversed()).write(to: path)
        let replaced = try #require(try await folder.file(at: "big.bin"))
        let again = Data(SHA256.hash(data: Data(bytes.reversed().map { $0 ^ 0x5A })))
        #expect(Data(try await folder.changedDigest(of: replaced).bytes) == again)
    }

    @Test func aFolderThatCannotBeOpenedIsRefused() throws {
        let layout = try Layout()
        defer { layout.remove() }
        #expect(throws: BenchFolder.Failure.self) {
            try BenchFolder(path: layout.served.appendingPathComponent("hello.txt").path)
        }
        #expect(throws: BenchFolder.Failure.self) {
            try BenchFolder(path: layout.root.appendingPathComponent("no").path)
        }
    }
}
