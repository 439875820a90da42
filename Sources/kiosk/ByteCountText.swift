/// A byte count as `kiosk` prints it: `Zero KB`, `1 byte`, `999 bytes`, `12 KB`, `12.3 MB`, `1.23 GB`, `1,000 KB`,
/// the text Foundation's `ByteCountFormatter` gives for `.file` in English (decimal units; KB without decimals, MB
/// with one, GB and above with two, trailing zeros dropped, halves rounded to even, the unit chosen before rounding).
///
/// Written by hand because `ByteCountFormatter` sets up ICU's number formatting on first use: 1.7 MiB of resident
/// library pages in `kiosk get`, whose progress line needs nothing of the locale.
enum ByteCountText {
    /// The units from KB on, with the decimals each is shown with.
    private static let units: [(name: String, decimals: Int)] = [
        ("KB", 0), ("MB", 1), ("GB", 2), ("TB", 2), ("PB", 2), ("EB", 2),
    ]

    static func file(_ count: Int64) -> String {
        if count == 0 { return "Zero KB" }
        let magnitude = count.magnitude
        if magnitude < 1000 { return magnitude == 1 ? "\(count) byte" : "\(count) bytes" }
        var exponent = 0  // the unit is 1000^(exponent + 1)
        var divisor: UInt64 = 1000
        while exponent + 1 < units.count, magnitude / divisor >= 1000 {
            divisor *= 1000
            exponent += 1
        }
        let decimals = units[exponent].decimals
        let scale: UInt64 = decimals == 0 ? 1 : decimals == 1 ? 10 : 100
        // magnitude × scale ÷ divisor, rounded half to even, in exact integers (128 bits: no overflow).
        let (high, low) = magnitude.multipliedFullWidth(by: scale)
        let (quotient, remainder) = divisor.dividingFullWidth((high, low))
        var scaled = quotient
        if remainder * 2 > divisor || (remainder * 2 == divisor && scaled % 2 == 1) { scaled += 1 }
        var whole = grouped(scaled / scale)
        if decimals > 0 {
            let digits = String(scaled % scale)
            var fraction = String(repeating: "0", count: decimals - digits.count) + digits
            while fraction.hasSuffix("0") { fraction.removeLast() }
            if !fraction.isEmpty { whole += "." + fraction }
        }
        return (count < 0 ? "-" : "") + whole + " " + units[exponent].name
    }

    /// `value` with a comma between each group of three digits.
    private static func grouped(_ value: UInt64) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
