// Fuzzing: the validator never panics, its two walks agree, and what it accepts passes an independent re-check.

package safesql

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// FuzzValidate checks that Validate never panics, that the JSON walk
// (checkJSON, used by Validate) and the protobuf walk (checkProto) agree,
// and that every accepted statement, re-parsed and re-walked by recheck
// (a separate, simpler walk), contains only allowed node types and
// allowed functions.
func FuzzValidate(f *testing.F) {
	for _, e := range readCorpus(f) {
		// Huge seeds (the too-long and too-deep cases) only slow the
		// mutator down; the unit tests cover them.
		if len(e.SQL) <= 4096 {
			f.Add(e.SQL)
		}
	}
	v, err := New(Options{CacheSize: -1, AllowFunctions: []string{"myfn"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		kind, r := v.Check(sql)
		// The JSON walk and the protobuf walk must give the same verdict,
		// and for a refusal the same reason, construct and position.
		pk, pr := v.checkProto(sql)
		jk, jr := v.checkJSON(sql)
		if pk != jk || (pr == nil) != (jr == nil) || pr != nil && *pr != *jr {
			t.Fatalf("%q: protobuf walk %q %v, JSON walk %q %v", sql, pk, pr, jk, jr)
		}
		if r != nil {
			if r.Reason == "" || r.Position < -1 || r.Position >= len(sql) && len(sql) > 0 {
				t.Fatalf("bad refusal %+v for %q", r, sql)
			}
			return
		}
		if kind == "" {
			t.Fatalf("accepted %q without a kind", sql)
		}
		if bad := recheck(t, sql); bad != "" {
			t.Fatalf("accepted %q but it contains %s", sql, bad)
		}
	})
}

// recheck parses sql again and collects every message type name and
// every FuncCall name with a plain protobuf-reflection walk, then checks
// them against the allowlists. It returns what it found wrong, or "".
func recheck(t *testing.T, sql string) string {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatalf("accepted %q but it does not parse: %v", sql, err)
	}
	if len(tree.Stmts) != 1 {
		return "more than one statement"
	}
	var types []string
	var funcs [][]string
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		types = append(types, string(m.Descriptor().Name()))
		if fc, ok := m.Interface().(*pg_query.FuncCall); ok {
			var name []string
			for _, n := range fc.Funcname {
				name = append(name, n.GetString_().GetSval())
			}
			funcs = append(funcs, name)
		}
		m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < val.List().Len(); i++ {
					walk(val.List().Get(i).Message())
				}
			case fd.IsMap():
				types = append(types, "map field "+string(fd.Name()))
			case fd.Message() != nil:
				walk(val.Message())
			}
			return true
		})
	}
	walk(tree.Stmts[0].Stmt.ProtoReflect())
	for _, ty := range types {
		if !allowedNodes[ty] {
			return "node type " + ty
		}
	}
	for _, fn := range funcs {
		switch {
		case len(fn) == 1 && (builtinFunctions[fn[0]] || fn[0] == "myfn"):
		case len(fn) == 2 && fn[0] == "pg_catalog" && builtinFunctions[fn[1]]:
		default:
			return "function " + joinDots(fn)
		}
	}
	return ""
}

func joinDots(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}
