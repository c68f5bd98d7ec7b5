import QueuePlayerControl
import QueuePlayerService
import TestTiers
import Testing

/// Inputs the fuzzer found or points at: out-of-range numbers in a `--format` template and in fixed-point output
/// give text, never a crash of the client.
@Suite("Numbers beyond 64 bits in templates and fixed-point output", .tier(.deterministic))
struct TemplateEdgeTests {
    private let values: [String: MetadataTemplate.Value] = ["title": .string("Morning")]

    @Test("duration() and trunc() of numbers beyond Int64 clamp to what fits (found by scripts/fuzz)")
    func hugeArguments() throws {
        let huge = String(repeating: "9", count: 40)
        let template =
            "{{ duration(-4444444444444444444444444444444444) }}|{{ duration(\(huge)) }}|"
            + "{{ trunc(title, \(huge)) }}|{{ trunc(title, -\(huge)) }}"
        #expect(try MetadataTemplate(text: template).render(values) == "0:00|2562047788:00:54|Morning|Morning")
    }

    @Test("nesting beyond 100 levels is an error naming where, not a stack overflow (found by scripts/fuzz)")
    func deepNesting() throws {
        let deep = "{{" + String(repeating: "(", count: 2_000) + "1" + String(repeating: ")", count: 2_000) + "}}"
        #expect(throws: MetadataTemplate.TemplateError.self) { try MetadataTemplate(text: deep).render(values) }
        let minuses = "{{" + String(repeating: "- ", count: 2_000) + "1}}"
        #expect(throws: MetadataTemplate.TemplateError.self) { try MetadataTemplate(text: minuses).render(values) }
        let fine = "{{" + String(repeating: "(", count: 40) + "2" + String(repeating: ")", count: 40) + "}}"
        #expect(try MetadataTemplate(text: fine).render(values) == "2.0")
    }

    @Test("fixed decimals of a value too large for 64-bit fixed point print it as Swift does")
    func hugeFixedDecimals() {
        #expect(fixedDecimals(1e300, places: 6) == "1e+300")
        #expect(fixedDecimals(-12.5, places: 2) == "-12.50")
        #expect(fixedDecimals(.infinity, places: 2) == "inf")
    }
}
