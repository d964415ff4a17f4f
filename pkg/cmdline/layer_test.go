package cmdline

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/alecthomas/kong"
)

type layered struct {
	Config kong.ConfigFlag `env:"CMDLINE_TEST_CONFIG"`
	A      int             `default:"1" env:"CMDLINE_TEST_A"`
	B      int             `default:"1" env:"CMDLINE_TEST_B"`
	C      int             `default:"1" env:"CMDLINE_TEST_C"`
	D      int             `default:"1" env:"CMDLINE_TEST_D"`
	E      int             `default:"1" env:"CMDLINE_TEST_E"`
}

// Command line > environment > config file > layer > defaults; a refused
// layer value matters only where nothing above sets the flag.
func TestLayerPrecedence(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("a = 3\nb = 3\nc = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CMDLINE_TEST_B", "2")
	args := []string{"--config", cfg, "--a", "4"}
	opt := kong.Configuration(TOMLResolver)
	var first layered
	kctx, _, _, err := Parse(&first, "demo", "", args, io.Discard, io.Discard, opt)
	if err != nil {
		t.Fatal(err)
	}
	if first.A != 4 || first.B != 2 || first.C != 3 {
		t.Fatalf("without the layer: %+v", first)
	}
	refused := errors.New("d refused")
	for _, c := range []struct {
		values map[string]string
		errs   map[string]error
		want   layered
		err    error
	}{
		{map[string]string{"a": "5", "b": "5", "c": "5", "d": "5"}, nil, layered{A: 4, B: 2, C: 3, D: 5, E: 1}, nil},
		{nil, map[string]error{"a": errors.New("a"), "b": errors.New("b"), "c": errors.New("c"), "d": refused}, layered{A: 4, B: 2, C: 3, D: 1, E: 1}, refused},
	} {
		var got layered
		layer := Beneath(kctx, c.values, c.errs)
		if _, _, _, err := Parse(&got, "demo", "", args, io.Discard, io.Discard, opt, kong.Resolvers(layer)); err != nil {
			t.Fatal(err)
		}
		got.Config = ""
		if got != c.want {
			t.Errorf("values %v errs %v: got %+v, want %+v", c.values, c.errs, got, c.want)
		}
		if err := layer.Err(); (err == nil) != (c.err == nil) || (err != nil && err.Error() != c.err.Error()) {
			t.Errorf("Err() = %v, want %v", err, c.err)
		}
	}
}
