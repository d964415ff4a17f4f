package pgwire

import (
	"maps"
	"testing"
)

func TestOptionSettings(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"":                                       nil,
		"-c statement_timeout=5s":                {"statement_timeout": "5s"},
		"-cDateStyle=ISO --search-path=a,b -x y": {"datestyle": "ISO", "search_path": "a,b"},
		`-c application_name=my\ app`:            {"application_name": "my app"},
		"-c":                                     {},
	} {
		if got := OptionSettings(in); !maps.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
}
