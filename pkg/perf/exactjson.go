// Field names matched exactly: encoding/json matches keys regardless of
// case, so an unknown field "DUR_NS" would overwrite dur_ns. Its matching
// is Unicode case folding (bytes.EqualFold), in which "ſ" (U+017F) is "s"
// and the Kelvin sign "k", so keys are compared folded the same way.

package perf

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
)

// exactKeys returns raw without the object keys that only a
// case-insensitive match would give to a field of t (at any depth), so
// that they are ignored as unknown fields; changed is false (and raw
// returned as is) when there are none.
func exactKeys(raw json.RawMessage, t reflect.Type) (out json.RawMessage, changed bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]():
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return raw, false // not an object: Unmarshal reports it
		}
		return exactObject(raw, m, t)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return raw, false
		}
		for i, v := range items {
			if nv, ch := exactKeys(v, t.Elem()); ch {
				items[i], changed = nv, true
			}
		}
		if changed {
			if b, err := json.Marshal(items); err == nil {
				return b, true
			}
		}
	}
	return raw, false
}

// exactObject is exactKeys for an object already parsed into m.
func exactObject(raw json.RawMessage, m map[string]json.RawMessage, t reflect.Type) (out json.RawMessage, changed bool) {
	fields := jsonFields(t)
	for k, v := range m {
		if ft, ok := fields.exact[k]; ok {
			if !fields.nested[k] {
				continue
			}
			if nv, ch := exactKeys(v, ft); ch {
				m[k], changed = nv, true
			}
		} else if fields.folded[foldName(k)] {
			delete(m, k)
			changed = true
		}
	}
	if changed {
		if b, err := json.Marshal(m); err == nil {
			return b, true
		}
	}
	return raw, false
}

type fieldSet struct {
	exact  map[string]reflect.Type // JSON name: the field's type
	folded map[string]bool         // names as foldName gives them
	nested map[string]bool         // fields that hold objects (structs, slices of them)
}

var fieldSets sync.Map // reflect.Type: fieldSet

// jsonFields lists the JSON names of t's fields as encoding/json sees
// them (embedded structs' fields promoted).
func jsonFields(t reflect.Type) fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{exact: map[string]reflect.Type{}, folded: map[string]bool{}, nested: map[string]bool{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				add(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fs.exact[name] = f.Type
			fs.folded[foldName(name)] = true
			e := f.Type
			for e.Kind() == reflect.Pointer || e.Kind() == reflect.Slice || e.Kind() == reflect.Array {
				e = e.Elem()
			}
			fs.nested[name] = e.Kind() == reflect.Struct && e != reflect.TypeFor[time.Time]()
		}
	}
	add(t)
	fieldSets.Store(t, fs)
	return fs
}

// foldName maps names that encoding/json would match to one another
// (bytes.EqualFold) to the same string: each rune becomes the smallest
// rune of its simple case-folding orbit, as in encoding/json's fold.go.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		for {
			f := unicode.SimpleFold(r)
			if f <= r {
				return f
			}
			r = f
		}
	}, s)
}
