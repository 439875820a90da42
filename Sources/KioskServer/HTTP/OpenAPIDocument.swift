import NIOCore

/// The server's contract, `openapi.yaml` at the repository's root (OpenAPI 3.1), as `GET /openapi.yaml` answers it.
///
/// Its text is compiled into the server (``yaml``, in `OpenAPIDocument+YAML.swift`, which
/// `scripts/openapi/embed.sh` writes from the file), so that any `kiosk serve` serves it, from any working directory
/// and wherever its binary was copied. A test fails when the compiled text and the file differ.
enum OpenAPIDocument {
    /// The media type it is served with (RFC 9512).
    static let mediaType = "application/yaml"

    /// The answer to `GET /openapi.yaml`, made once.
    static let answer = ReadyAnswer(
        status: .ok, headers: [.contentType: mediaType], body: ByteBuffer(string: yaml))

    /// The answer to `HEAD /openapi.yaml`: the headers of ``answer``, with the document's `Content-Length`.
    static let headAnswer = ReadyAnswer(
        status: .ok, headers: [.contentType: mediaType, .contentLength: String(yaml.utf8.count)], body: nil)
}
