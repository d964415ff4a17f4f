package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestWholeNumber: a JSON number with a fraction or an exponent whose value
// is whole becomes its exact integer digits; anything else stays as written.
func TestWholeNumber(t *testing.T) {
	for in, want := range map[string]string{
		"5": "5", "-7": "-7", "5.0": "5", "5e0": "5", "0.5e1": "5", "-5.00": "-5", "1.5e3": "1500",
		"1E+2": "100", "0.05e2": "5", "50e-1": "5", "100e-2": "1", "-0.0": "0", "0e5": "0",
		"9007199254740993.0":          "9007199254740993",
		"12345678901234567890123.000": "12345678901234567890123",
		"1e39":                        "1000000000000000000000000000000000000000",
		// not whole, or too long: as written
		"5.5": "5.5", "55e-1": "55e-1", "100e-3": "100e-3", "1e-2": "1e-2", "0.1": "0.1",
		"1e40": "1e40", "1e99999999999999999999": "1e99999999999999999999", "1e-1000000000": "1e-1000000000",
	} {
		if got := wholeNumber(json.Number(in)); string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	params := []any{json.Number("5.0"), "x", json.Number("2")}
	got := wholeParams(params)
	if got[0] != json.Number("5") || got[1] != "x" || got[2] != json.Number("2") || params[0] != json.Number("5.0") {
		t.Errorf("wholeParams: %v (params now %v)", got, params)
	}
	if same := []any{json.Number("2")}; &wholeParams(same)[0] != &same[0] {
		t.Error("wholeParams copied params without a number to rewrite")
	}
}
