import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A cached catalog answer.
struct CachedCatalog: Codable, Sendable {
    var entityTag: String
    var body: Data
}
