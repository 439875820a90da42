import ArgumentParser

/// The `kiosk` command-line tool: run the server, buy in the sandbox store, list and download products.
struct Kiosk: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiosk",
        abstract: "Kiosk: receipt-gated content delivery for in-app purchases.",
        discussion: """
            Run the server with `kiosk serve`, buy from its sandbox store with `kiosk buy`, list the catalog with \
            `kiosk products` and download a purchased product with `kiosk get`. Test any client's downloads \
            against a folder under fault scenarios with `kiosk bench`.
            """,
        version: "0.1.0",
        subcommands: [
            ServeCommand.self, BuyCommand.self, ContentCommand.self, ProductsCommand.self, GetCommand.self,
            BenchCommand.self,
        ]
    )
}

/// The process's entry point: tunes the allocator for the command about to run, on the main thread before any
/// other thread exists, then runs it.
@main
enum KioskMain {
    static func main() async {
        let servers = [ServeCommand.configuration.commandName, BenchCommand.configuration.commandName]
        if !servers.contains(CommandLine.arguments.dropFirst().first) {
            MallocArenas.limitToOne()
        }
        await Kiosk.main()
    }
}
