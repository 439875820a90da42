import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

extension UpdateEndToEndTests {
    /// `update(…, keepingPrevious: true)`: 1.0 is moved to `Kept/` when 2.0 is installed, not deleted, even when the
    /// app was stopped in the middle and another client (which did not ask) finished the update. The kept folder is
    /// found with `keptVersions(of:)`, holds 1.0's exact files, and `removeKeptVersion` deletes it.
    @Test func anUpdateAskedToKeepThePreviousVersionKeepsItAcrossARelaunch() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, _, _, hashes) = try await installOldThenPublishNew(server, versions)
            let layout = CacheLayout(root: root)

            // Slow writes: the app is stopped while the update copies chunks.
            let first = try await makeClient(server.baseURL, root: root, writer: TestWriter.factory(delay: 0.02))
            let updating = Task { try await first.update(productID: Self.product, proof: proof, keepingPrevious: true) }
            try await Support.eventually("some chunks reused") {
                (await first.download(for: Self.product)?.progress.bytesReused ?? 0) > 4 << 20 + 4 << 20
            }
            await first.close()
            _ = await updating.result
            #expect(await first.installedContent(for: Self.product)?.version == "1.0", "the update was over")

            // Another client, which does not ask, finishes it: the request was journaled with the download.
            let second = try await makeClient(server.baseURL, root: root)
            let content = try await second.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(await second.installedContent(for: Self.product)?.version == "2.0")
            #expect(
                !FileManager.default.fileExists(atPath: layout.content(productID: Self.product, version: "1.0").path))

            let kept = await second.keptVersions(of: Self.product)
            #expect(kept.map(\.version) == ["1.0"])
            let folder = try #require(kept.first).directory
            #expect(folder.standardizedFileURL.path == layout.kept(productID: Self.product, version: "1.0").path)
            #expect(Self.files(in: folder) == Set(versions.old.keys))
            for (path, data) in versions.old {
                #expect(try Data(contentsOf: folder.appendingPathComponent(path)) == data, "\(path)")
            }

            try await second.removeKeptVersion(try #require(kept.first))
            #expect(await second.keptVersions(of: Self.product).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folder.path))
            await #expect(throws: KioskKit.KioskError.notFound(productID: Self.product)) {
                try await second.removeKeptVersion(try #require(kept.first))
            }
            await second.close()
        }
    }
}
