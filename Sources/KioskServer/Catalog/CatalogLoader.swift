import Foundation
import KioskCore
import KioskStore
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a content folder into a ``CatalogSnapshot``: parses every `Info.json`, walks `Contents/`, and hashes files
/// (and cuts them into chunks) through the ``HashCache``. Blocking file I/O: call it off the cooperative thread pool.
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
        let (products, problems) = scan(cache: &cache)
        return CatalogSnapshot(products: products, problems: problems)
    }

    /// Reads the folder into products and problems, without building a snapshot (encoding the catalog), so that a
    /// reload that finds nothing changed stops here.
    ///
    /// A product equal to its entry in `previous` is returned as that entry, sharing its storage, so that a reload
    /// holds one copy of the unchanged products' file lists, not two.
    func scan(
        cache: inout HashCache, previous: CatalogSnapshot? = nil
    ) -> (products: [CatalogProduct], problems: [ContentProblem]) {
        let root = contentDirectory.standardizedFileURL
        guard let folders = Self.directoryEntries(atPath: root.path) else {
            return ([], [ContentProblem(folder: root.path, field: nil, message: "the content folder cannot be read")])
        }
        var products: [CatalogProduct] = []
        var problems: [ContentProblem] = []
        var liveInfos = Set<String>()
        for folder in folders.sorted() where !folder.hasPrefix(".") {
            let folderURL = root.appendingPathComponent(folder, isDirectory: true)
            let directory = folderURL.path
            switch Self.fileKind(atPath: directory)?.kind {
            case .directory: break
            case .symbolicLink:
                problems.append(
                    ContentProblem(folder: folder, field: nil, message: "is a symbolic link and is not served"))
                continue
            default: continue
            }
            let infoPath = directory + "/Info.json"
            liveInfos.insert(infoPath)
            guard let parsed = cache.productInfo(atPath: infoPath, folder: folder) else {
                problems.append(
                    ContentProblem(folder: folder, field: nil, message: "Info.json is missing or unreadable"))
                continue
            }
            switch parsed {
            case .failure(let problem):
                problems.append(problem)
            case .success(let info):
                let found = Self.contentFiles(in: directory, problems: &problems, folder: folder)
                var files: [ManifestFile] = []
                files.reserveCapacity(found.count)
                var failed = false
                for (relative, absolute, identity) in found {
                    do {
                        let hashes = try cache.hashes(for: HashCache.Key(path: absolute, identity: identity))
                        files.append(
                            ManifestFile(
                                path: relative, directory: directory, digest: hashes.digest, chunks: hashes.chunks,
                                identity: identity))
                    } catch {
                        problems.append(
                            ContentProblem(folder: folder, field: nil, message: "\(relative) cannot be read"))
                        failed = true
                        break
                    }
                }
                guard !failed else { continue }
                if let known = previous?.products[info.productID], known.info == info, known.files == files {
                    products.append(known)
                } else {
                    products.append(CatalogProduct(info: info, files: files))
                }
            }
        }
        cache.retainLookedUp()
        cache.retainInfos(only: liveInfos)
        problems += Self.unlockProblems(products)
        return (products, problems)
    }

    /// The regular files below `<product>/Contents`, as (`Contents/…` path, absolute path, identity), in path
    /// order. Hidden files are skipped silently; symbolic links and unsafe names are reported and skipped. Each file
    /// is looked at with one `lstat`, whose result is its identity.
    private static func contentFiles(
        in productFolder: String, problems: inout [ContentProblem], folder: String
    ) -> [(String, String, FileIdentity)] {
        let contents = productFolder + "/Contents"
        switch fileKind(atPath: contents)?.kind {
        case .directory: break
        case .symbolicLink:
            problems.append(
                ContentProblem(folder: folder, field: nil, message: "Contents is a symbolic link and is not served"))
            return []
        default: return []
        }
        var result: [(String, String, FileIdentity)] = []
        var pending = [("Contents", contents)]
        while let (relative, absolute) = pending.popLast() {
            guard let names = directoryEntries(atPath: absolute) else { continue }
            for name in names where !name.hasPrefix(".") {
                let childRelative = relative + "/" + name
                let childAbsolute = absolute + "/" + name
                let found = fileKind(atPath: childAbsolute)
                switch found?.kind {
                case .directory:
                    pending.append((childRelative, childAbsolute))
                case .regular:
                    if let identity = found?.identity, Identifiers.isValidFilePath(childRelative) {
                        result.append((childRelative, childAbsolute, identity))
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

    /// What is at `path` (links not followed), with its identity; nil when nothing is.
    static func fileKind(atPath path: String) -> (kind: FileKind, identity: FileIdentity)? {
        var info = CStat()
        guard lstat(path, &info) == 0 else { return nil }
        let kind: FileKind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        return (kind, FileIdentity(info))
    }

    /// The names in a directory (without `.` and `..`), unsorted; nil when it cannot be read. `readdir` directly:
    /// a reload lists every product folder, and Foundation's listing costs several times more.
    static func directoryEntries(atPath path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
