import ArgumentParser
import Foundation
import KioskCore
import KioskKit

/// `kiosk products`: lists the server's catalog.
struct ProductsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "products",
        abstract: "List the products a Kiosk server sells.",
        discussion: """
            Prints one row per product: identifier, type, content version, size, file count and title. \
            With --ids, only those products are listed and unknown identifiers are reported. Text from the \
            server is printed with control and bidirectional characters escaped (\\u{1B} in the table, \\u001B \
            in JSON). A plain http:// server must be on this machine unless --allow-insecure-http is given.

            Examples:
              kiosk products
              kiosk products --server http://127.0.0.1:8080 --ids com.example.kiosk.book.swift-server-guide
              kiosk products --json

            Exit codes: 0 success, 1 failure.
            """
    )

    @Option(help: "The Kiosk server.")
    var server: String = KioskClient.defaultServerURL.absoluteString

    @Option(help: "Comma-separated product identifiers to look up (default: the whole catalog).")
    var ids: String?

    @Option(
        help: ArgumentHelp(
            "The cache root, where the catalog is kept between runs (default: $XDG_CACHE_HOME/kiosk or ~/.cache/kiosk).",
            valueName: "dir"))
    var cache: String?

    @Flag(help: "Print the catalog answer as JSON instead of a table.")
    var json = false

    @Flag(
        name: .customLong("allow-insecure-http"),
        help:
            "Allow a plain http:// server that is not on this machine (receipts and tokens cross the network unencrypted)."
    )
    var allowInsecureHTTP = false

    func run() async throws {
        guard let serverURL = URL(string: server), serverURL.scheme != nil else {
            throw ValidationError("'\(server)' is not a URL.")
        }
        var configuration = KioskClient.Configuration()
        configuration.allowsInsecureHTTP = allowInsecureHTTP
        let root = cache.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? CacheLayout.defaultRoot
        let client = try await KioskClient(serverURL: serverURL, cacheRoot: root, configuration: configuration)
        defer { Task { await client.close() } }
        let catalog: CatalogResponse
        do {
            let wanted = ids.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            catalog = try await client.products(ids: wanted)
        } catch {
            FileHandle.standardError.write(Data("kiosk: \(TerminalText.escaped(error.description))\n".utf8))
            throw ExitCode(1)
        }
        if json {
            let encoder = KioskJSON.makeEncoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            print(TerminalText.escapedJSON(String(decoding: try encoder.encode(catalog), as: UTF8.self)))
            return
        }
        print(Self.table(catalog))
    }

    /// The catalog as an aligned text table. Every cell is server text, escaped to one safe line.
    static func table(_ catalog: CatalogResponse) -> String {
        var rows = [["PRODUCT", "TYPE", "VERSION", "SIZE", "FILES", "TITLE"]]
        for product in catalog.products {
            rows.append([
                product.id, product.type.rawValue, product.contentVersion,
                product.fileCount == 0
                    ? "-"
                    : ByteCountText.file(product.contentLength),
                String(product.fileCount), product.title,
            ])
        }
        rows = rows.map { row in row.map { TerminalText.escaped($0, allowsNewline: false) } }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.enumerated().map { index, cell in
                index == 5 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        if catalog.products.isEmpty { lines.append("(no products)") }
        if !catalog.invalidProductIDs.isEmpty {
            lines.append("")
            let unknown = catalog.invalidProductIDs.map { TerminalText.escaped($0, allowsNewline: false) }
            lines.append("Unknown product IDs: \(unknown.joined(separator: ", "))")
        }
        return lines.joined(separator: "\n")
    }
}
