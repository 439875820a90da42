import KioskCore

/// What changed since one catalog tag, against one snapshot, in the order the change feed sends it: the products
/// added or changed in catalog order, then the IDs removed in ID order. A page of the feed is a slice of it, found
/// from its cursor by binary search: its cost is that of the entries it sends.
struct CatalogChangeSet: Sendable {
    /// The catalog positions of the products added or changed, ascending (catalog order).
    let positions: [Int]
    /// For each of ``positions``, whether the product was added (false: changed).
    let added: [Bool]
    /// The IDs removed, in ID order.
    let removed: [String]

    /// The change set of `changes` (a ``CatalogHistory/changes(since:)``) in `catalog`, the snapshot it leads to.
    init(_ changes: (added: Set<String>, changed: Set<String>, removed: Set<String>), in catalog: EncodedCatalog) {
        positions = changes.added.union(changes.changed).compactMap(catalog.position(of:)).sorted()
        added = positions.map { changes.added.contains(catalog.key(at: $0).id) }
        removed = changes.removed.sorted()
    }

    /// The index in ``positions`` of the first product after `key` in catalog order (0 for nil).
    func firstProduct(after key: CatalogKey?, in catalog: EncodedCatalog) -> Int {
        let start = catalog.firstIndex(after: key)
        return Self.partition(positions.count) { positions[$0] < start }
    }

    /// The index in ``removed`` of the first ID after `id`.
    func firstRemoval(after id: String) -> Int {
        Self.partition(removed.count) { removed[$0] <= id }
    }

    /// The first index in `0..<count` for which `isBefore` is false, `isBefore` being true up to some index and
    /// false after it.
    private static func partition(_ count: Int, isBefore: (Int) -> Bool) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if isBefore(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
