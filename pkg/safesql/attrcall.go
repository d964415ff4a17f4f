// Attribute notation: PostgreSQL reads x.f and (expr).f as the call f(x)
// when no column f exists, so a field name can be a function call.

package safesql

import (
	_ "embed"
	"strings"
)

//go:embed attrfuncs.txt
var attrFuncsText string

// attrFunctions are the pg_catalog functions callable with one argument,
// the ones attribute notation can reach.
var attrFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(attrFuncsText, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			m[line] = true
		}
	}
	return m
}()

// checkAttrCalls refuses a field name (after a dot, in a column reference
// or a field selection) that names a built-in one-argument function not on
// the allowlist: (1).pg_sleep and g.pg_sleep run pg_sleep.
func (v *Validator) checkAttrCalls(fields []string, pos int) *Refusal {
	for _, f := range fields {
		if f == "" || !attrFunctions[f] || v.builtin(f) || v.extraFuncs[f] || v.extraFuncs["pg_catalog."+f] {
			continue
		}
		return refuse(pos, "."+f, "field name "+f+" is the function "+f+
			", which PostgreSQL would call through attribute notation, and it is not allowed (not on the allowlist of side-effect-free functions)")
	}
	return nil
}
