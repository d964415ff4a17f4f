// Tool arguments read strictly: a value of the wrong type is the caller's
// error (an isError result), not silently the default, and numbers keep
// their exact digits (an id above 2^53 must not bind as its neighbour).

package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// arguments returns req's arguments with numbers as json.Number, decoded
// from the request's own bytes when mcp-go kept them.
func arguments(req mcp.CallToolRequest) map[string]any {
	if raw := req.Params.RawArguments; len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			return m
		}
	}
	return req.GetArguments()
}

// optString returns the string argument key; absent or null: ok false.
func optString(args map[string]any, key string) (s string, ok bool, err error) {
	switch v := args[key].(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	default:
		return "", false, fmt.Errorf("%s must be a string", key)
	}
}

// optBool returns the boolean argument key; absent or null: false.
func optBool(args map[string]any, key string) (bool, error) {
	switch v := args[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s must be true or false", key)
	}
}

// optInt returns the whole-number argument key; absent or null: ok false.
func optInt(args map[string]any, key string) (n int, ok bool, err error) {
	bad := fmt.Errorf("%s must be a whole number", key)
	switch v := args[key].(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		i, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			f, ferr := v.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
				return 0, false, bad
			}
			i = int64(f)
		}
		return int(max(min(i, math.MaxInt32), math.MinInt32)), true, nil
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return 0, false, bad
		}
		return int(max(min(v, math.MaxInt32), math.MinInt32)), true, nil
	default:
		return 0, false, bad
	}
}

// wholeParams returns params with every number written with a fraction or
// an exponent whose value is whole (5.0, 5e0, 0.5e1) in its integer digits
// (5), so that it binds to an integer parameter as 5 does (pgexec writes
// a float64 so too); params itself is not changed.
func wholeParams(params []any) []any {
	copied := false
	for i, p := range params {
		n, ok := p.(json.Number)
		if !ok {
			continue
		}
		if w := wholeNumber(n); w != n {
			if !copied {
				params, copied = slices.Clone(params), true
			}
			params[i] = w
		}
	}
	return params
}

// maxWholeDigits bounds the digits wholeNumber writes: a wider whole
// number (1e50) binds to no integer type anyway, and keeping it as it is
// keeps a small request from growing into a large one.
const maxWholeDigits = 40

// wholeNumber returns n, a JSON number, in integer digits when it has a
// fraction or an exponent and its value is whole and at most
// maxWholeDigits digits long; else n. The digits are exact: no float64
// in between, so 9007199254740993.0 stays 9007199254740993.
func wholeNumber(n json.Number) json.Number {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return n
	}
	neg := strings.HasPrefix(s, "-")
	mant, exp := strings.TrimPrefix(s, "-"), 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e, err := strconv.Atoi(mant[i+1:]) // "+5", "-5" and "5"
		if err != nil || e > 1<<20 || e < -(1<<20) {
			return n
		}
		mant, exp = mant[:i], e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "0" // also -0.0
	}
	if strings.Trim(digits, "0123456789") != "" {
		return n // not a JSON number after all
	}
	// The value is digits × 10^shift.
	switch shift := exp - len(frac); {
	case shift < 0:
		keep := len(digits) + shift
		if keep <= 0 || strings.TrimRight(digits[keep:], "0") != "" {
			return n // a fraction
		}
		digits = digits[:keep]
	case len(digits)+shift > maxWholeDigits:
		return n
	default:
		digits += strings.Repeat("0", shift)
	}
	if len(digits) > maxWholeDigits {
		return n
	}
	if neg {
		digits = "-" + digits
	}
	return json.Number(digits)
}
