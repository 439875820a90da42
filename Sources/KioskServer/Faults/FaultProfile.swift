import Foundation

/// The faults a server injects into content responses on its own, chosen with `kiosk serve --faults`.
///
/// Whatever the profile, a server with faults enabled also honours per-request specs (the `Kiosk-Fault` header or
/// the `fault` query parameter); a per-request spec replaces the profile for that request.
public enum FaultProfile: Sendable, Hashable, CustomStringConvertible {
    /// No faults of its own; only per-request specs (`none` or `allow`).
    case requestOnly
    /// The same spec for every content request, or for the share of them given by its `p=`.
    case spec(FaultSpec)
    /// With this probability, one fault of a random kind with random parameters, all of them recoverable by a
    /// resuming client (`chaos`, `chaos:0.3`).
    case chaos(probability: Double)

    /// The probability of `chaos` when none is given.
    public static let defaultChaosProbability = 0.3

    /// The named profiles besides `none`, `allow` and `chaos`, with the spec each stands for.
    public static let named: [(name: String, spec: String)] = [
        ("slow", "throttle=256KiB/s;first-byte=300ms"),
        ("flaky", "cut=random;p=0.25"),
        ("busy", "status=503;retry-after=1;p=0.25"),
    ]

    /// Parses `none`, `allow`, `chaos`, `chaos:<probability>`, a named profile, or a fault spec.
    /// - Throws: ``FaultSpecError`` when the text is none of these.
    public init(parsing text: String) throws(FaultSpecError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lowered = trimmed.lowercased()
        if lowered == "none" || lowered == "allow" {
            self = .requestOnly
        } else if lowered == "chaos" {
            self = .chaos(probability: Self.defaultChaosProbability)
        } else if lowered.hasPrefix("chaos:") {
            let text = lowered.dropFirst("chaos:".count)
            guard let probability = Double(text), (0...1).contains(probability) else {
                throw FaultSpecError("the chaos probability must be from 0 to 1, not '\(text)'")
            }
            self = .chaos(probability: probability)
        } else if let named = Self.named.first(where: { $0.name == lowered }) {
            self = .spec(try FaultSpec(parsing: named.spec))
        } else {
            self = .spec(try FaultSpec(parsing: trimmed))
        }
    }

    /// The profile as it can be given to `--faults`.
    public var description: String {
        switch self {
        case .requestOnly: "none"
        case .spec(let spec): spec.description
        case .chaos(let probability): "chaos:\(probability)"
        }
    }
}
