import Foundation

/// A named sequence of faults for `kiosk bench`: the first request of a run for a file gets the first step, the
/// second request the second step, and so on; after the last step, requests get no fault (or the last step again,
/// with ``AfterSteps/repeatLast``). Each scenario also says what a correct client ends with (``Outcome``).
public struct BenchScenario: Sendable, Equatable {
    /// What comes after the last step.
    public enum AfterSteps: String, Sendable, Codable, CaseIterable {
        /// Requests get no fault: a client that tries again succeeds.
        case none
        /// Every later request gets the last step again.
        case repeatLast = "repeat"
    }

    /// What a correct client ends with.
    public enum Outcome: String, Sendable, Codable, CaseIterable {
        /// The file's exact bytes.
        case bytes
        /// A clear error, and no file: the bytes it would get are not the file's.
        case error
        /// Either the exact bytes of the version the file changed to (the fault `changed`: the client noticed the
        /// change, threw away what it had and fetched the new version whole) or a clear error; never a mix of the
        /// two versions.
        case changedOrError = "new-bytes-or-error"
    }

    /// The name in `/s/<name>/<path>`: letters, digits, `-`, `_` and `.`, not starting with `.`, not `report`.
    public var name: String
    /// What it does, in a sentence.
    public var description: String
    /// The faults of the first, second… request of a run for a file.
    public var steps: [FaultSpec]
    /// What the requests after the last step get.
    public var afterSteps: AfterSteps
    /// What a correct client ends with.
    public var outcome: Outcome

    /// A scenario; `steps` must not be empty.
    public init(
        name: String, description: String, steps: [FaultSpec], afterSteps: AfterSteps = .none,
        outcome: Outcome = .bytes
    ) {
        self.name = name
        self.description = description
        self.steps = steps
        self.afterSteps = afterSteps
        self.outcome = outcome
    }

    /// The faults of the `number`th request of a run for a file (from 1), or nil for none.
    public func faults(forRequest number: Int) -> FaultSpec? {
        let step: FaultSpec
        if number <= steps.count {
            step = steps[max(number, 1) - 1]
        } else if afterSteps == .repeatLast, let last = steps.last {
            step = last
        } else {
            return nil
        }
        return step.kinds.isEmpty ? nil : step
    }

    /// Whether `name` may name a scenario (not `report`, the report's path).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= 64,
            name != BenchPath.reportName
        else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }
}
