// The count, ddl and queries commands: row counts and SQL text.

package main

import (
	"fmt"
	"io"

	"github.com/qpkit/qpkit/pkg/tpch"
)

type countCmd struct {
	SF float64 `name:"sf" default:"1" help:"Scale factor, read as for generation."`
}

func (c *countCmd) Help() string {
	return `Prints one line per table, "<table>\t<rows>" (a tab between), in load order: the rows
dbgen writes at this scale factor. The lineitem count is exact; it is found
by running the stream that decides each order's number of lines, without
generating any text.`
}

func (c *countCmd) Run(e *env) error {
	if err := tpch.CheckScaleFactor(c.SF); err != nil {
		return usageError{err}
	}
	return tpch.WriteRowCountsContext(e.ctx, e.stdout, c.SF)
}

type ddlCmd struct {
	Constraints bool `name:"constraints" help:"Print only the post-load part instead: primary keys, foreign keys, and indexes on lineitem (l_partkey, l_suppkey) (Q17, Q20) and orders (o_custkey)."`
}

func (c *ddlCmd) Help() string {
	return `Without flags, prints CREATE TABLE statements for the eight tables
(integer keys except bigint order keys, decimal(15,2), char(n), varchar(n),
date). Load the data, then run the output of "tpchgen ddl --constraints":
it adds the primary keys, the foreign keys and the indexes the queries
need; the primary key of lineitem also serves lookups by l_orderkey.`
}

func (c *ddlCmd) Run(e *env) error {
	s := tpch.SchemaSQL
	if c.Constraints {
		s = tpch.ConstraintsSQL
	}
	_, err := io.WriteString(e.stdout, s)
	return err
}

type queriesCmd struct {
	Query int `name:"query" placeholder:"N" help:"Print only query N (1..22), without the '-- QN' line."`
}

func (c *queriesCmd) Help() string {
	return `Prints the 22 TPC-H queries in PostgreSQL dialect with the
specification's validation parameters (qgen -d). Each query is one
read-only statement ending in ';' (Q15's view is a WITH query). All 22 are
printed in order, each preceded by a line "-- QN" (N = 1..22) and followed
by an empty line, so a script can split the output at lines matching
^-- Q[0-9]+$.`
}

func (c *queriesCmd) Run(e *env) error {
	if c.Query == 0 {
		return tpch.WriteQueries(e.stdout)
	}
	q, err := tpch.Query(c.Query)
	if err != nil {
		return usageError{fmt.Errorf("--query %d is out of range 1..%d", c.Query, tpch.NumQueries)}
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", q)
	return err
}
