// The numbers of JSONReader (JSONParser.swift): JSON's grammar for numbers, read to an exact
// Int64 when the text is an integer in range, else to the nearest Double.

private let minus: UInt8 = 0x2D
private let plus: UInt8 = 0x2B
private let dot: UInt8 = 0x2E
private let zero: UInt8 = 0x30

@inline(__always)
private func isDigit(_ c: UInt8) -> Bool { c &- zero < 10 }

/// Exact powers of ten representable in a Double (10^0 ... 10^22).
@inline(__always)
private func exactPowerOfTen(_ e: Int) -> Double {
    switch e {
    case 0: return 1
    case 1: return 1e1
    case 2: return 1e2
    case 3: return 1e3
    case 4: return 1e4
    case 5: return 1e5
    case 6: return 1e6
    case 7: return 1e7
    case 8: return 1e8
    case 9: return 1e9
    case 10: return 1e10
    case 11: return 1e11
    case 12: return 1e12
    case 13: return 1e13
    case 14: return 1e14
    case 15: return 1e15
    case 16: return 1e16
    case 17: return 1e17
    case 18: return 1e18
    case 19: return 1e19
    case 20: return 1e20
    case 21: return 1e21
    default: return 1e22
    }
}

extension JSONReader {
    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = pos
        var negative = false
        if byte(pos) == minus {
            negative = true
            pos += 1
            guard pos < end else { throw endOfInput("a digit after '-'") }
        }
        var c = byte(pos)
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var tooManyDigits = false  // more than 19 significant digits: not exact in UInt64
        var exponent10 = 0

        if c == zero {
            pos += 1
            if pos < end && isDigit(byte(pos)) {
                throw error(start, "leading zeros are not allowed in numbers")
            }
        } else if isDigit(c) {
            while pos < end {
                c = byte(pos)
                guard isDigit(c) else { break }
                if significantDigits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(c &- zero)
                    significantDigits += 1
                } else {
                    tooManyDigits = true
                }
                pos += 1
            }
        } else if c == 0x49 {  // I
            throw error(pos, "NaN and Infinity are not allowed")
        } else {
            throw unexpected("a digit after '-'")
        }

        var isInteger = true
        if pos < end && byte(pos) == dot {
            isInteger = false
            pos += 1
            guard pos < end else { throw endOfInput("a digit after '.'") }
            guard isDigit(byte(pos)) else { throw unexpected("a digit after '.'") }
            while pos < end {
                c = byte(pos)
                guard isDigit(c) else { break }
                if mantissa == 0 && c == zero {
                    exponent10 -= 1  // leading zeros of the fraction are not significant
                } else if significantDigits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(c &- zero)
                    significantDigits += 1
                    exponent10 -= 1
                } else {
                    tooManyDigits = true
                }
                pos += 1
            }
        }

        if pos < end && (byte(pos) | 0x20) == 0x65 {  // e or E
            isInteger = false
            pos += 1
            guard pos < end else { throw endOfInput("a digit in the exponent") }
            var exponentNegative = false
            c = byte(pos)
            if c == minus || c == plus {
                exponentNegative = c == minus
                pos += 1
                guard pos < end else { throw endOfInput("a digit in the exponent") }
            }
            guard isDigit(byte(pos)) else { throw unexpected("a digit in the exponent") }
            var e = 0
            while pos < end {
                c = byte(pos)
                guard isDigit(c) else { break }
                if e < 1_000_000 { e = e * 10 + Int(c &- zero) }  // beyond: ±inf or 0 anyway
                pos += 1
            }
            exponent10 += exponentNegative ? -e : e
        }

        if isInteger && !tooManyDigits {
            if negative {
                if mantissa <= UInt64(Int64.max) { return .int(-Int64(mantissa)) }
                if mantissa == UInt64(Int64.max) + 1 { return .int(.min) }
            } else if mantissa <= UInt64(Int64.max) {
                return .int(Int64(mantissa))
            }
        }

        // Exact fast path: the mantissa and the power of ten are both exact doubles, so a single
        // multiplication or division rounds correctly.
        if !tooManyDigits && mantissa <= (1 << 53) && exponent10 >= -22 && exponent10 <= 22 {
            var d = Double(mantissa)
            if exponent10 < 0 {
                d /= exactPowerOfTen(-exponent10)
            } else {
                d *= exactPowerOfTen(exponent10)
            }
            return .double(negative ? -d : d)
        }

        let text = String(
            decoding: UnsafeRawBufferPointer(start: base + start, count: pos - start), as: UTF8.self)
        guard let d = Double(text), d.isFinite else {
            throw error(start, "number out of range for a 64-bit float")
        }
        return .double(d)
    }
}
