import Foundation
import KioskCore
import Testing

@testable import KioskKit

extension HostileServerTests {
    // MARK: - #27 flaw 1: chunking a client cannot afford

    /// An update's grant whose `chunking.maximum` is 2^50, journaled (as it was before the grant's check, which let
    /// it through, aborted the update): the next launch of `kiosk get`, in a child process, used to abort too
    /// (`failed to allocate 1125899906842624 bytes`) with or without a server. Now the grant fails the launch's
    /// check, is dropped, and the update finishes with a fresh grant: 2.0 installed, exactly.
    @Test func aJournaledUpdateGrantWithAHugeChunkMaximumIsDroppedAtLaunchInsteadOfAborting() async throws {
        try await TestServer.with { server in
            let versions = UpdateEndToEndTests.Versions()
            let (proof, root, _, new, hashes) = try await UpdateEndToEndTests().installOldThenPublishNew(
                server, versions)
            guard case .receipt(let receipt) = proof else { return }
            var hostile = new
            hostile.chunking?.maximum = 1 << 50
            hostile.expiresAt = Date(timeIntervalSince1970: 4_070_908_800)
            let layout = CacheLayout(root: root)
            let journal = Journal(layout: layout)
            var (snapshot, _) = journal.load()
            snapshot.downloads.append(
                DownloadRecord(
                    id: DownloadID(), productID: UpdateEndToEndTests.product, receipt: receipt, priority: .normal,
                    sequence: snapshot.nextSequence, state: .active, attempt: 0, grant: hostile,
                    grantReceivedAt: Date(), entityTags: [:], verifiedPaths: [], integrityFailures: [:],
                    createdAt: Date()))
            snapshot.nextSequence += 1
            try journal.replace(with: snapshot)

            let outcome = try await ChildProcess.runKiosk(
                [
                    "get", UpdateEndToEndTests.product, "--receipt", "-", "--server", server.baseURL.absoluteString,
                    "--cache", root.path,
                ],
                input: Data(receipt.utf8))
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let folder = layout.content(productID: UpdateEndToEndTests.product, version: "2.0")
            #expect(UpdateEndToEndTests.files(in: folder) == Set(hashes.keys))
            for (path, hash) in hashes {
                #expect(try Support.sha256(of: folder.appendingPathComponent(path)) == hash, "\(path)")
            }
        }
    }
}
