// Checking a generation request as a command line states it.

package tpch

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Request is a generation run as tpchgen's gen flags state it, before any
// checking. Check's errors name those flags (--sf, --table, ...), so a tool
// taking the same flags reports the same problems the same way.
type Request struct {
	SF     float64
	Table  string // a table name; "" or "all" selects every table, which needs a Dir
	Format string // tbl, copy or csv
	Parts  *int   // split into Parts chunks; nil when not given
	Part   *int   // write chunk Part (1-based); nil when not given
	Jobs   int    // generating goroutines; 0 means one per CPU
	Dir    string // output directory; "" means one table to a stream
}

// Check validates r before any work and returns the tables it selects (in
// load order) and the options to write them with.
func (r Request) Check() ([]Table, Options, error) {
	var opt Options
	if err := CheckScaleFactor(r.SF); err != nil {
		return nil, opt, err
	}
	f, err := ParseFormat(r.Format)
	if err != nil {
		return nil, opt, fmt.Errorf("--format: %v", err)
	}
	opt.Format = f
	var tables []Table
	if r.Table == "" || strings.EqualFold(r.Table, "all") {
		if r.Dir == "" {
			return nil, opt, fmt.Errorf("--table is required when writing to stdout (or give --out DIR for all tables)")
		}
		tables = Tables
	} else {
		t, err := ParseTable(r.Table)
		if err != nil {
			return nil, opt, fmt.Errorf("--table: %v", err)
		}
		tables = []Table{t}
	}
	switch {
	case r.Part != nil && r.Parts == nil:
		return nil, opt, fmt.Errorf("--part requires --parts")
	case r.Parts != nil && *r.Parts < 1:
		return nil, opt, fmt.Errorf("--parts %d must be at least 1", *r.Parts)
	case r.Parts != nil && r.Part == nil:
		return nil, opt, fmt.Errorf("--parts requires --part (1..%d)", *r.Parts)
	case r.Parts != nil && (*r.Part < 1 || *r.Part > *r.Parts):
		return nil, opt, fmt.Errorf("--part %d is out of range 1..%d", *r.Part, *r.Parts)
	}
	if r.Parts != nil {
		opt.Parts, opt.Part = *r.Parts, *r.Part
	}
	if r.Jobs < 0 {
		return nil, opt, fmt.Errorf("--jobs %d must not be negative", r.Jobs)
	}
	opt.Jobs = r.Jobs
	return tables, opt, nil
}

// CheckScaleFactor rejects scale factors that are not generated: not a
// number, not above 0, or above MaxScaleFactor. Its errors name the value
// as tpchgen's --sf flag.
func CheckScaleFactor(sf float64) error {
	switch {
	case math.IsNaN(sf) || math.IsInf(sf, 0):
		return fmt.Errorf("--sf %s is not a number", fmtFloat(sf))
	case sf <= 0:
		return fmt.Errorf("--sf %s must be greater than 0", fmtFloat(sf))
	case sf > MaxScaleFactor:
		return fmt.Errorf("--sf %s is larger than %s", fmtFloat(sf), fmtFloat(MaxScaleFactor))
	}
	return nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
