package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--paths", "native,bogus"}, `unknown path "bogus"`},
		{[]string{"--resume"}, "--resume needs --out FILE"},
		{[]string{"--iterations", "0"}, "--iterations must be at least 1"},
		{[]string{"--concurrency", "0"}, "--concurrency 0 is out of range"},
		{[]string{"--only", "nope"}, "--only nope: unknown query id"},
		{[]string{"--queries", "/nonexistent.jsonl"}, "/nonexistent.jsonl"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"--database-url", "postgres://127.0.0.1:1/x"}, c.args...)
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", c.args, code, errb.String(), exitUsage, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: wrote %q to stdout", c.args, out.String())
		}
	}
}

func TestHelpAndUnreachable(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "--sweep-duration") {
		t.Errorf("--help: exit %d: %s", code, out.String())
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"--database-url", "postgres://127.0.0.1:1/x?connect_timeout=2", "--paths", "native"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "connect") {
		t.Errorf("unreachable: exit %d: %s", code, errb.String())
	}
}
