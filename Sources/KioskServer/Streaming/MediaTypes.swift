/// Content types for the files Kiosk typically serves.
enum MediaTypes {
    /// The `Content-Type` of a file, from its extension; `application/octet-stream` when it is not one of these.
    static func forPath(_ path: String) -> String {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return switch ext {
        case "pdf": "application/pdf"
        case "epub": "application/epub+zip"
        case "json": "application/json"
        case "txt", "md": "text/plain; charset=utf-8"
        case "html", "htm": "text/html; charset=utf-8"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}
