import Foundation
import KioskCore
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a content folder into a ``CatalogSnapshot``: parses every `Info.json`, walks `Contents/`, and hashes files
/// through the ``HashCache``. Blocking file I/O: call it off the cooperative thread pool.
struct CatalogLoader {
    let contentDirectory: URL
    let hashCacheURL: URL?

    /// Problems of subscriptions' `unlocks` rules that only the whole catalog shows: a product named in
    /// `product_ids` that does not exist, or an unlocked product without `published_at` (it can never fall inside
    /// a paid period). They are reported; the subscription is still served.
    static func unlockProblems(_ products: [CatalogProduct]) -> [ContentProblem] {
        let byID = Dictionary(products.map { ($0.info.productID, $0.info) }, uniquingKeysWith: { first, _ in first })
        var problems: [ContentProblem] = []
        for product in products {
            guard let rule = product.info.unlocks else { continue }
            let folder = product.info.productID
            for id in rule.productIDs where byID[id] == nil {
                problems.append(
                    ContentProblem(folder: folder, field: "unlocks", message: "'\(id)' is not in the catalog"))
            }
            for info in byID.values.sorted(by: { $0.productID < $1.productID })
            where info.productID != folder && rule.covers(info.productID) && info.publishedAt == nil {
                problems.append(
                    ContentProblem(
                        folder: folder, field: "unlocks",
                        message: "'\(info.productID)' has no published_at, so no paid period can unlock it"))
            }
        }
        return problems
    }

    /// Loads the folder. Bad product folders are reported as problems and skipped, never fatal; a missing content
    /// folder gives an empty catalog with one problem.
    func load(cache: inout HashCache) -> CatalogSnapshot {
        let fileManager = FileManager.default
        let root = contentDirectory.standardizedFileURL
        guard let folders = try? fileManager.contentsOfDirectory(atPath: root.path) else {
            return CatalogSnapshot(
                products: [],
                problems: [ContentProblem(folder: root.path, field: nil, message: "the content folder cannot be read")])
        }
        var products: [CatalogProduct] = []
        var problems: [ContentProblem] = []
        var liveKeys = Set<HashCache.Key>()
        for folder in folders.sorted() where !folder.hasPrefix(".") {
            let folderURL = root.appendingPathComponent(folder, isDirectory: true)
            switch Self.fileKind(atPath: folderURL.path) {
            case .directory: break
            case .symbolicLink:
                problems.append(
                    ContentProblem(folder: folder, field: nil, message: "is a symbolic link and is not served"))
                continue
            default: continue
            }
            let infoURL = folderURL.appendingPathComponent("Info.json")
            guard let data = fileManager.contents(atPath: infoURL.path) else {
                problems.append(
                    ContentProblem(folder: folder, field: nil, message: "Info.json is missing or unreadable"))
                continue
            }
            switch ProductInfo.parse(data, folder: folder) {
            case .failure(let problem):
                problems.append(problem)
            case .success(let info):
                var files: [ManifestFile] = []
                var failed = false
                for (relative, absolute) in Self.contentFiles(in: folderURL, problems: &problems, folder: folder) {
                    guard let identity = FileIdentity(atPath: absolute) else {
                        problems.append(
                            ContentProblem(folder: folder, field: nil, message: "\(relative) vanished while loading"))
                        failed = true
                        break
                    }
                    let key = HashCache.Key(path: absolute, identity: identity)
                    do {
                        let digest = try cache.sha256(for: key)
                        liveKeys.insert(key)
                        files.append(
                            ManifestFile(
                                path: relative, absolutePath: absolute, sha256: digest, identity: identity))
                    } catch {
                        problems.append(
                            ContentProblem(folder: folder, field: nil, message: "\(relative) cannot be read"))
                        failed = true
                        break
                    }
                }
                if !failed { products.append(CatalogProduct(info: info, files: files)) }
            }
        }
        cache.retain(only: liveKeys)
        problems += Self.unlockProblems(products)
        return CatalogSnapshot(products: products, problems: problems)
    }

    /// The regular files below `<product>/Contents`, as (`Contents/…` path, absolute path), in path order. Hidden
    /// files are skipped silently; symbolic links and unsafe names are reported and skipped.
    private static func contentFiles(
        in productFolder: URL, problems: inout [ContentProblem], folder: String
    ) -> [(String, String)] {
        let contents = productFolder.appendingPathComponent("Contents", isDirectory: true)
        switch fileKind(atPath: contents.path) {
        case .directory: break
        case .symbolicLink:
            problems.append(
                ContentProblem(folder: folder, field: nil, message: "Contents is a symbolic link and is not served"))
            return []
        default: return []
        }
        var result: [(String, String)] = []
        var pending = [("Contents", contents.path)]
        while let (relative, absolute) = pending.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: absolute) else { continue }
            for name in names where !name.hasPrefix(".") {
                let childRelative = relative + "/" + name
                let childAbsolute = absolute + "/" + name
                switch fileKind(atPath: childAbsolute) {
                case .directory:
                    pending.append((childRelative, childAbsolute))
                case .regular:
                    if Identifiers.isValidFilePath(childRelative) {
                        result.append((childRelative, childAbsolute))
                    } else {
                        problems.append(
                            ContentProblem(
                                folder: folder, field: nil,
                                message: "\(childRelative) has an unsafe name and is not served"))
                    }
                case .symbolicLink:
                    problems.append(
                        ContentProblem(
                            folder: folder, field: nil, message: "\(childRelative) is a symbolic link and is not served"
                        ))
                case .other, .none:
                    continue
                }
            }
        }
        return result.sorted { $0.0 < $1.0 }
    }

    enum FileKind { case regular, directory, symbolicLink, other }

    static func fileKind(atPath path: String) -> FileKind? {
        var info = CStat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }
}
