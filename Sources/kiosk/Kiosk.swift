import ArgumentParser

/// The `kiosk` command-line tool: run the server, buy in the sandbox store, list and download products.
@main
struct Kiosk: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiosk",
        abstract: "Kiosk: receipt-gated content delivery for in-app purchases.",
        discussion: """
            Run the server with `kiosk serve`, buy from its sandbox store with `kiosk buy`, list the catalog with \
            `kiosk products` and download a purchased product with `kiosk get`.
            """,
        version: "0.1.0",
        subcommands: [
            ServeCommand.self, BuyCommand.self, ContentCommand.self, ProductsCommand.self, GetCommand.self,
        ]
    )
}
