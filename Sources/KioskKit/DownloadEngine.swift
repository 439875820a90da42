import Crypto
import Foundation
import KioskCore

/// What a running download knows and the journal keeps between state changes: the grant and each file's fate.
struct DownloadWork: Sendable, Hashable {
    var productID: String
    var proof: PurchaseProof
    var grant: Grant?
    /// When ``grant`` arrived (it is trusted for at most ``GrantLimits/maximumTrust`` after that).
    var grantReceivedAt: Date?
    var entityTags: [String: String]
    var verifiedPaths: Set<String>
    var integrityFailures: [String: Int]
    /// The product's installed content when the transfer started (not journaled): when the grant names the same
    /// version, there is nothing to download.
    var installed: InstalledContent? = nil
}

/// How the engine reports to its owner. All calls come from the download's own task.
struct EngineHooks: Sendable {
    /// The work changed in a way worth journaling (new grant, file started, file verified).
    var checkpoint: @Sendable (DownloadWork) async -> Void
    /// Bytes on disk / bytes expected. Called from URLSession's delegate queue, at most ~20 times a second.
    var progress: @Sendable (_ written: Int64, _ expected: Int64) -> Void
    /// Every file is here: checking and moving into place begins. Returns `false` when the owner no longer
    /// wants the download to go on (paused or cancelled meanwhile).
    var verifying: @Sendable () async -> Bool
}

/// Runs one download to completion: grant, per-file ranged fetches into `.part` files, verification,
/// grant renewal keeping valid bytes, atomic install. No state machine decisions are taken here: every failure
/// is thrown, typed, to the ``KioskClient``, which feeds it to the ``DownloadStateMachine``.
struct DownloadEngine: Sendable {
    let api: APIClient
    let fetcher: FileFetcher
    let layout: CacheLayout
    /// Free bytes on the cache volume (`nil` when unknown).
    let availableSpace: @Sendable (URL) -> Int64?

    private var fileManager: FileManager { .default }

    /// Downloads and installs `work.productID`. Returns the installed content.
    func run(_ initial: DownloadWork, hooks: EngineHooks) async throws -> InstalledContent {
        var work = initial
        let staging = layout.staging(productID: work.productID)
        var renewalsWithoutProgress = 0
        outer: while true {
            try Task.checkCancellation()
            if !Self.isTrusted(work) { try await renewGrant(&work, hooks: hooks) }
            guard let grant = work.grant else { throw KioskError.invalidResponse("no grant") }
            if let installed = work.installed, installed.version == grant.contentVersion,
               case .intact = ContentReconciler.check(installed, fileSize: ContentReconciler.diskFileSize) {
                try? fileManager.removeItem(at: staging)
                return installed
            }
            try createDirectory(staging)
            removeStrays(in: staging, grant: grant)

            // Disk space: the bytes still to fetch must fit.
            let onDisk = bytesOnDisk(work)
            hooks.progress(onDisk, grant.totalLength)
            let needed = grant.totalLength - onDisk
            if needed > 0, let available = availableSpace(layout.root), available < needed {
                throw KioskError.insufficientStorage(needed: needed, available: available)
            }

            for file in grant.files where !work.verifiedPaths.contains(file.path) {
                do {
                    try await fetchAndVerify(file, work: &work, hooks: hooks)
                    renewalsWithoutProgress = 0
                } catch let error as KioskError where error.needsNewGrant || error == Self.contentChanged {
                    // Token expired, version gone, or bytes that did not match: ask again. The new grant keeps
                    // every byte still valid (GrantRenewal) and tells whether the file changed on the server.
                    renewalsWithoutProgress += 1
                    guard renewalsWithoutProgress <= 4 else { throw error }
                    try await renewGrant(&work, hooks: hooks)
                    continue outer
                }
            }
            guard await hooks.verifying() else { throw CancellationError() }
            try Task.checkCancellation()
            return try install(work, grant: grant)
        }
    }

    /// Thrown by ``fetchAndVerify`` after a first hash mismatch: the grant is renewed before the retry, in case
    /// the file changed on the server.
    static let contentChanged = KioskError.invalidResponse("content did not match the grant; renewing it")

