import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

@testable import KioskServer

enum CatalogTestFixtures {
    static let abcDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let poisonedDigest = String(repeating: "0", count: 64)

    static func load(_ directory: ServerTestDirectory, cache: inout HashCache) -> CatalogSnapshot {
        CatalogLoader(contentDirectory: directory.url, hashCacheURL: nil).load(cache: &cache)
    }

    static func load(_ directory: ServerTestDirectory) -> CatalogSnapshot {
        var cache = HashCache()
        return load(directory, cache: &cache)
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).hexString }

    /// Writes a hash cache file holding one entry per file, each with `digest` and no chunk list.
    static func writeCache(to url: URL, files: [ManifestFile], digest: String) throws {
        let lines = files.map {
            let id = $0.identity
            return "\(digest) \(id.size) \(id.modifiedNanoseconds) \(id.changedNanoseconds) \(id.inode) \(id.device) - "
                + $0.absolutePath
        }
        try Data(([HashCache.header] + lines).joined(separator: "\n").utf8).write(to: url)
    }

    /// A file's modification time, to the nanosecond.
    static func modificationTime(_ url: URL) throws -> timespec {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
        return info.st_mtim
    }

    /// A file's status-change time, to the nanosecond.
    static func statusChangeTime(_ url: URL) throws -> timespec {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
        return info.st_ctim
    }

    /// Sets a file's modification time to the nanosecond (as `cp -p` and `rsync -t` do).
    static func setModificationTime(_ time: timespec, of url: URL) throws {
        let times = [time, time]
        guard utimensat(AT_FDCWD, url.path, times, 0) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Deterministic pseudo-random bytes.
    static func bytes(count: Int, seed: UInt64) -> Data {
        var state = seed
        var data = Data(capacity: count)
        for _ in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            data.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return data
    }
}

@Suite("Catalog loading")
struct CatalogLoaderTests {
    typealias F = CatalogTestFixtures

    // MARK: Folders

