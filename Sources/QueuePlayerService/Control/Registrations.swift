/// Values registered one by one, each under an id of its own, listed in the order they were registered: who is told
/// a change, and in what turn. A plain value, kept under its owner's lock; ``values`` is an array, so reading it to
/// call each outside that lock copies nothing.
struct Registrations<Value> {
    /// The values registered and not removed, oldest first.
    private(set) var values: [Value] = []
    private var ids: [Int] = []
    private var nextID = 0

    var isEmpty: Bool { values.isEmpty }

    /// Registers `value` after the others; returns the id ``remove(_:)`` takes.
    mutating func add(_ value: Value) -> Int {
        defer { nextID += 1 }
        ids.append(nextID)
        values.append(value)
        return nextID
    }

    /// Removes the value registered under `id`, if it still is, and returns it.
    @discardableResult
    mutating func remove(_ id: Int) -> Value? {
        guard let index = ids.firstIndex(of: id) else { return nil }
        ids.remove(at: index)
        return values.remove(at: index)
    }
}

extension Registrations: Sendable where Value: Sendable {}
