// Numeric literals.

package duckdialect

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// numericLiteral keeps a PostgreSQL numeric literal exact in DuckDB:
// DuckDB reads 1e5 as a double and literals over 38 digits as doubles, so
// exponents are expanded and longer literals refused.
func numericLiteral(s string) (*pg_query.Node, error) {
	exp := strings.ContainsAny(s, "eE")
	if exp {
		plain, ok := expandExponent(s)
		if !ok {
			return nil, unsupported("numeric literal %s", s)
		}
		s = plain
	}
	p, _, ok := decimalDigits(s)
	if !ok {
		return nil, unsupported("numeric literal %s (more than 38 digits)", s)
	}
	if !strings.Contains(s, ".") {
		// PostgreSQL's numeric without a point (1e3, or an integer
		// beyond bigint): DuckDB would read an integer, and divide it
		// as one.
		if _, err := strconv.ParseInt(s, 10, 64); exp || err != nil {
			return cast(numConst(s), "decimal", p, 0), nil
		}
	}
	return numConst(s), nil
}

// decimalDigits returns the DECIMAL(p,s) that holds a plain decimal
// literal exactly, refusing more than 38 digits.
func decimalDigits(s string) (p, scale int64, ok bool) {
	s = strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return 0, 0, false
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	p, scale = int64(len(intPart)+len(frac)), int64(len(frac))
	if p == 0 {
		p = 1
	}
	if p > 38 {
		return 0, 0, false
	}
	return p, scale, true
}

// expandExponent writes a literal like 1.5e3 without its exponent: 1500.
func expandExponent(s string) (string, bool) {
	i := strings.IndexAny(s, "eE")
	mant, exp := s[:i], s[i+1:]
	e, err := strconv.Atoi(exp)
	if err != nil || e > 40 || e < -40 {
		return "", false
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + e // position of the decimal point in digits
	switch {
	case point <= 0:
		digits = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		digits += strings.Repeat("0", point-len(digits))
	default:
		digits = digits[:point] + "." + digits[point:]
	}
	if strings.HasPrefix(digits, ".") {
		digits = "0" + digits
	}
	return digits, true
}
