package perf

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func compareTestdata(t *testing.T, alpha float64) *Comparison {
	t.Helper()
	c, err := CompareRuns(readTestdata(t, "perfstat-old.jsonl"), readTestdata(t, "perfstat-new.jsonl"), alpha)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompareRuns(t *testing.T) {
	c := compareTestdata(t, 0.05)
	if len(c.Records) != 2 {
		t.Fatalf("%d compare records", len(c.Records))
	}
	// native: new is 30µs slower on every sample, no overlap.
	n := c.Records[0]
	if n.Path != "native" || n.Query != "select1" || n.Phase != "warm" || n.Concurrency != 1 ||
		n.OldRunID != "20261129T000000Z-00000001" || n.NewRunID != "20261130T000000Z-00000002" ||
		n.OldP50NS != 109500 || n.NewP50NS != 139500 || math.Abs(n.ChangeRel-(139500.0/109500-1)) > 1e-12 ||
		!n.Significant || n.PValue >= 1e-6 || n.Alpha != 0.05 || n.RunID != "" {
		t.Errorf("native %+v", n)
	}
	// server: the two samples interleave; no evidence of a change.
	s := c.Records[1]
	if s.Path != "server" || s.OldP50NS != 319000 || s.NewP50NS != 320000 || s.Significant || s.PValue < 0.5 {
		t.Errorf("server %+v", s)
	}
	if c.OldN[0] != 20 || c.NewN[1] != 20 {
		t.Errorf("n %v %v", c.OldN, c.NewN)
	}
	want := "q06 server warm c=1: only in the new run|q06 native warm c=1: only in the old run"
	if strings.Join(c.Warnings, "|") != want {
		t.Errorf("warnings %q", c.Warnings)
	}

	// alpha 0 makes nothing significant.
	if c0 := compareTestdata(t, 0); c0.Records[0].Significant {
		t.Error("significant at alpha 0")
	}
	for _, a := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := CompareRuns(&Records{Run: &Run{}}, &Records{Run: &Run{}}, a); err == nil {
			t.Errorf("alpha %v accepted", a)
		}
	}
	if _, err := CompareRuns(&Records{}, &Records{Run: &Run{}}, 0.05); err == nil {
		t.Error("missing run record accepted")
	}
}

func TestCompareOutput(t *testing.T) {
	c := compareTestdata(t, 0.05)
	var j bytes.Buffer
	if err := c.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	back, err := ReadAll(bytes.NewReader(j.Bytes()), "compare")
	if err != nil || back.Run != nil || len(back.Compares) != 2 {
		t.Fatalf("read back: %v %+v", err, back)
	}
	var txt bytes.Buffer
	if err := c.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	golden(t, "perfstat-compare.txt", txt.Bytes())
}
