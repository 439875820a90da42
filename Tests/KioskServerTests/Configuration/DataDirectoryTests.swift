import Foundation
import Testing

@testable import KioskServer

@Suite("Data directory modes")
struct DataDirectoryTests {
    private func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func everythingInsideLosesGroupAndOtherBitsButLinkedFilesOutsideAreLeftAlone() throws {
        let root = try ServerTestDirectory("data-modes")
        let data = root.url("data")
        let outside = try root.write("outside.txt", "not ours")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: outside.path)
        try FileManager.default.createDirectory(
            at: data.appendingPathComponent("nested"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: data.path)
        let inner = data.appendingPathComponent("nested/kiosk.sqlite-wal")
        _ = FileManager.default.createFile(atPath: inner.path, contents: Data(), attributes: [.posixPermissions: 0o664])
        try FileManager.default.createSymbolicLink(
            atPath: data.appendingPathComponent("link").path, withDestinationPath: outside.path)

        try DataDirectory.prepare(data)

        #expect(try mode(data.path) == 0o700)
        #expect(try mode(data.appendingPathComponent("nested").path) == 0o700)
        #expect(try mode(inner.path) == 0o600)
        #expect(try mode(outside.path) == 0o644)
    }

    @Test func aNewFolderIsCreatedOwnerOnly() throws {
        let root = try ServerTestDirectory("data-new")
        let data = root.url("a/b/data")
        try DataDirectory.prepare(data)
        #expect(try mode(data.path) == 0o700)
    }
}
