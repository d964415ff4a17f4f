package main

// The npm PostgreSQL clients pg (with pg-cursor) and postgres (postgres.js)
// run testdata/npm/clients.js against PostgreSQL directly and through
// qprouter in both pool modes, with more clients at once than the proxy has
// servers; what they print must be the same. The npm packages are pinned in
// testdata/npm/package-lock.json and installed once per lockfile
// (pkg/npmtest); node and npm are required.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/npmtest"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// npmDB is the database the scripts create their tables in.
const npmDB = "npm_clients"

// npmScenarios are clients.js's scenarios: one per npm client, and large
// messages with both.
var npmScenarios = []string{"pg", "postgres", "large"}

// npmKnownBugs names the proxy bug that makes a scenario fail through
// qprouter; the scenario still runs directly but is skipped through the
// proxy until the bug is fixed.
var npmKnownBugs = map[string]string{}

func TestNpmClients(t *testing.T) {
	dir := npmtest.Dir(t, filepath.Join("testdata", "npm"))
	c := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"drop database if exists " + npmDB, "create database " + npmDB} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)

	want := map[string]string{}
	for _, s := range npmScenarios {
		want[s] = runClients(t, dir, s, c.DBURL(npmDB), 6)
	}
	// Session mode: the script's long-lived connection keeps one server,
	// its client pools (2 connections) two more; its 8 short-lived clients
	// queue for the two that are left. Transaction mode: 2 servers for up
	// to 6 pooled connections and 8 clients, once with room for every
	// prepared statement and once with 4 per server, so they are evicted
	// and parsed again all the time (all three on the event loop, the
	// default); with goroutines only; and with --cache-unnamed, its
	// unnamed statements kept prepared in the same 4 per server.
	for _, m := range []struct {
		name, mode string
		size, max  int
		args       []string
	}{
		{"session", "session", 3, 2, nil},
		{"transaction", "transaction", 2, 6, nil},
		{"transaction-lru4", "transaction", 2, 6, []string{"--prepared-per-server", "4"}},
		{"transaction-goroutines", "transaction", 2, 6, []string{"--no-event-loop"}},
		{"transaction-cache-unnamed-lru4", "transaction", 2, 6, []string{"--cache-unnamed", "--prepared-per-server", "4"}},
	} {
		t.Run(m.name, func(t *testing.T) {
			url, stop := startRouter(t, c.URL(), append([]string{"--pool-mode", m.mode, "--pool-size", strconv.Itoa(m.size)}, m.args...)...)
			defer stop()
			url = strings.Replace(url, "/postgres?", "/"+npmDB+"?", 1)
			for _, s := range npmScenarios {
				t.Run(s, func(t *testing.T) {
					if bug := npmKnownBugs[s]; bug != "" {
						t.Skip(bug)
					}
					compareSteps(t, want[s], runClients(t, dir, s, url, m.max))
				})
			}
		})
	}
}

// startRouter runs qprouter in the test process with args (and a 30 s
// acquire timeout) and returns a client URL for database postgres and a
// function that drains it, reporting its logs when it fails.
func startRouter(t *testing.T, serverURL string, args ...string) (string, func()) {
	t.Helper()
	return startRouterWith(t, append([]string{"--server-url", serverURL}, args...)...)
}

// startRouterWith is startRouter with the servers in args.
func startRouterWith(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	logs := &syncBuf{}
	args = append([]string{"--listen", "127.0.0.1:0", "--acquire-timeout", "30s", "--shutdown-timeout", "5s"}, args...)
	go func() { codec <- run(ctx, args, logs, logs, nil, func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		cancel()
		t.Fatalf("qprouter %v exited %d: %s", args, code, logs.String())
	}
	stop := func() {
		cancel()
		if code := <-codec; code != exitOK || t.Failed() {
			t.Logf("qprouter %v exited %d; its log:\n%s", args, code, logs.String())
		}
	}
	return "postgres://postgres@" + addr + "/postgres?sslmode=disable", stop
}

// runClients runs one scenario of clients.js against url, its client
// pools opening at most max connections, and returns its JSON output.
func runClients(t *testing.T, dir, scenario, url string, max int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "clients.js"), scenario)
	cmd.Env = append(os.Environ(), "TZ=UTC", "NPM_PG_URL="+url, "NPM_PG_MAX="+strconv.Itoa(max))
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node clients.js %s against %s: %v\nstderr: %s\nstdout: %s", scenario, url, err, stderr.String(), out)
	}
	t.Logf("clients.js %s: %s", scenario, time.Since(start).Round(time.Millisecond))
	return string(out)
}

// compareSteps fails t with every step (a line of clients.js's output)
// that differs between want and got.
func compareSteps(t *testing.T, want, got string) {
	t.Helper()
	for _, d := range diffSteps(want, got) {
		t.Error(d)
	}
}

// diffSteps describes the steps that differ between two outputs of
// clients.js, or returns nil when they are the same.
func diffSteps(want, got string) []string {
	if want == got {
		return nil
	}
	steps := func(s string) (names []string, byName map[string]string) {
		byName = map[string]string{}
		for _, line := range strings.Split(s, "\n") {
			name, _, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			names = append(names, name)
			byName[name] = strings.TrimSuffix(line, ",")
		}
		return names, byName
	}
	wantNames, wantSteps := steps(want)
	gotNames, gotSteps := steps(got)
	var diffs []string
	if strings.Join(wantNames, " ") != strings.Join(gotNames, " ") {
		diffs = append(diffs, fmt.Sprintf("steps differ:\ndirect:   %v\nqprouter: %v", wantNames, gotNames))
	}
	for _, name := range wantNames {
		if w, g := wantSteps[name], gotSteps[name]; w != g && g != "" {
			diffs = append(diffs, fmt.Sprintf("step %s differs:\ndirect:   %s\nqprouter: %s", name, w, g))
		}
	}
	if diffs == nil {
		diffs = append(diffs, fmt.Sprintf("outputs differ:\ndirect:\n%s\nqprouter:\n%s", want, got))
	}
	return diffs
}

func TestDiffSteps(t *testing.T) {
	a := "{\n\"x\": 1,\n\"y\": [2]\n}\n"
	if d := diffSteps(a, a); d != nil {
		t.Errorf("same: %v", d)
	}
	d := diffSteps(a, strings.Replace(a, "[2]", "[3]", 1))
	if len(d) != 1 || !strings.Contains(d[0], `step "y" differs`) || !strings.Contains(d[0], "[3]") {
		t.Errorf("changed step: %q", d)
	}
	d = diffSteps(a, "{\n\"x\": 1\n}\n")
	if len(d) != 1 || !strings.Contains(d[0], "steps differ") {
		t.Errorf("missing step: %q", d)
	}
	if d := diffSteps(a, a+" "); len(d) != 1 || !strings.Contains(d[0], "outputs differ") {
		t.Errorf("other difference: %q", d)
	}
}
