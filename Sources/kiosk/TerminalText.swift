/// Text that came from the network, made safe to print: a hostile server must not be able to set the terminal's
/// title, clear the screen, move the cursor or reverse the direction of what follows.
///
/// Unsafe are the C0 controls except newline (U+0000–U+001F: escape, bell, carriage return, tab…), DEL (U+007F),
/// the C1 controls (U+0080–U+009F, where U+009B is a one-character escape sequence) and the bidirectional controls
/// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Each is printed as a visible, inert escape instead.
enum TerminalText {
    /// Whether `scalar` may reach a terminal as is.
    static func isSafe(_ scalar: Unicode.Scalar, allowsNewline: Bool = true) -> Bool {
        switch scalar.value {
        case 0x0A: allowsNewline
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }

    /// `text` with every unsafe scalar written as `\u{1B}`; newlines too when `allowsNewline` is `false` (one table
    /// cell, one line).
    static func escaped(_ text: String, allowsNewline: Bool = true) -> String {
        guard !text.unicodeScalars.allSatisfy({ isSafe($0, allowsNewline: allowsNewline) }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isSafe(scalar, allowsNewline: allowsNewline) {
                result.append(scalar)
            } else {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            }
        }
        return String(result)
    }

    /// JSON text (as `JSONEncoder` writes it) with every unsafe scalar written as a JSON escape (`\u001B`): the
    /// same JSON value, safe on a terminal. Its newlines are layout and stay.
    static func escapedJSON(_ json: String) -> String {
        guard !json.unicodeScalars.allSatisfy({ isSafe($0) }) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            if isSafe(scalar) {
                result.append(scalar)
            } else {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result.append(
                    contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
            }
        }
        return String(result)
    }
}
