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

                Example:
                  kiosk content check ./content
                """
        )

        @Argument(help: "The content folder.") var directory = "./content"

        func run() async throws {
            var logger = Logger(label: "kiosk.content")
            logger.logLevel = .critical
            let catalog = await ContentCatalog(
                contentDirectory: URL(fileURLWithPath: directory), dataDirectory: nil, logger: logger)
            let snapshot = catalog.snapshot
            print("PRODUCT".padding(toLength: 44, withPad: " ", startingAt: 0), "TYPE".padding(toLength: 15, withPad: " ", startingAt: 0),
                  "VERSION".padding(toLength: 10, withPad: " ", startingAt: 0), "FILES".padding(toLength: 6, withPad: " ", startingAt: 0), "BYTES")
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
            for problem in snapshot.problems {
                FileHandle.standardError.write(Data("problem: \(problem)\n".utf8))
            }
            if !snapshot.problems.isEmpty {
                FileHandle.standardError.write(Data("\(snapshot.problems.count) problem(s) found\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
