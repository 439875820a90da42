import Testing

@testable import kiosk

/// #15 item 7: server text reaches the terminal only with its controls escaped.
@Suite("Terminal text")
struct TerminalTextTests {
    @Test func plainTextIsUnchanged() {
        for text in ["", "Swift on Server — Issue 11", "naïve café 日本語 🚀", "two\nlines", "back\\slash"] {
            #expect(TerminalText.escaped(text) == text)
            #expect(TerminalText.escapedJSON(text) == text)
        }
    }

    @Test func controlsAreEscapedVisibly() {
        #expect(TerminalText.escaped("\u{1B}]0;pwned\u{07}") == "\\u{1B}]0;pwned\\u{7}")
        #expect(TerminalText.escaped("a\u{1B}[2Jb\rc\td\u{0}") == "a\\u{1B}[2Jb\\u{D}c\\u{9}d\\u{0}")
        #expect(TerminalText.escaped("del\u{7F}") == "del\\u{7F}")
        #expect(TerminalText.escaped("csi\u{9B}31m nel\u{85}") == "csi\\u{9B}31m nel\\u{85}")
        #expect(TerminalText.escaped("line\nline") == "line\nline")
        #expect(TerminalText.escaped("line\nline", allowsNewline: false) == "line\\u{A}line")
    }

    @Test func everyBidirectionalControlIsEscaped() {
        let controls: [UInt32] = [
            0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067,
            0x2068, 0x2069,
        ]
        for value in controls {
            let scalar = Unicode.Scalar(value)!
            #expect(!TerminalText.isSafe(scalar), "U+\(String(value, radix: 16))")
            #expect(!TerminalText.escaped("x\(Character(scalar))y").unicodeScalars.contains(scalar))
        }
        // Neighbours that are ordinary characters stay.
        for value: UInt32 in [0x061B, 0x200D, 0x2029, 0x202F, 0x2065, 0x206A, 0xA0] {
            #expect(TerminalText.isSafe(Unicode.Scalar(value)!), "U+\(String(value, radix: 16))")
        }
    }

    @Test func everyC0AndC1ControlButNewlineIsUnsafe() {
        for value: UInt32 in Array(0x00...0x1F) + Array(0x7F...0x9F) {
            #expect(TerminalText.isSafe(Unicode.Scalar(value)!) == (value == 0x0A), "U+\(String(value, radix: 16))")
        }
    }

    @Test func jsonKeepsItsValueAndLosesItsControls() throws {
        let json = "{\n  \"title\" : \"a\u{202E}b\u{9B}c\u{7F}\"\n}"
        let escaped = TerminalText.escapedJSON(json)
        #expect(escaped == "{\n  \"title\" : \"a\\u202Eb\\u009Bc\\u007F\"\n}")
    }
}
