import Foundation
import KioskServer
import Testing

@testable import kiosk

/// docs/configuration.md against what `kiosk serve` really takes: its `--help` (made from ``ServerSetting/all``,
/// the one list of settings, and the command's own `--log-level`) and each setting's environment variable. A new
/// option without its row, a row for an option that is gone, or a variable that differs fails here.
@Suite("The configuration reference follows kiosk serve")
struct ConfigurationReferenceTests {
    /// The rows of docs/configuration.md's tables, as their first two cells without backquotes: (`--option`,
    /// `VARIABLE`) for the options, (`VARIABLE`, meaning) for the secrets.
    static func rows() throws -> [(String, String)] {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { folder.deleteLastPathComponent() }
        let text = try String(contentsOf: folder.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
            guard line.hasPrefix("| `"), cells.count >= 4 else { return nil }
            return (cells[1], cells[2])
        }
    }

    /// The options `kiosk serve --help` lists.
    static var helpOptions: Set<String> {
        let help = ServeCommand.helpMessage(columns: 400)
        return Set(
            help.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let first = words.first, first.hasPrefix("--"), line.hasPrefix("  ") else { return nil }
                return String(first)
            }
        ).subtracting(["--help", "--version"])
    }

    @Test func everyOptionOfTheHelpHasItsRowAndEveryRowIsAnOption() throws {
        let documented = try Self.rows().map(\.0).filter { $0.hasPrefix("--") }
        #expect(Set(documented).count == documented.count, "an option documented twice")
        #expect(Set(documented) == Self.helpOptions)
    }

    @Test func theCommandTakesEverySettingThatHasAnOption() {
        let settings = Set(ServerSetting.all.filter(\.hasOption).map(\.option))
        #expect(Self.helpOptions == settings.union(["--log-level"]))
    }

    @Test func eachOptionsVariableIsTheOneItReads() throws {
        for (option, variable) in try Self.rows() where option.hasPrefix("--") {
            let setting = ServerSetting.all.first { $0.option == option }
            #expect(
                (setting?.environmentVariable ?? (option == "--log-level" ? "LOG_LEVEL" : nil)) == variable, "\(option)"
            )
        }
    }

    @Test func everySecretHasItsRow() throws {
        let variables = Set(
            try Self.rows().flatMap { $0.0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } })
        for setting in ServerSetting.all where !setting.hasOption {
            #expect(variables.contains(setting.environmentVariable), "\(setting.environmentVariable)")
        }
    }
}
