package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A result is a query's column names and rows, every value rendered as
// text (NULL as "<null>"), so PostgreSQL's and qpanalytics' answers compare
// field by field.
type result struct {
	cols []string
	rows [][]string
}

// sameCell applies the TPC-H answer-set rule: numbers are equal after
// rounding to 2 decimals, strings after trimming trailing blanks (char(n)
// pads them). A value exactly on a rounding boundary can round apart when
// one engine averages in binary floating point and the other in exact
// decimals; those count as equal when the raw numbers differ by less than
// one part in 10^9.
func sameCell(a, b string) bool {
	a, b = strings.TrimRight(a, " "), strings.TrimRight(b, " ")
	if a == b {
		return true
	}
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	if ea != nil || eb != nil {
		return false
	}
	if round2(fa) == round2(fb) {
		return true
	}
	return math.Abs(fa-fb) <= 1e-9*math.Max(math.Abs(fa), math.Abs(fb))
}

func round2(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', 2, 64) }

// diff says how got differs from want, or "" when they match: same column
// names, row count and rows in the same order (TPC-H queries order fully
// or return one row, except where sortBoth is set).
func diff(want, got result, sortBoth bool) string {
	if strings.Join(want.cols, ",") != strings.Join(got.cols, ",") {
		return fmt.Sprintf("columns %v, want %v", got.cols, want.cols)
	}
	if len(want.rows) != len(got.rows) {
		return fmt.Sprintf("%d rows, want %d", len(got.rows), len(want.rows))
	}
	if sortBoth {
		sortRows(want.rows)
		sortRows(got.rows)
	}
	for i := range want.rows {
		for j := range want.cols {
			if !sameCell(want.rows[i][j], got.rows[i][j]) {
				return fmt.Sprintf("row %d column %s: %q, want %q", i+1, want.cols[j], got.rows[i][j], want.rows[i][j])
			}
		}
	}
	return ""
}

func sortRows(rows [][]string) {
	key := func(r []string) string { return strings.Join(r, "\x00") }
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && key(rows[j]) < key(rows[j-1]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// readAnswer parses an official answer file: a header line, then rows,
// fields separated by '|' and padded with blanks.
func readAnswer(path string) (result, error) {
	f, err := os.Open(path)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	var r result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 0; sc.Scan(); n++ {
		fields := strings.Split(sc.Text(), "|")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if n == 0 {
			r.cols = fields
			continue
		}
		r.rows = append(r.rows, fields)
	}
	return r, sc.Err()
}

// withinSpec applies the specification's answer tolerance for a number
// compared with the official answers: averages and ratios within 1%, sums
// within 100; not knowing which column is which, both bounds apply.
func withinSpec(want, got string) bool {
	// The answer files pad fields with blanks, so a value's own leading
	// blank cannot be told from padding there: trim both sides.
	want, got = strings.TrimSpace(want), strings.TrimSpace(got)
	if sameCell(want, got) {
		return true
	}
	fw, ew := strconv.ParseFloat(strings.TrimSpace(want), 64)
	fg, eg := strconv.ParseFloat(strings.TrimSpace(got), 64)
	if ew != nil || eg != nil {
		return false
	}
	return math.Abs(fw-fg) <= math.Min(100, 0.01*math.Abs(fw))
}

// diffAnswer compares got with an official answer (column names are not
// compared: the answer files name some columns differently).
func diffAnswer(want, got result) string {
	if len(want.cols) != len(got.cols) {
		return fmt.Sprintf("%d columns, want %d", len(got.cols), len(want.cols))
	}
	if len(want.rows) != len(got.rows) {
		return fmt.Sprintf("%d rows, want %d", len(got.rows), len(want.rows))
	}
	for i := range want.rows {
		for j := range want.cols {
			if !withinSpec(want.rows[i][j], got.rows[i][j]) {
				return fmt.Sprintf("row %d column %d: %q, want %q", i+1, j+1, got.rows[i][j], want.rows[i][j])
			}
		}
	}
	return ""
}

// render turns a value pgx decoded (from text or binary) into text that
// compares the same way for both servers.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "<null>"
	case string:
		return x
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "t"
		}
		return "f"
	case pgtype.Numeric:
		dv, err := x.Value()
		if err != nil {
			return fmt.Sprintf("<bad numeric: %v>", err)
		}
		return fmt.Sprint(dv)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.999999")
	default:
		return fmt.Sprint(x)
	}
}
