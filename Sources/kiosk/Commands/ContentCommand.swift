import ArgumentParser
import Foundation
import KioskServer
import Logging

/// `kiosk content`: work with content folders.
struct ContentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "content",
        abstract: "Work with content folders.",
        subcommands: [Check.self]
    )

    /// `kiosk content check [DIR]`.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a content folder and print its catalog and manifest totals.",
            discussion: """
                Reads every <product_id>/Info.json, hashes every file under Contents/ and reports each problem with \
                its folder and field. Exits with 1 when any folder has a problem.

                It remembers each product's content_version and chunk manifest in the data folder \
                (\(ContentVersions.fileName)), and for each product whose content_version changed since the last \
                check it prints how much of the new version the previous one already holds, by chunk, and the \
                most an app updating from it would fetch; with a warning when almost nothing is shared although \
                most files kept their paths (whole-pack compression or encryption, which defeat delta updates). \
                Exits with 1 when that record cannot be read (it is then left as it is) or written.

                Examples:
                  kiosk content check ./content
                  kiosk content check ./content --data /var/lib/kiosk
                  kiosk content check ./content --no-record     # compare, remember nothing
                """
        )

        @Argument(help: "The content folder.") var directory = "./content"
        @Option(
            name: .customLong("data"),
            help:
                "The data folder where the versions are remembered, as kiosk serve's (default: ./.kiosk; env: KIOSK_DATA)."
        )
        var data: String?
        @Flag(name: .customLong("no-record"), help: "Compare with the last recorded versions without recording these.")
        var noRecord = false

        func run() async throws {
            var logger = Logger(label: "kiosk.content")
            logger.logLevel = .critical
            let catalog = await ContentCatalog(
                contentDirectory: URL(fileURLWithPath: directory), dataDirectory: nil, logger: logger)
            let snapshot = catalog.snapshot
            print(
                "PRODUCT".padding(toLength: 44, withPad: " ", startingAt: 0),
                "TYPE".padding(toLength: 15, withPad: " ", startingAt: 0),
                "VERSION".padding(toLength: 10, withPad: " ", startingAt: 0),
                "FILES".padding(toLength: 6, withPad: " ", startingAt: 0), "BYTES")
            for product in snapshot.ordered {
                print(
                    product.info.productID.padding(toLength: 44, withPad: " ", startingAt: 0),
                    product.info.type.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0),
                    product.info.contentVersion.padding(toLength: 10, withPad: " ", startingAt: 0),
                    String(product.files.count).padding(toLength: 6, withPad: " ", startingAt: 0),
                    product.contentLength)
            }
            let files = snapshot.ordered.reduce(0) { $0 + $1.files.count }
            let bytes = snapshot.ordered.reduce(Int64(0)) { $0 + $1.contentLength }
            print("\(snapshot.products.count) products, \(files) files, \(bytes) bytes")
            let recorded = compareWithRecord(snapshot)
            for problem in snapshot.problems {
                FileHandle.standardError.write(Data("problem: \(problem)\n".utf8))
            }
            if !snapshot.problems.isEmpty {
                FileHandle.standardError.write(Data("\(snapshot.problems.count) problem(s) found\n".utf8))
                throw ExitCode(1)
            }
            if !recorded { throw ExitCode(1) }
        }

        /// The record of the versions checked last, in the data folder.
        var recordURL: URL {
            let folder = data ?? ProcessInfo.processInfo.environment["KIOSK_DATA"] ?? ".kiosk"
            return URL(fileURLWithPath: folder).appendingPathComponent(ContentVersions.fileName)
        }

        /// Prints what each product whose version changed since the last check shares with its previous version,
        /// then records `snapshot`'s versions (unless `--no-record`). False, with the reason on standard error, when
        /// the record cannot be read or written.
        func compareWithRecord(_ snapshot: CatalogSnapshot) -> Bool {
            let url = recordURL
            let previous: ContentVersions
            do {
                previous = try ContentVersions(contentsOf: url)
            } catch {
                FileHandle.standardError.write(
                    Data("error: \(error); it was left as it is (remove it to start a new record)\n".utf8))
                return false
            }
            for product in snapshot.ordered {
                let id = product.info.productID
                guard let before = previous.products[id], before.contentVersion != product.info.contentVersion
                else { continue }
                let share = VersionShare(previous: before, current: ContentVersions.Version(product))
                for line in share.report(
                    productID: id, from: before.contentVersion, to: product.info.contentVersion)
                {
                    print(line)
                }
            }
            guard !noRecord else { return true }
            let next = previous.updated(with: snapshot)
            guard next != previous else { return true }
            do {
                try next.write(to: url)
            } catch {
                FileHandle.standardError.write(
                    Data(
                        "error: the versions could not be recorded in \(url.path): \(error.localizedDescription)\n".utf8
                    ))
                return false
            }
            return true
        }
    }
}
