package copybintest

import _ "embed"

// RareSQL creates the table rare: one column of each PostgreSQL type that
// copybin decodes off its hand path (inet, cidr, macaddr, geometry, bit
// strings, ranges and multiranges, tid, xid, xid8, xml, money, tsvector,
// tsquery, pg_lsn, jsonpath, timetz), their arrays, an enum and domains
// (over a domain, over inet, over the enum), with NULLs, edge values and
// 5000 generated rows. It drops what it creates first.
//
//go:embed rare.sql
var RareSQL string
