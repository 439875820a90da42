import Foundation
import Testing

/// botocore's vectors: the committed fixture, and fresh ones from `scripts/oracles/sigv4-vectors.py` when python3
/// can import botocore.
enum SigV4Oracle {
    /// The script, found from this file: Tests/KioskServerTests/Offload/ is three folders below the package.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/oracles/sigv4-vectors.py")

    /// `Fixtures/sigv4-vectors.json`, which the script wrote.
    static func fixture() throws -> SigV4Vector.Batch {
        let url = try #require(
            Bundle.module.url(forResource: "sigv4-vectors", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(SigV4Vector.Batch.self, from: Data(contentsOf: url))
    }

    /// Whether `python3 -c "import botocore"` succeeds here.
    static let isAvailable: Bool = (try? run(["-c", "import botocore"]).status) == 0

    /// `count` vectors for random keys, credentials, endpoints and dates drawn from `seed`.
    static func vectors(seed: Int, count: Int) throws -> SigV4Vector.Batch {
        let result = try run([script.path, "--random", String(seed), "--count", String(count)])
        try #require(result.status == 0, "\(String(decoding: result.error, as: UTF8.self))")
        return try JSONDecoder().decode(SigV4Vector.Batch.self, from: result.output)
    }

    /// Runs `python3 arguments…` and returns its exit status, standard output and standard error.
    private static func run(_ arguments: [String]) throws -> (status: Int32, output: Data, error: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, outputData, errorData)
    }
}
