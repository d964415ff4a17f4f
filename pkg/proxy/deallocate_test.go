package proxy

import "testing"

func TestDeallocateName(t *testing.T) {
	for _, c := range []struct {
		sql, name string
		ok        bool
	}{
		{"DEALLOCATE s1", "s1", true},
		{"  deallocate prepare S1 ; ", "s1", true},
		{`DEALLOCATE "My ""q"""`, `My "q"`, true},
		{`deallocate prepare "x"`, "x", true},
		{"DEALLOCATE prepare", "", false}, // left to the server
		{"DEALLOCATE ALL", "", false},
		{"DEALLOCATE PREPARE ALL", "", false},
		{"DEALLOCATE a; SELECT 1", "", false},
		{"DEALLOCATE a b", "", false},
		{"DEALLOCATE", "", false},
		{`DEALLOCATE ""`, "", false},
		{`DEALLOCATE "a`, "", false},
		{"DEALLOCATE 1a", "", false},
		{"SELECT 1", "", false},
		{"DEALLOCATEx a", "", false},
	} {
		name, ok := deallocateName(c.sql)
		if name != c.name || ok != c.ok {
			t.Errorf("deallocateName(%q) = %q, %v; want %q, %v", c.sql, name, ok, c.name, c.ok)
		}
	}
}

func TestDroppedStatements(t *testing.T) {
	for _, c := range []struct {
		sql        string
		purge, all bool
	}{
		{"DISCARD ALL", true, true},
		{"select 1; deallocate prepare all", true, true},
		{"DEALLOCATE ALL;", true, true},
		{"deallocate qpr_0123", true, false},
		{`deallocate "qpr_0123"`, true, false},
		{"deallocate mine", false, false},
		{"DISCARD PLANS", false, false},
		{"select 'discard all'", false, false},
		{"select 1 -- deallocate all", false, false},
		{"/* x */ DISCARD ALL", true, true},
	} {
		purge, all := droppedStatements(c.sql)
		if purge != c.purge || all != c.all {
			t.Errorf("droppedStatements(%q) = %v, %v; want %v, %v", c.sql, purge, all, c.purge, c.all)
		}
	}
}
