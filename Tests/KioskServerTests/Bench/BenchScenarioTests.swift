import Foundation
import Testing

@testable import KioskServer

/// Scenarios: their steps per request, the built-in set, and scenario files (with the line of every mistake).
@Suite("Bench: scenarios")
struct BenchScenarioTests {
    @Test func eachRequestGetsItsStepThenNoneOrTheLastAgain() throws {
        let cut = try FaultSpec(parsing: "cut=30%")
        let busy = try FaultSpec(parsing: "status=503;retry-after=1")
        let scenario = BenchScenario(name: "x", description: "", steps: [cut, FaultSpec(), busy])
        #expect(scenario.faults(forRequest: 1) == cut)
        #expect(scenario.faults(forRequest: 2) == nil)
        #expect(scenario.faults(forRequest: 3) == busy)
        #expect(scenario.faults(forRequest: 4) == nil)
        var repeating = scenario
        repeating.afterSteps = .repeatLast
        #expect(repeating.faults(forRequest: 4) == busy)
        #expect(repeating.faults(forRequest: 400) == busy)
    }

    @Test func theBuiltInSetHasDistinctValidNamesAndOnlyRecoverableScenarios() throws {
        let names = BenchScenarios.builtIn.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy(BenchScenario.isValidName))
        #expect(!BenchScenario.isValidName("report") && !BenchScenario.isValidName(".x"))
        let cut = try FaultSpec(parsing: "cut=30%")
        #expect(BenchScenarios.builtInOnly["cut"]?.steps == [cut])
        #expect(BenchScenarios.builtInOnly["none"]?.faults(forRequest: 1) == nil)
        #expect(BenchScenarios.builtIn.allSatisfy { !$0.description.isEmpty })
        // A correct client ends with the bytes, except where following a redirect is the mistake, and where the
        // file changed for good.
        let errors = BenchScenarios.builtIn.filter { $0.outcome == .error }.map(\.name)
        #expect(errors == ["redirect-origin", "redirect-loop"])
        let changed = BenchScenarios.builtIn.filter { $0.outcome == .changedOrError }.map(\.name)
        #expect(changed == ["bytes-changed"])
    }

    /// The two faults of issue #33 that came last: a file that changes for good half way through a download, and a
    /// resumed range that comes gzipped.
    @Test func aChangedFileAndAGzippedRangeAreBuiltIn() throws {
        #expect(BenchScenarios.builtIn.count == 28)
        let changed = try #require(BenchScenarios.builtInOnly["bytes-changed"])
        #expect(changed.steps == [try FaultSpec(parsing: "cut=50%"), try FaultSpec(parsing: "changed")])
        #expect(changed.afterSteps == .repeatLast && changed.outcome == .changedOrError)
        // The file changed for good: every request after the cut gets the new version.
        #expect(changed.faults(forRequest: 2)?.changed == true && changed.faults(forRequest: 9)?.changed == true)
        #expect(BenchScenario.Outcome.changedOrError.rawValue == "new-bytes-or-error")
        let gzip = try #require(BenchScenarios.builtInOnly["gzip-range"])
        #expect(gzip.steps == [try FaultSpec(parsing: "cut=50%"), try FaultSpec(parsing: "gzip-range")])
        #expect(gzip.afterSteps == .none && gzip.outcome == .bytes && gzip.faults(forRequest: 3) == nil)
    }

    @Test func aScenarioFileMayExpectTheNewBytesOrAnError() throws {
        let file = #"{"scenarios": [{"name": "swap", "steps": ["changed"], "outcome": "new-bytes-or-error"}]}"#
        let scenario = try #require(try BenchScenarios(file: Data(file.utf8))["swap"])
        #expect(scenario.outcome == .changedOrError && scenario.steps.first?.changed == true)
    }

    @Test func aScenarioFileAddsToTheBuiltInOnes() throws {
        let file = """
            {
              "scenarios": [
                {"name": "cut-then-busy", "description": "Cut, then busy.",
                 "steps": ["cut=30%", "status=503;retry-after=1", "none"], "then": "none", "outcome": "bytes"},
                {"name": "always-busy", "steps": ["status=503"], "then": "repeat", "outcome": "error"}
              ]
            }
            """
        let scenarios = try BenchScenarios(file: Data(file.utf8))
        #expect(scenarios.all.count == BenchScenarios.builtIn.count + 2)
        let first = try #require(scenarios["cut-then-busy"])
        #expect(first.steps.count == 3 && first.steps[2].kinds.isEmpty && first.afterSteps == .none)
        let second = try #require(scenarios["always-busy"])
        #expect(second.afterSteps == .repeatLast && second.outcome == .error && second.description == "")
        #expect(second.faults(forRequest: 9)?.status?.code == 503)
    }

    @Test(arguments: [
        // (file, line, words the problem names)
        ("{\n  \"scenarios\": [\n    {\"name\": \"a\",, \"steps\": [\"cut\"]}\n  ]\n}", 3, "not valid JSON"),
        (
            "{\n \"scenarios\": [\n  {\"name\": \"a\",\n   \"steps\": [\"cut=30%\",\n     \"cut=lots\"]}\n ]\n}", 5,
            "step 2"
        ),
        (
            "{\n \"scenarios\": [\n  {\"name\": \"a\",\n   \"steps\": [\"none\"],\n   \"outcom\": \"bytes\"}]}", 5,
            "unknown key 'outcom'"
        ),
        (
            "{\"scenarios\": [\n {\"name\": \"a\", \"steps\": [\"none\"]},\n {\"name\": \"b\",\n  \"steps\": []}]}", 3,
            "at least one"
        ),
        (
            "{\"scenarios\": [\n {\"name\": \"a\", \"steps\": [\"none\"],\n  \"then\": \"forever\"}]}", 3,
            "\"none\" or \"repeat\""
        ),
        (
            "{\"scenarios\": [\n {\"name\": \"a\", \"steps\": [\"none\"],\n  \"outcome\": \"maybe\"}]}", 3,
            "\"bytes\" or \"error\" or \"new-bytes-or-error\""
        ),
        ("{\"scenarios\": [\n\n {\"name\": \"cut\", \"steps\": [\"none\"]}]}", 3, "built-in"),
        (
            "{\"scenarios\": [\n {\"name\": \"x\", \"steps\": [\"none\"]},\n"
                + " {\"name\": \"x\", \"steps\": [\"none\"]}]}",
            3,
            "used twice"
        ),
        ("{\"scenarios\": [\n {\"name\": \"../x\", \"steps\": [\"none\"]}]}", 2, "letters, digits"),
    ])
    func aBadScenarioFileNamesTheLine(file: String, line: Int, words: String) {
        #expect {
            try BenchScenarios(file: Data(file.utf8))
        } throws: { error in
            guard let error = error as? BenchScenarioFileError else { return false }
            return error.line == line && error.description.contains(words)
                && error.description.hasPrefix("line \(line): ")
        }
    }

    @Test(arguments: [
        "[]", "{}", "{\"scenarios\": {}}", "{\"scenarios\": [], \"extra\": 1}", "{\"scenarios\": [1]}",
        "{\"scenarios\": [{\"steps\": [\"none\"]}]}",
    ])
    func aFileOfTheWrongShapeIsRefused(file: String) {
        #expect(throws: BenchScenarioFileError.self) { try BenchScenarios(file: Data(file.utf8)) }
    }
}
