import Foundation
import KioskCore

/// The chunking parameters KioskKit accepts in a grant (``GrantLimits/chunkingBounds``).
public struct ChunkingBounds: Sendable, Hashable {
    /// The smallest `minimum`, in bytes.
    public var smallestMinimum: Int
    /// The smallest `average`, in bytes.
    public var smallestAverage: Int
    /// The largest `maximum`, in bytes.
    public var largestMaximum: Int

    /// Whether `parameters` lie within these bounds.
    public func admit(_ parameters: ChunkingParameters) -> Bool {
        parameters.minimum >= smallestMinimum && parameters.average >= smallestAverage
            && parameters.maximum <= largestMaximum
    }
}
