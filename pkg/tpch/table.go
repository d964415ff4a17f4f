// The eight TPC-H tables and their names.

package tpch

import (
	"fmt"
	"strings"
)

// Table identifies one of the eight TPC-H tables.
type Table int

// The tables, in the order they are usually loaded (parents first).
const (
	Nation Table = iota
	Region
	Part
	Supplier
	PartSupp
	Customer
	Orders
	Lineitem
)

// Tables lists every table in load order.
var Tables = []Table{Nation, Region, Part, Supplier, PartSupp, Customer, Orders, Lineitem}

var tableNames = [...]string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

// String returns the table's SQL name, which is also dbgen's file stem.
func (t Table) String() string {
	if t >= 0 && int(t) < len(tableNames) {
		return tableNames[t]
	}
	return fmt.Sprintf("Table(%d)", int(t))
}

// ParseTable maps a table name (case-insensitive) to a Table.
func ParseTable(s string) (Table, error) {
	for i, n := range tableNames {
		if strings.EqualFold(s, n) {
			return Table(i), nil
		}
	}
	return 0, fmt.Errorf("unknown table %q (want one of %s)", s, strings.Join(tableNames[:], ", "))
}

// Chunked reports whether dbgen splits the table with -C/-S. Nation and
// region are always generated whole.
func (t Table) Chunked() bool { return t != Nation && t != Region }
