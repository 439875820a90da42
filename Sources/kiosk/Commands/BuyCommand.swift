import ArgumentParser
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `kiosk buy`: buy a product from a server's sandbox store and print the receipt.
struct BuyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "buy",
        abstract: "Buy a product from the sandbox store and print the receipt (base64) or the signed transaction (JWS).",
        discussion: """
            The receipt lists all of the sandbox user's purchases, like an App Store app receipt. The transaction \
            ID goes to standard error.

            Examples:
              kiosk buy com.example.kiosk.magazine.2026-11 > receipt.txt
              kiosk buy com.example.kiosk.coins --quantity 3 --user alice --server http://127.0.0.1:8080
              kiosk buy com.example.kiosk.book.swift-server-guide --signed > transaction.jws
            """
    )

    @Argument(help: "The product ID to buy.") var productID: String
    @Option(help: "The Kiosk server.") var server = "http://127.0.0.1:8080"
    @Option(help: "The sandbox user buying.") var user: String?
    @Option(help: "How many (consumables only).") var quantity: Int?
    @Flag(help: "Print the StoreKit 2 signed transaction (JWS) instead of the receipt.") var signed = false

    func run() async throws {
        guard let base = URL(string: server), base.scheme != nil else {
            throw ValidationError("'\(server)' is not a URL.")
        }
        var request = URLRequest(url: base.appendingPathComponent("sandbox/purchases"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try KioskJSON.encode(SandboxPurchaseRequest(productID: productID, quantity: quantity, user: user))
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 201 else {
            let message = (try? KioskJSON.decode(APIErrorEnvelope.self, from: data))
                .map { "\($0.error.message) (\($0.error.code))" } ?? "HTTP \(status)"
            FileHandle.standardError.write(Data("kiosk buy: \(TerminalText.escaped(message))\n".utf8))
            throw ExitCode(1)
        }
        guard let purchase = try? KioskJSON.decode(SandboxPurchaseResponse.self, from: data) else {
            FileHandle.standardError.write(Data("kiosk buy: the sandbox store's answer could not be read\n".utf8))
            throw ExitCode(1)
        }
        let bought = "bought \(purchase.productID): transaction \(purchase.transactionID)"
        FileHandle.standardError.write(Data("\(TerminalText.escaped(bought, allowsNewline: false))\n".utf8))
        if signed {
            guard let jws = purchase.signedTransaction else {
                let message = "kiosk buy: the server's sandbox store does not sign transactions\n"
                FileHandle.standardError.write(Data(message.utf8))
                throw ExitCode(1)
            }
            print(TerminalText.escaped(jws, allowsNewline: false))
        } else {
            print(TerminalText.escaped(purchase.receiptData, allowsNewline: false))
        }
    }
}