    /// Whether the work's grant may still be used: present, before its `expires_at`, and received less than
    /// ``GrantLimits/maximumTrust`` ago.
    static func isTrusted(_ work: DownloadWork, now: Date = Date()) -> Bool {
        guard let grant = work.grant else { return false }
        return GrantValidation.trustedUntil(grant, receivedAt: work.grantReceivedAt) > now
    }

    /// Bytes of the current version on disk: verified files plus parts.
    func bytesOnDisk(_ work: DownloadWork) -> Int64 {
        guard let grant = work.grant else { return 0 }
        return grant.files.reduce(Int64(0)) { total, file in
            if work.verifiedPaths.contains(file.path) { return total + file.length }
            let part = layout.partFile(productID: work.productID, path: file.path)
            return total + min(file.length, ContentReconciler.diskFileSize(part) ?? 0)
        }
    }

    /// Asks for a grant and applies the byte-keeping rule against the previous one.
    private func renewGrant(_ work: inout DownloadWork, hooks: EngineHooks) async throws {
        let old = work.grant
        let new = try await api.grant(productID: work.productID, proof: work.proof)
        if let old {
            let plan = GrantRenewal.plan(old: old, new: new)
            for (path, disposition) in plan where disposition == .discard {
                try? fileManager.removeItem(at: layout.partFile(productID: work.productID, path: path))
                try? fileManager.removeItem(at: layout.stagedFile(productID: work.productID, path: path))
                work.verifiedPaths.remove(path)
                work.entityTags[path] = nil
                work.integrityFailures[path] = nil
            }
        }
        let newPaths = Set(new.files.map(\.path))
        work.verifiedPaths.formIntersection(newPaths)
        work.entityTags = work.entityTags.filter { newPaths.contains($0.key) }
        work.grant = new
        work.grantReceivedAt = Date()
        await hooks.checkpoint(work)
    }

    /// Fetches one file (resuming its part) and verifies it; a wrong hash deletes it and tries once more.
    private func fetchAndVerify(_ file: GrantFile, work: inout DownloadWork, hooks: EngineHooks) async throws {
        guard let grant = work.grant else { throw KioskError.invalidResponse("no grant") }
        let url = try api.contentURL(for: file, in: grant)
        let part = layout.partFile(productID: work.productID, path: file.path)
        let final = layout.stagedFile(productID: work.productID, path: file.path)
        try createDirectory(part.deletingLastPathComponent())

        // A crash between "renamed" and "journaled": the verified file is already in place.
        if fileManager.fileExists(atPath: final.path) {
            if ContentReconciler.diskFileSize(final) == file.length,
               (try? FileHashing.sha256(of: final)) == file.sha256.lowercased() {
                work.verifiedPaths.insert(file.path)
                await hooks.checkpoint(work)
                return
            }
            try? fileManager.removeItem(at: final)
        }

        let base = bytesOnDisk(work) - min(file.length, ContentReconciler.diskFileSize(part) ?? 0)
        while true {
            try Task.checkCancellation()
            var have = ContentReconciler.diskFileSize(part) ?? 0
            if have > file.length {
                try? fileManager.removeItem(at: part)
                have = 0
            }
            var hasher = SHA256()
            if have > 0 {
                do {
                    have = try FileHashing.update(&hasher, withContentsOf: part, upTo: have)
                } catch {
                    throw KioskError.fileSystem(path: part.lastPathComponent, underlying: "\(error)")
                }
            }
            let digest: String
            if have == file.length {
                digest = hasher.finalize().hexString
            } else {
                if !Self.isTrusted(work) {
                    throw KioskError.server(status: 401, code: APIErrorCode.tokenExpired.rawValue,
                                            message: "The grant is about to expire.", retryAfter: nil)
                }
                let request = FetchRequest(
                    url: url, token: grant.token, offset: have, expectedLength: file.length,
                    entityTag: work.entityTags[file.path], partURL: part)
                let expected = grant.totalLength
                hooks.progress(base + have, expected)  // after re-hashing: the speed is measured from here
                let outcome: FetchOutcome
                do {
                    let snapshot = work
                    let path = file.path
                    outcome = try await fetcher.fetch(request, hasher: hasher, entityTagSeen: { tag in
                        var updated = snapshot
                        updated.entityTags[path] = tag
                        await hooks.checkpoint(updated)
                    }) { written in
                        hooks.progress(base + written, expected)
                    }
                } catch let error as KioskError {
                    if error.apiCode == .rangeNotSatisfiable {
                        try? fileManager.removeItem(at: part)  // the part is longer than the file: start over
                        work.entityTags[file.path] = nil
                        try recordIntegrityFailure(file, work: &work, actual: "")
                        continue
                    }
                    throw error
                }
                if let tag = outcome.entityTag, tag != work.entityTags[file.path] {
                    work.entityTags[file.path] = tag
                }
                digest = outcome.sha256
            }
            if digest == file.sha256.lowercased() {
                guard rename(part, to: final) else {
                    throw KioskError.fileSystem(path: file.path, underlying: "could not move the verified file")
                }
                work.verifiedPaths.insert(file.path)
                work.integrityFailures[file.path] = nil
                await hooks.checkpoint(work)
                return
            }
            // Wrong bytes: delete them, retry once, then fail with an integrity error.
            try? fileManager.removeItem(at: part)
            work.entityTags[file.path] = nil
            try recordIntegrityFailure(file, work: &work, actual: digest)
            await hooks.checkpoint(work)
            throw Self.contentChanged
        }
    }

