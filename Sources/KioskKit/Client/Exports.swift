// What KioskKit's public API is made of comes with `import KioskKit`, so that an app adds and imports one library:
// - KioskCore: the wire types the API takes and returns (`PurchaseProof`, `Product`, `Entitlement`, `Grant`,
//   `APIErrorCode`…). It is the wire model, with no dependency of its own, and no name in it clashes with KioskKit's.
// - Foundation: `URL`, `Data` and `Date` are in most signatures (`KioskClient(serverURL:)`), as with Apple's
//   frameworks, which re-export it too.
@_exported import Foundation
@_exported import KioskCore

// - FoundationNetworking (Linux only, where URLSession lives apart from Foundation):
//   ``KioskClient/Configuration/sessionConfiguration`` is a `URLSessionConfiguration`.
#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
