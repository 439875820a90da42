// KioskKit's public API speaks KioskCore's wire types (`PurchaseProof`, `Product`, `Entitlement`, `Grant`,
// `APIErrorCode`…), so `import KioskKit` alone brings them: an app adds and imports one library.
// KioskCore is the wire model with no dependency of its own, and no name in it clashes with KioskKit's.
@_exported import KioskCore
