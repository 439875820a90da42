import ArgumentParser
import Foundation
import KioskServer
import Logging

/// `kiosk content`: work with content folders.
struct ContentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "content",
        abstract: "Work with content folders.",
        subcommands: [Check.self, Push.self]
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

    /// `kiosk content push [DIR] --endpoint URL --bucket NAME …`.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload each product's current version to an S3-compatible store.",
            discussion: """
                Uploads every file of each product's current version to <prefix>/<product_id>/<content_version>/\
                <path> in the bucket, so that versions never overwrite each other, each with its SHA-256 as \
                x-amz-meta-sha256 (the store checks the bytes against it). An object already there with the same \
                SHA-256 is skipped: pushing again uploads only what changed. The credentials come from the \
                environment only (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary ones, \
                AWS_SESSION_TOKEN), never from an option, which ps would show. Exits with 1 when a product folder \
                has a problem (the others are pushed) or an upload fails.

                Examples:
                  kiosk content push ./content --endpoint https://s3.eu-west-1.amazonaws.com --region eu-west-1 \
                    --bucket acme-kiosk --prefix content
                  kiosk content push --endpoint http://127.0.0.1:9000 --bucket kiosk --product com.acme.issue.12
                """
        )

        @Argument(help: "The content folder.") var directory = "./content"
        @Option(help: "The store's endpoint, http(s)://host[:port] (AWS: https://s3.<region>.amazonaws.com).")
        var endpoint: String
        @Option(help: "The region requests are signed for.") var region = "us-east-1"
        @Option(help: "The bucket.") var bucket: String
        @Option(help: "The key prefix (none: the bucket's root).") var prefix = ""
        @Option(help: "path (https://host/bucket/key, any store) or virtual (https://bucket.host/key).")
        var addressing: S3Location.AddressingStyle = .path
        @Option(name: .customLong("product"), help: "Push only this product (repeat for several; default: all).")
        var products: [String] = []
        @Option(help: "How many uploads run at once.") var concurrency = 4
        @Option(
            name: .customLong("part-size"),
            help: "Files over this many MiB go in a multipart upload, in parts of that size (5 to 5120).")
        var partSizeMiB = 64

        func validate() throws {
            guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency is 1 to 64.") }
            guard (5...5120).contains(partSizeMiB) else { throw ValidationError("--part-size is 5 to 5120 (MiB).") }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let keyID = environment["AWS_ACCESS_KEY_ID"], !keyID.isEmpty,
                let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
            else {
                throw ValidationError("Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN).")
            }
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            let location: S3Location
            do {
                guard let url = URL(string: endpoint) else { throw S3SigningError.invalidEndpoint }
                location = try S3Location(endpoint: url, region: region, bucket: bucket, addressingStyle: addressing)
            } catch let error as S3SigningError {
                throw ValidationError("\(error).")
            }
            let push = ContentPush(
                store: S3ObjectStore(
                    signer: SigV4Signer(
                        location: location,
                        credentials: S3Credentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: token))),
                prefix: prefix, concurrency: concurrency, partSize: Int64(partSizeMiB) << 20)

            var logger = Logger(label: "kiosk.content")
            logger.logLevel = .critical
            let snapshot = await ContentCatalog(
                contentDirectory: URL(fileURLWithPath: directory), dataDirectory: nil, logger: logger
            ).snapshot
            let unknown = products.filter { snapshot.products[$0] == nil }
            guard unknown.isEmpty else {
                throw ValidationError("No such product in \(directory): \(unknown.joined(separator: ", ")).")
            }
            var failed = !snapshot.problems.isEmpty
            for problem in snapshot.problems {
                FileHandle.standardError.write(Data("problem: \(problem)\n".utf8))
            }
            var total = ContentPush.Report()
            for product in snapshot.ordered where products.isEmpty || products.contains(product.info.productID) {
                let name = "\(product.info.productID) \(product.info.contentVersion)"
                do {
                    let report = try await push.push(product)
                    total.add(report)
                    print("\(name): \(Self.summary(report))")
                } catch {
                    failed = true
                    FileHandle.standardError.write(Data("error: \(name): \(error)\n".utf8))
                }
            }
            print("\(Self.summary(total)), in \(bucket)")
            if failed { throw ExitCode(1) }
        }

        /// "3 (1.2 MB) uploaded, 0 already there".
        static func summary(_ report: ContentPush.Report) -> String {
            func amount(_ count: Int, _ bytes: Int64) -> String {
                count == 0 ? "0" : "\(count) (\(ByteCountText.file(bytes)))"
            }
            return "\(amount(report.pushed, report.pushedBytes)) uploaded, "
                + "\(amount(report.skipped, report.skippedBytes)) already there"
        }
    }
}

extension S3Location.AddressingStyle: ExpressibleByArgument {}
