// The count command: the number of rows each table has at a scale factor.

package main

import (
	"fmt"

	"github.com/qpkit/qpkit/pkg/tpch"
)

type countCmd struct {
	SF float64 `name:"sf" default:"1" help:"Scale factor, read as for generation."`
}

func (c *countCmd) Help() string {
	return `Prints one line per table, "<table> <rows>", in load order: the rows
dbgen writes at this scale factor. The lineitem count is exact; it is found
by running the stream that decides each order's number of lines, without
generating any text.`
}

func (c *countCmd) Run(e *env) error {
	if err := checkSF(c.SF); err != nil {
		return err
	}
	for _, t := range tpch.Tables {
		n, err := tpch.RowCount(t, c.SF)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(e.stdout, "%s %d\n", t, n); err != nil {
			return err
		}
	}
	return nil
}
