import Foundation

#if canImport(os)
    import os
#endif

/// Reports what cannot happen unless KioskKit has a bug (an internal event its download machine rejects): it stops a
/// debug build at once, and a release build logs it (the unified log on Apple platforms, standard error elsewhere)
/// and goes on with the event ignored.
enum KioskDiagnostics {
    /// Reports a broken invariant. Never call it with a receipt, a token or any other secret in `message`.
    static func unexpected(_ message: String, file: StaticString = #fileID, line: UInt = #line) {
        assertionFailure(message, file: file, line: line)
        #if canImport(os)
            logger.fault("\(message, privacy: .public) (\(file):\(line))")
        #else
            FileHandle.standardError.write(Data("KioskKit: unexpected: \(message) (\(file):\(line))\n".utf8))
        #endif
    }

    #if canImport(os)
        private static let logger = Logger(subsystem: "KioskKit", category: "download")
    #endif
}