    @Test func badFoldersAreReportedAndSkippedWhileGoodOnesLoad() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("a".utf8)])
        try content.write("com.b/Info.json", "{")
        try content.write("com.c/Info.json", ServerTestFixtures.infoJSON(id: "com.x"))
        try content.writeProduct(id: "com.d", type: "consumable")
        try content.write("com.e/Contents/file.pdf", "no Info.json here")
        try content.write(".hidden/Info.json", "{ not read")
        try content.write("README.txt", "not a product folder")

        let snapshot = F.load(content)
        #expect(Set(snapshot.products.keys) == ["com.a", "com.d"])
        #expect(snapshot.ordered.map(\.info.productID) == ["com.a", "com.d"])
        #expect(snapshot.problems.map(\.folder) == ["com.b", "com.c", "com.e"])
        let byFolder = Dictionary(uniqueKeysWithValues: snapshot.problems.map { ($0.folder, $0) })
        #expect(byFolder["com.b"]?.message.contains("not valid JSON") == true)
        #expect(byFolder["com.c"]?.field == "product_id")
        #expect(byFolder["com.e"]?.message == "Info.json is missing or unreadable")
        #expect(snapshot.products["com.a"]?.files.map(\.path) == ["Contents/a.pdf"])
    }

    @Test func missingContentFolderGivesAnEmptyCatalogWithOneProblem() throws {
        let parent = try ServerTestDirectory("catalog")
        var cache = HashCache()
        let snapshot = CatalogLoader(contentDirectory: parent.url("absent"), hashCacheURL: nil).load(cache: &cache)
        #expect(snapshot.products.isEmpty)
        #expect(snapshot.problems.count == 1)
        #expect(snapshot.problems.first?.message == "the content folder cannot be read")
    }

    @Test func emptyContentFolderGivesAnEmptyCatalogWithoutProblems() throws {
        let content = try ServerTestDirectory("catalog")
        let snapshot = F.load(content)
        #expect(snapshot.products.isEmpty)
        #expect(snapshot.problems.isEmpty)
        #expect(snapshot.catalog(ids: nil).products.isEmpty)
    }

    // MARK: Files

    @Test func nestedFilesAreListedInPathOrder() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(
            id: "com.a",
            files: [
                "Contents/z.pdf": Data(count: 3), "Contents/a/b/file": Data(count: 5),
                "Contents/a/c.txt": Data(count: 7),
                "Contents/a/b/c/d/e/deep.bin": Data(count: 11),
            ])
        let product = try #require(F.load(content).products["com.a"])
        #expect(
            product.files.map(\.path) == [
                "Contents/a/b/c/d/e/deep.bin", "Contents/a/b/file", "Contents/a/c.txt", "Contents/z.pdf",
            ])
        #expect(product.files.map(\.length) == [11, 5, 7, 3])
        #expect(product.contentLength == 26)
        #expect(product.product.fileCount == 4)
        #expect(product.product.contentLength == 26)
        for file in product.files {
            #expect(file.absolutePath.hasSuffix("/com.a/" + file.path))
            #expect(FileManager.default.fileExists(atPath: file.absolutePath))
            #expect(product.file(atPath: file.path) == file)
        }
        #expect(product.file(atPath: "Contents/missing") == nil)
        #expect(product.file(atPath: "Info.json") == nil, "Info.json is not content")
    }

    @Test func hiddenFilesAndFoldersAreIgnoredSilently() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(
            id: "com.a",
            files: [
                "Contents/visible.pdf": Data("v".utf8), "Contents/.DS_Store": Data("x".utf8),
                "Contents/.git/objects/ab": Data("x".utf8), "Contents/sub/.hidden": Data("x".utf8),
            ])
        let snapshot = F.load(content)
        #expect(snapshot.products["com.a"]?.files.map(\.path) == ["Contents/visible.pdf"])
        #expect(snapshot.problems.isEmpty)
    }

    @Test func symbolicLinksInsideContentsAreReportedAndNotServed() throws {
        let content = try ServerTestDirectory("catalog")
        let outside = try ServerTestDirectory("outside")
        try outside.write("secret.txt", "secret")
        try content.writeProduct(id: "com.a", files: ["Contents/ok.pdf": Data("ok".utf8)])
        try content.symlink("com.a/Contents/file-link", to: outside.url("secret.txt").path)
        try content.symlink("com.a/Contents/dir-link", to: outside.path)
        try content.symlink("com.a/Contents/dangling", to: "/nonexistent/\(UUID())")
        try content.symlink("com.a/Contents/relative", to: "ok.pdf")

        let snapshot = F.load(content)
        let product = try #require(snapshot.products["com.a"], "the product itself still loads")
        #expect(product.files.map(\.path) == ["Contents/ok.pdf"])
        let messages = snapshot.problems.filter { $0.folder == "com.a" }.map(\.message).sorted()
        #expect(
            messages == [
                "Contents/dangling is a symbolic link and is not served",
                "Contents/dir-link is a symbolic link and is not served",
                "Contents/file-link is a symbolic link and is not served",
                "Contents/relative is a symbolic link and is not served",
            ])
    }

    @Test func symlinkedProductOrContentsFolderIsNotServed() throws {
        let content = try ServerTestDirectory("catalog")
        let outside = try ServerTestDirectory("outside")
        try outside.writeProduct(id: "com.linked", files: ["Contents/secret.pdf": Data("s".utf8)])
        try content.symlink("com.linked", to: outside.url("com.linked").path)
        try outside.write("elsewhere/secret.pdf", "s")
        try content.write("com.b/Info.json", ServerTestFixtures.infoJSON(id: "com.b"))
        try content.symlink("com.b/Contents", to: outside.url("elsewhere").path)

        let snapshot = F.load(content)
        #expect(snapshot.products["com.linked"] == nil)
        #expect(snapshot.products["com.b"]?.files.isEmpty == true)
        #expect(snapshot.products.values.allSatisfy { $0.files.allSatisfy { !$0.path.contains("secret") } })
        #expect(snapshot.problems.contains { $0.folder == "com.linked" })
        #expect(snapshot.problems.contains { $0.folder == "com.b" })
    }

    @Test(arguments: [
        "café.pdf", "what?.pdf", "a#b", "a:b", "tab\there", "quote\"d", "semi;colon", "star*", "back\\slash",
        "per%cent",
    ])
    func filesWithUnsafeNamesAreReportedAndNotServed(name: String) throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(
            id: "com.a", files: ["Contents/ok.pdf": Data("ok".utf8), "Contents/\(name)": Data("x".utf8)])
        let snapshot = F.load(content)
        #expect(snapshot.products["com.a"]?.files.map(\.path) == ["Contents/ok.pdf"])
        #expect(snapshot.problems.map(\.message) == ["Contents/\(name) has an unsafe name and is not served"])
        #expect(snapshot.problems.map(\.folder) == ["com.a"])
    }

    @Test func filesInsideAnUnsafelyNamedFolderAreReported() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.a", files: ["Contents/bad?dir/x.pdf": Data("x".utf8)])
        let snapshot = F.load(content)
        #expect(snapshot.products["com.a"]?.files.isEmpty == true)
        #expect(snapshot.problems.map(\.message) == ["Contents/bad?dir/x.pdf has an unsafe name and is not served"])
    }

    @Test func namesWithSpacesPlusCommasAndParenthesesAreServed() throws {
        let content = try ServerTestDirectory("catalog")
        let name = "Contents/Issue 1 (final), v+2.pdf"
        try content.writeProduct(id: "com.a", files: [name: Data("x".utf8)])
        let snapshot = F.load(content)
        #expect(snapshot.products["com.a"]?.files.map(\.path) == [name])
        #expect(snapshot.problems.isEmpty)
    }

    @Test func productWithoutContentsHasNoFiles() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.none")
        try content.writeProduct(id: "com.empty")
        try content.makeFolder("com.empty/Contents")
        try content.writeProduct(id: "com.file", files: ["Contents": Data("a file, not a folder".utf8)])
        let snapshot = F.load(content)
        for id in ["com.none", "com.empty", "com.file"] {
            let product = try #require(snapshot.products[id])
            #expect(product.files.isEmpty)
            #expect(product.contentLength == 0)
            #expect(product.product.fileCount == 0)
        }
    }

    // MARK: Hashes

    @Test func hashesAreTheSHA256OfTheFiles() throws {
        let content = try ServerTestDirectory("catalog")
        let big = F.bytes(count: 3 << 20 + 17, seed: 7)  // more than one 1 MiB read
        try content.writeProduct(
            id: "com.a",
            files: ["Contents/abc.txt": Data("abc".utf8), "Contents/empty": Data(), "Contents/big.bin": big])
        let product = try #require(F.load(content).products["com.a"])
        let byPath = Dictionary(uniqueKeysWithValues: product.files.map { ($0.path, $0) })
        #expect(byPath["Contents/abc.txt"]?.sha256 == F.abcDigest)
        #expect(byPath["Contents/empty"]?.sha256 == F.emptyDigest)
        #expect(byPath["Contents/big.bin"]?.sha256 == F.sha256(big))
        #expect(byPath["Contents/big.bin"]?.length == Int64(big.count))

        let abc = try #require(byPath["Contents/abc.txt"])
        #expect(abc.entityTag.headerValue == "\"\(F.abcDigest)\"")
        let digestBytes = Data(SHA256.hash(data: Data("abc".utf8)))
        #expect(abc.representationDigest == "sha-256=:\(digestBytes.base64EncodedString()):")

        // And they agree with the coreutils tool, where it is installed.
        let tool = "/usr/bin/sha256sum"
        if FileManager.default.isExecutableFile(atPath: tool) {
            for file in product.files {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = [file.absolutePath]
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                let digest = String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init)
                #expect(digest == file.sha256, "\(file.path)")
            }
        }
    }

    @Test func hashFileThrowsForAMissingFile() {
        #expect(throws: (any Error).self) { try HashCache.hashFile(atPath: "/nonexistent/\(UUID())") }
    }

    @Test func secondLoadWithTheCacheHashesNothing() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(
            id: "com.a", files: ["Contents/a.pdf": Data("a".utf8), "Contents/b/c.pdf": Data("c".utf8)])
        try content.writeProduct(id: "com.b", files: ["Contents/x": Data("x".utf8)])

        var cache = HashCache()
        let first = F.load(content, cache: &cache)
        #expect(cache.isDirty, "the first load hashes every file")
        let cacheURL = data.url("hash-cache.txt")
        try cache.save(to: cacheURL)
        #expect(!cache.isDirty)

        let second = F.load(content, cache: &cache)
        #expect(!cache.isDirty, "nothing was hashed or dropped")
        #expect(second.products == first.products)

        var reloaded = HashCache(contentsOf: cacheURL)
        #expect(!reloaded.isDirty)
        let third = F.load(content, cache: &reloaded)
        #expect(!reloaded.isDirty, "the saved cache covers every file")
        #expect(third.products == first.products)
    }

    @Test func cachedDigestIsReusedForTheSamePathSizeAndTime() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let files = try #require(F.load(content).products["com.a"]?.files)
        let cacheURL = data.url("hash-cache.txt")
        try F.writeCache(to: cacheURL, files: files, digest: F.poisonedDigest)

        var cache = HashCache(contentsOf: cacheURL)
        let snapshot = F.load(content, cache: &cache)
        #expect(snapshot.products["com.a"]?.files.first?.sha256 == F.poisonedDigest, "the cached digest was used")
        #expect(!cache.isDirty)
    }

    @Test func changingAFilesSizeRehashesIt() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let files = try #require(F.load(content).products["com.a"]?.files)
        let cacheURL = data.url("hash-cache.txt")
        try F.writeCache(to: cacheURL, files: files, digest: F.poisonedDigest)
        let modified = files[0].modifiedNanoseconds

        try content.write("com.a/Contents/a.pdf", "abcd")
        // Keep the modification time, so only the size tells the change.
        try content.setModified(
            "com.a/Contents/a.pdf", to: Date(timeIntervalSince1970: TimeInterval(modified) / 1_000_000_000))
        var cache = HashCache(contentsOf: cacheURL)
        let file = try #require(F.load(content, cache: &cache).products["com.a"]?.files.first)
        #expect(file.length == 4)
        #expect(file.sha256 == F.sha256(Data("abcd".utf8)))
        #expect(cache.isDirty)
    }

    @Test func changingOnlyAFilesModificationTimeRehashesIt() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        try content.setModified("com.a/Contents/a.pdf", to: Date(timeIntervalSince1970: 1_700_000_000))
        let files = try #require(F.load(content).products["com.a"]?.files)
        #expect(files[0].modifiedNanoseconds == 1_700_000_000_000_000_000)
        let cacheURL = data.url("hash-cache.txt")
        try F.writeCache(to: cacheURL, files: files, digest: F.poisonedDigest)

        // Same size, different bytes, new time: as an editor saving in place would.
        try content.write("com.a/Contents/a.pdf", "xyz")
        try content.setModified("com.a/Contents/a.pdf", to: Date(timeIntervalSince1970: 1_700_000_001))
        var cache = HashCache(contentsOf: cacheURL)
        let file = try #require(F.load(content, cache: &cache).products["com.a"]?.files.first)
        #expect(file.sha256 == F.sha256(Data("xyz".utf8)))
        #expect(file.modifiedNanoseconds == 1_700_000_001_000_000_000)
        #expect(cache.isDirty)
    }

    /// `rsync -t` and tar: new bytes of the same size in a new file renamed over the old one, with the old
    /// modification time. Only the file's identity (its inode) tells the change, across a restart too.
    @Test func aFileReplacedWithTheSameSizeAndModificationTimeIsRehashed() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let original = try F.modificationTime(content.url("com.a/Contents/a.pdf"))
        let cacheURL = data.url("hash-cache.txt")
        var cache = HashCache()
        let before = try #require(F.load(content, cache: &cache).products["com.a"]?.files.first)
        try cache.save(to: cacheURL)

        try content.write("com.a/Contents/a.pdf.tmp", "xyz")
        try F.setModificationTime(original, of: content.url("com.a/Contents/a.pdf.tmp"))
        #expect(rename(content.url("com.a/Contents/a.pdf.tmp").path, content.url("com.a/Contents/a.pdf").path) == 0)

        var restarted = HashCache(contentsOf: cacheURL)
        let after = try #require(F.load(content, cache: &restarted).products["com.a"]?.files.first)
        #expect(after.modifiedNanoseconds == before.modifiedNanoseconds, "the test kept the modification time")
        #expect(after.sha256 == F.sha256(Data("xyz".utf8)))
    }

    /// `cp -p`: new bytes of the same size written into the same file, the modification time put back. Only the
    /// status-change time (which no one can set back) tells the change.
    @Test func aFileRewrittenInPlaceWithItsModificationTimePutBackIsRehashed() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let path = content.url("com.a/Contents/a.pdf")
        let original = try F.modificationTime(path)
        let changed = try F.statusChangeTime(path)
        var cache = HashCache()
        let before = try #require(F.load(content, cache: &cache).products["com.a"]?.files.first)

        let handle = try FileHandle(forWritingTo: path)
        try handle.write(contentsOf: Data("xyz".utf8))
        try handle.close()
        // The kernel stamps the status-change time at its clock tick: touch until the tick has moved on (bounded).
        for _ in 0..<1_000 {
            try F.setModificationTime(original, of: path)
            let now = try F.statusChangeTime(path)
            if now.tv_sec != changed.tv_sec || now.tv_nsec != changed.tv_nsec { break }
            usleep(1_000)
        }
        let after = try #require(F.load(content, cache: &cache).products["com.a"]?.files.first)
        #expect(after.modifiedNanoseconds == before.modifiedNanoseconds, "the test kept the modification time")
        #expect(after.sha256 == F.sha256(Data("xyz".utf8)))
    }

    @Test func deletedFilesLeaveTheCache() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(
            id: "com.a", files: ["Contents/keep.pdf": Data("k".utf8), "Contents/drop.pdf": Data("d".utf8)])
        var cache = HashCache()
        _ = F.load(content, cache: &cache)
        let cacheURL = data.url("hash-cache.txt")
        try cache.save(to: cacheURL)

        try FileManager.default.removeItem(at: content.url("com.a/Contents/drop.pdf"))
        _ = F.load(content, cache: &cache)
        #expect(cache.isDirty, "the dropped entry changes the cache")
        try cache.save(to: cacheURL)
        let saved = String(decoding: try Data(contentsOf: cacheURL), as: UTF8.self).split(separator: "\n").dropFirst()
        let paths = saved.compactMap { $0.split(separator: " ", maxSplits: 7).last.map(String.init) }
        #expect(paths.count == 1)
        #expect(paths.first?.hasSuffix("/Contents/keep.pdf") == true)
    }

    @Test func aReloadSharesTheUnchangedProductsOfThePreviousSnapshot() throws {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.a", files: ["Contents/a": Data("a".utf8)])
        try content.writeProduct(id: "com.b", files: ["Contents/b": Data("b".utf8)])
        let loader = CatalogLoader(contentDirectory: content.url, hashCacheURL: nil)
        var cache = HashCache()
        let first = loader.load(cache: &cache)
        try content.write("com.b/Contents/b", Data("changed".utf8))
        let (products, _) = loader.scan(cache: &cache, previous: first)
        let byID = Dictionary(uniqueKeysWithValues: products.map { ($0.info.productID, $0) })
        func storage(_ product: CatalogProduct?) -> UnsafeRawPointer? {
            product?.files.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
        }
        #expect(byID["com.a"] == first.products["com.a"])
        #expect(storage(byID["com.a"]) == storage(first.products["com.a"]), "the unchanged product is shared")
        #expect(byID["com.b"]?.files.first?.sha256 == F.sha256(Data("changed".utf8)))
        #expect(storage(byID["com.b"]) != storage(first.products["com.b"]))
    }

    @Test func cacheFileOfSeveralMebibytesRoundTrips() throws {
        // Over 1 MiB of lines, so the file is read and written in more than one chunk and lines cross chunk ends.
        let data = try ServerTestDirectory("data")
        let count = 10_000
        var lines = [HashCache.header]
        for index in 0..<count {
            let digest = F.sha256(Data("\(index)".utf8))
            lines.append(
                "\(digest) \(index) \(index + 1) \(index + 2) \(index + 3) 7 - /content/p/Contents/file \(index)")
        }
        lines.insert("not a line", at: 2)
        lines.insert("\(String(repeating: "G", count: 64)) 1 2 3 4 5 - /content/p/Contents/bad-digest", at: 3)
        let text = lines.joined(separator: "\n")
        #expect(text.utf8.count > 1 << 20)
        try data.write("hash-cache.txt", text)

        var cache = HashCache(contentsOf: data.url("hash-cache.txt"))
        func key(_ index: Int) -> HashCache.Key {
            HashCache.Key(
                path: "/content/p/Contents/file \(index)",
                identity: FileIdentity(
                    size: Int64(index), modifiedNanoseconds: Int64(index + 1), changedNanoseconds: Int64(index + 2),
                    inode: UInt64(index + 3), device: 7))
        }
        for index in [0, 1, 4_321, count - 1] {
            #expect(try cache.hashes(for: key(index)).digest.hexString == F.sha256(Data("\(index)".utf8)))
        }
        #expect(!cache.isDirty, "every entry came from the file, the last line included")

        var written = HashCache(contentsOf: data.url("hash-cache.txt"))
        try written.save(to: data.url("copy.txt"))
        let attributes = try FileManager.default.attributesOfItem(atPath: data.url("copy.txt").path)
        #expect(try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777 == 0o600)
        let saved = try String(contentsOf: data.url("copy.txt"), encoding: .utf8).split(separator: "\n")
        #expect(saved.first.map(String.init) == HashCache.header)
        #expect(
            Set(saved.dropFirst().map(String.init))
                == Set(lines.dropFirst(1).filter { $0.count > 64 && !$0.hasPrefix("G") }))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: data.url.path)
        #expect(leftovers.sorted() == ["copy.txt", "hash-cache.txt"], "no temporary file is left")
    }

    @Test(arguments: ["", "not json", "{}", #"[{"path": 1}]"#])
    func unreadableCacheFileIsAnEmptyCache(contents: String) throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/abc": Data("abc".utf8)])
        try data.write("hash-cache.txt", contents)
        var cache = HashCache(contentsOf: data.url("hash-cache.txt"))
        #expect(!cache.isDirty)
        let snapshot = F.load(content, cache: &cache)
        #expect(snapshot.products["com.a"]?.files.first?.sha256 == F.abcDigest)
        #expect(cache.isDirty)
    }

    // MARK: Catalog answers

    static func orderingFolder() throws -> ServerTestDirectory {
        let content = try ServerTestDirectory("catalog")
        try content.writeProduct(id: "com.old", publishedAt: "2026-10-01T00:00:00Z")
        try content.writeProduct(
            id: "com.b", publishedAt: "2026-11-01T00:00:00Z", files: ["Contents/x": Data(count: 10)])
        try content.writeProduct(id: "com.a", type: "consumable", publishedAt: "2026-11-01T00:00:00Z")
        try content.writeProduct(id: "com.none2")
        try content.writeProduct(id: "com.none1")
        try content.writeProduct(
            id: "com.new", type: "auto_renewable", publishedAt: "2026-12-01T00:00:00Z", subscriptionPeriod: "P1M")
        return content
    }

    @Test func catalogIsNewestFirstThenByID() throws {
        let snapshot = F.load(try Self.orderingFolder())
        let expected = ["com.new", "com.a", "com.b", "com.old", "com.none1", "com.none2"]
        #expect(snapshot.ordered.map(\.info.productID) == expected)
        let response = snapshot.catalog(ids: nil)
        #expect(response.products.map(\.id) == expected)
        #expect(response.invalidProductIDs.isEmpty)
    }

    @Test func catalogEntriesCarryTheProductFields() throws {
        let snapshot = F.load(try Self.orderingFolder())
        let b = try #require(snapshot.catalog(ids: ["com.b"]).products.first)
        #expect(b.id == "com.b")
        #expect(b.type == .nonConsumable)
        #expect(b.title == "A title")
        #expect(b.contentVersion == "1.0")
        #expect(b.contentLength == 10)
        #expect(b.fileCount == 1)
        #expect(b.publishedAt == ServerTestFixtures.november2026)
        #expect(snapshot.catalog(ids: ["com.new"]).products.first?.type == .autoRenewable)
    }

    /// The answers encoded once per snapshot are, byte for byte, the wire encoding of the typed answers.
    @Test func encodedAnswersAreTheWireEncodingOfTheTypedOnes() throws {
        let snapshot = F.load(try Self.orderingFolder())
        #expect(Data(buffer: snapshot.encoded.all.json) == (try KioskJSON.encode(snapshot.catalog(ids: nil))))
        for ids in [["com.b", "nope", "com.b", "com.new", "other"], [], ["x"], snapshot.ordered.map(\.info.productID)] {
            let encoded = snapshot.encoded.answer(ids: ids)
            #expect(Data(buffer: encoded.json) == (try KioskJSON.encode(snapshot.catalog(ids: ids))), "\(ids)")
        }
        let one = try #require(snapshot.encoded.product(id: "com.b"))
        #expect(Data(buffer: one.json) == (try KioskJSON.encode(snapshot.products["com.b"]!.product)))
        #expect(snapshot.encoded.product(id: "nope") == nil)
        #expect(one.entityTag != snapshot.encoded.all.entityTag)
    }

    @Test func catalogForIDsKeepsRequestOrderAndListsUnknownIDsOnce() throws {
        let snapshot = F.load(try Self.orderingFolder())
        let response = snapshot.catalog(ids: ["com.b", "nope", "com.b", "com.new", "nope", "other", "COM.B"])
        #expect(response.products.map(\.id) == ["com.b", "com.new"])
        #expect(response.invalidProductIDs == ["nope", "other", "COM.B"])

        let empty = snapshot.catalog(ids: [])
        #expect(empty.products.isEmpty)
        #expect(empty.invalidProductIDs.isEmpty)

        let unknown = snapshot.catalog(ids: ["x"])
        #expect(unknown.products.isEmpty)
        #expect(unknown.invalidProductIDs == ["x"])
    }

    // MARK: The live catalog

    /// Many requests noticing the same changed file must not start a full load each: callers that arrive while a
    /// load runs share the one load queued behind it, and every caller gets a snapshot read after its call began.
    @Test func concurrentReloadsShareTheLoadsInFlight() async throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let log = LogRecorder()
        let catalog = await ContentCatalog(contentDirectory: content.url, dataDirectory: data.url, logger: log.logger)
        let generation = catalog.generation

        try content.write("com.a/Contents/a.pdf", "abcd")
        let digests = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<16 {
                group.addTask { await catalog.reload().products["com.a"]?.files.first?.sha256 }
            }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(digests == Array(repeating: F.sha256(Data("abcd".utf8)), count: 16), "each saw the change")
        #expect(log.count(of: "catalog loaded") <= 3, "the start, then at most one load running and one queued")
        #expect(catalog.generation > generation)
        #expect(catalog.snapshot.products["com.a"]?.files.first?.sha256 == F.sha256(Data("abcd".utf8)))
    }

    @Test func reloadIfChangedSwapsOnlyWhenSomethingChanged() async throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let log = LogRecorder()
        let catalog = await ContentCatalog(contentDirectory: content.url, dataDirectory: data.url, logger: log.logger)
        let swaps = { log.count(of: "catalog loaded") }
        #expect(swaps() == 1)
        #expect(catalog.snapshot.products["com.a"]?.files.first?.sha256 == F.abcDigest)
        #expect(FileManager.default.fileExists(atPath: data.url("hash-cache.txt").path))

        await catalog.reloadIfChanged()
        #expect(swaps() == 1, "nothing changed, nothing swapped")

        try content.write("com.a/Contents/a.pdf", "abcd")
        await catalog.reloadIfChanged()
        #expect(swaps() == 2)
        #expect(catalog.snapshot.products["com.a"]?.files.first?.sha256 == F.sha256(Data("abcd".utf8)))

        await catalog.reloadIfChanged()
        #expect(swaps() == 2)

        try content.write("com.bad/Info.json", "[]")
        await catalog.reloadIfChanged()
        #expect(swaps() == 3, "a new problem is a change")
        #expect(catalog.snapshot.problems.map(\.folder) == ["com.bad"])

        try content.writeProduct(id: "com.new")
        await catalog.reloadIfChanged()
        #expect(swaps() == 4)
        #expect(catalog.snapshot.products["com.new"] != nil)

        try FileManager.default.removeItem(at: content.url("com.new"))
        await catalog.reloadIfChanged()
        #expect(swaps() == 5)
        #expect(catalog.snapshot.products["com.new"] == nil)

        await catalog.reload()
        #expect(swaps() == 6, "reload always swaps")
    }

    @Test func liveCatalogReusesTheHashCacheKeptInTheDataDirectory() async throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        try content.writeProduct(id: "com.a", files: ["Contents/a.pdf": Data("abc".utf8)])
        let first = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: data.url, logger: LogRecorder().logger)
        let files = try #require(first.snapshot.products["com.a"]?.files)
        try F.writeCache(to: data.url("hash-cache.txt"), files: files, digest: F.poisonedDigest)

        let second = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: data.url, logger: LogRecorder().logger)
        #expect(second.snapshot.products["com.a"]?.files.first?.sha256 == F.poisonedDigest)

        // Without a data directory nothing is cached: the file is hashed.
        let third = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
        #expect(third.snapshot.products["com.a"]?.files.first?.sha256 == F.abcDigest)
    }
}
