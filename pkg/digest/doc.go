// Package digest normalizes SQL statements to their shape and keeps
// per-shape statistics, cheaply enough for qprouter to do it for every
// statement it relays.
//
// # Normalized text
//
// Normalize is one pass of a byte scanner that follows PostgreSQL's lexical
// rules (scan.l), not its grammar; it never fails and never panics, whatever
// the input. Its output is the statement's tokens, rewritten as follows:
//
//   - Every constant becomes a placeholder: numbers (integers, decimals,
//     exponents, 0x/0o/0b, underscores), '...' strings, E'...' strings with
//     backslash escapes, N'...', U&'...', B'...' and X'...' strings,
//     dollar-quoted strings, and string continuations ('a' newline 'b' is
//     one constant). Plain '...' strings follow
//     standard_conforming_strings = on.
//   - Existing $n parameters are placeholders too. All placeholders are
//     numbered $1, $2, ... in order of appearance, whatever their original
//     numbers, so "a = $2 and b = $1", "a = $1 and b = $2" and
//     "a = 5 and b = 'x'" have one shape: a statement sent with the simple
//     protocol and its prepared form are the same shape.
//   - A minus sign directly before a number (after an operator, '(', ',',
//     the start, or a keyword such as select, where, and, then, limit) is
//     part of the constant: "a = -1" is "a = $1", "a - 1" is "a - $1".
//   - IN (...) and ARRAY[...] lists whose elements are all constants (each
//     optionally followed by ::type) collapse to their first placeholder:
//     "in (1, 2, 3)" and "in ('x')" are both "in ($1)".
//   - In a VALUES list, rows of constants after a first row of constants
//     with as many columns are dropped: "values (1, 'a'), (2, 'b')" is
//     "values ($1, $2)", so a batch insert is one shape whatever its size.
//     A row of another width or with an expression (default, now()) ends
//     the collapsing; the rows from there on stay.
//   - An unsigned integer directly after ORDER BY or GROUP BY, or after a
//     comma in their list, is kept: "order by 2" is a column position,
//     not a constant (also in a window's ORDER BY, where PostgreSQL
//     reads it as a constant).
//   - Comments are removed; keywords and unquoted identifiers are lower-cased
//     (ASCII letters only, as PostgreSQL does in multi-byte encodings);
//     quoted identifiers are kept byte for byte.
//   - Spacing is canonical rather than copied: one space between tokens,
//     none after ( [ . :: and none before ) ] , ; . :: or before the ( of a
//     function call ("count(*)", "t(a, b)"), but "in (", "values (",
//     "from (". So "a=1", "a = 1" and "a\n=\n1" are one shape.
//   - Trailing semicolons are dropped; semicolons between statements of a
//     simple-protocol string stay.
//   - true, false and null are constants too, as PostgreSQL's parser
//     makes them, except where they are part of the grammar: "is [not]
//     true", "is [not] null", a "not null" constraint, "on delete set
//     null" ("where not true" is NOT of a constant). != is written <>,
//     as PostgreSQL's lexer reads it.
//
// Normalizing a normalized text gives the same text (the fuzz test checks
// this).
//
// The fingerprint is the 64-bit FNV-1a hash of the normalized text (Hash);
// two texts with one fingerprint are treated as one shape, which at 5,000
// shapes has a collision chance near 1e-12.
//
// # Relation to pg_stat_statements' queryid
//
// pg_stat_statements computes queryid after parse analysis by jumbling the
// Query tree: relation, function, operator and type OIDs, the node structure,
// and not the constants' values (their locations are recorded to print $n
// in the query text). Our shape is textual, before any parsing:
//
//   - They agree on constants, including negative numeric constants
//     (PostgreSQL folds "- 1" into the constant too), true, false, null
//     and typed literals (date '...'), on $n parameters being values, on
//     comments, case and whitespace not mattering, on != being <>, and on
//     ORDER BY / GROUP BY positions not being constants.
//
// TestShapesAgainstQueryID checks each of these claims, and the
// differences below, on both sides against PostgreSQL 15 with
// pg_stat_statements.
//   - Ours splits what queryid merges: different spellings of one tree
//     ("t" and "public.t", "a" and "t.a", "a IN (1)" and "a = 1",
//     "cast(x as int)" and "x::int", implicit and explicit aliases).
//   - Ours merges what queryid splits: the same text against different
//     objects (search_path, a dropped and recreated table gets a new OID),
//     and a query whose resolved operators or types differ with the
//     constants' types ("a = 1" and "a = 1.5" are one shape; queryid can
//     differ as the literal's type changes the operator).
//   - IN lists: queryid before PostgreSQL 18 jumbles every element, so each
//     list length is its own entry; 18 squashes lists of two or more
//     constants to "IN ($1 /*, ... */)" but keeps a one-element list
//     apart. Ours makes every length one shape.
//   - Typmods and other numbers that are part of the grammar rather than
//     constants become placeholders here ("varchar(10)" is "varchar($1)",
//     "interval '1' day" is "interval $1 day"); queryid keeps the typmod in
//     the tree.
//   - Multi-row VALUES: queryid jumbles every row, so each row count is its
//     own entry; ours collapses rows of constants.
//   - Utility statements (SET, BEGIN, CREATE ...) are normalized here like
//     any other text; pg_stat_statements tracks them only with
//     track_utility on, and which of their constants it replaces depends
//     on the statement and the PostgreSQL version.
//
// The normalized text is what tools display; it is not meant to be sent to
// a server (an IN list's arity, for example, is lost).
//
// # Statistics
//
// A Store keeps, per fingerprint, pool and route: the text, calls, errors,
// rows, first and last seen, and total, min, max, p50 and p99 durations.
// It holds at most N shapes (default 5,000) and evicts the least recently
// seen. The percentiles come from a fixed histogram per shape: one bucket
// below 1.024 µs, then 8 equal sub-buckets per power of two up to 2^40 ns
// (about 18 minutes), then one bucket above; 242 uint32 counters, about
// 1 KiB per shape (5 MiB at 5,000 shapes). A percentile is the midpoint of
// the bucket holding the nearest-rank observation, clamped to [min, max]:
// between 1.024 µs and 2^40 ns it is within 1/16 (6.25 %) of the exact
// nearest-rank percentile of the observed durations. Below 1.024 µs the
// error is at most 1.024 µs; above 2^40 ns the answer is the maximum.
// Shapes with fewer than 10 calls carry a warning that p50 and p99 are
// unreliable, with fewer than 100 that p99 is the maximum. A shape keeps at
// most MaxTextBytes of its text (flagged as truncated), so a store's memory
// stays near 5 KiB per shape whatever the clients send.
package digest