    private func recordIntegrityFailure(_ file: GrantFile, work: inout DownloadWork, actual: String) throws {
        let failures = (work.integrityFailures[file.path] ?? 0) + 1
        work.integrityFailures[file.path] = failures
        if failures >= 2 {
            work.integrityFailures[file.path] = 0
            throw KioskError.integrity(productID: work.productID, path: file.path,
                                       expectedSHA256: file.sha256, actualSHA256: actual)
        }
    }

    /// Checks the staged files once more and moves the version folder into `Content/` with one rename.
    private func install(_ work: DownloadWork, grant: Grant) throws -> InstalledContent {
        let staging = layout.staging(productID: work.productID)
        for file in grant.files {
            let staged = layout.stagedFile(productID: work.productID, path: file.path)
            guard ContentReconciler.diskFileSize(staged) == file.length else {
                throw KioskError.fileSystem(path: file.path, underlying: "the verified file vanished before install")
            }
        }
        removeStrays(in: staging, grant: grant, keepParts: false)
        let destination = layout.content(productID: work.productID, version: grant.contentVersion)
        try createDirectory(destination.deletingLastPathComponent())
        if fileManager.fileExists(atPath: destination.path) {
            let trash = layout.root.appendingPathComponent("Trash-\(UUID().uuidString)", isDirectory: true)
            _ = rename(destination, to: trash)
            try? fileManager.removeItem(at: trash)
        }
        if grant.files.isEmpty { try createDirectory(staging) }
        guard rename(staging, to: destination) else {
            throw KioskError.fileSystem(path: destination.path, underlying: "could not move the content into place")
        }
        Journal.syncDirectory(destination.deletingLastPathComponent())
        ContentReconciler.excludeFromBackup(destination)
        return InstalledContent(
            productID: work.productID, version: grant.contentVersion, directory: destination,
            files: grant.files.map { InstalledFile(path: $0.path, length: $0.length, sha256: $0.sha256.lowercased()) },
            installedAt: Date())
    }

    /// Deletes files in staging that the grant does not list (leftovers of an older version).
    private func removeStrays(in staging: URL, grant: Grant, keepParts: Bool = true) {
        var wanted = Set(grant.files.map(\.path))
        if keepParts { wanted.formUnion(grant.files.map { $0.path + ".part" }) }
        guard let enumerator = fileManager.enumerator(atPath: staging.path) else { return }
        var strays: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let url = staging.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               !wanted.contains(relative) {
                strays.append(relative)
            }
        }
        for relative in strays { try? fileManager.removeItem(at: staging.appendingPathComponent(relative)) }
    }

    private func createDirectory(_ url: URL) throws {
        try CacheFiles.createDirectory(url, under: layout.root)
    }

    /// POSIX rename (atomic within a volume).
    private func rename(_ from: URL, to: URL) -> Bool {
        from.withUnsafeFileSystemRepresentation { source in
            to.withUnsafeFileSystemRepresentation { target in
                guard let source, let target else { return false }
                return Foundation.rename(source, target) == 0
            }
        }
    }
}
